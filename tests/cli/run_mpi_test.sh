#!/usr/bin/env bash
# `ppsched run` as several processes under Open MPI's mpirun, with the fake backend: the same
# multi-process engine a GPU cluster runs, end to end on one machine.
#   run_mpi_test.sh PPSCHED MPIRUN
# 1. 1F1B, ZBV and DualPipeV over 4 processes time exactly what one process running every rank
#    times (the fake device's jitter is drawn per launch of the whole plan); only process 0
#    prints; every process discovered and opened its device once; the trace, the cost table and
#    the measured topology are written, and simulate reads the topology back.
# 2. --rank-map leaves processes idle and says so per process.
# 3. Refusals before any device work, on every process: different commands or another build of
#    ppsched (exit 2, process 0 names the others), a process count that is not the rank count (exit 2), a schedule the
#    validator finds deadlocking (exit 1, the cycle printed once); no usable GPU (exit 77).
# 4. A process that hangs (SIGSTOP) or dies (SIGKILL) mid-run: every process exits non-zero
#    within the deadline (--timeout).
# 5. The README's fake-backend mpirun example, as written there, finishes in seconds.
# 6. SIGTERM or SIGINT to process 2: every process stops at once with 143 or 130, the report
#    says interrupted and names the process.
set -u
bin=$(realpath "$1")
mpirun=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Open MPI's shared-memory transport is enough on one machine; no network probing.
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
fail=0
check() {  # check NAME CONDITION...
  local name=$1
  shift
  if "$@"; then echo "ok: $name"; else echo "FAILED: $name"; fail=1; fi
}
# Each process's exit code, one line "process code" per process, in $tmp/exits.
cat >"$tmp/wrap.sh" <<'EOF'
#!/usr/bin/env bash
"$@"
code=$?
echo "$OMPI_COMM_WORLD_RANK $code" >>"$EXITS"
exit $code
EOF
chmod +x "$tmp/wrap.sh"
mpi() {  # mpi NP ARGS... : runs ppsched ARGS on NP processes; exit codes in $tmp/exits
  local np=$1
  shift
  rm -f "$tmp/exits"
  EXITS=$tmp/exits "$mpirun" --oversubscribe -np "$np" -x EXITS "$tmp/wrap.sh" "$bin" "$@"
}
all_exit() {  # all_exit CODE NP: every one of NP processes exited CODE
  [ "$(awk -v c="$1" '$2 == c' "$tmp/exits" 2>/dev/null | wc -l)" -eq "$2" ]
}
rank_pid() {  # rank_pid RANK PATTERN: the pid of that rank's ppsched process among those matching, within 10 s
  local pid
  for _ in $(seq 100); do
    for pid in $(pgrep -f "$2"); do
      if tr '\0' '\n' </proc/$pid/environ 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1" && [ "$(cat /proc/$pid/comm)" = ppsched ]; then
        echo "$pid"
        return
      fi
    done
    sleep 0.1
  done
}
json() {  # json FILE EXPR: a Python expression over the parsed document d
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"
}

common=(--ranks 4 --microbatches 8 --backend fake --workload synthetic --cost F=100,I=120,W=80
  --fake-jitter 0.05 -w 2 -n 20 --activation-bytes 65536 --format json)
# 1. Four processes against one.
for sched in 1F1B ZBVZeroBubble DualPipeV; do
  mpi 4 run --schedule $sched "${common[@]}" --trace "$tmp/$sched.trace.json" --cost-out "$tmp/$sched.csv" \
    --topology-out "$tmp/$sched.topology.json" >"$tmp/$sched.mpi.json" 2>"$tmp/$sched.mpi.err"
  check "$sched: 4 processes exit 0" all_exit 0 4
  "$bin" run --schedule $sched "${common[@]}" >"$tmp/$sched.one.json" 2>"$tmp/$sched.one.err"
  check "$sched: one process exits 0" test $? -eq 0
  many=$(json "$tmp/$sched.mpi.json" 'd["results"][0]["times_us"]')
  one=$(json "$tmp/$sched.one.json" 'd["results"][0]["times_us"]')
  check "$sched: every iteration's time equals the single-process run's" test "$many" = "$one"
  check "$sched: the simulated time too" test "$(json "$tmp/$sched.mpi.json" 'd["results"][0]["simulated_us"]')" = \
    "$(json "$tmp/$sched.one.json" 'd["results"][0]["simulated_us"]')"
  check "$sched: only process 0 printed (one JSON document, nothing on stderr)" \
    test "$(grep -c '"schema_version"' "$tmp/$sched.mpi.json")" -eq 1 -a ! -s "$tmp/$sched.mpi.err"
  check "$sched: a row per process, each discovered and opened its device exactly once" test \
    "$(json "$tmp/$sched.mpi.json" '[(p["process"], p["rank"], p["discoveries"], p["opens"]) for p in d["multi_process"]["processes"]]')" \
    = "[(0, 0, 1, 1), (1, 1, 1, 1), (2, 2, 1, 1), (3, 3, 1, 1)]"
  check "$sched: the launcher is Open MPI" grep -q '"launcher": "Open MPI' "$tmp/$sched.mpi.json"
  check "$sched: the trace has a process per rank" \
    test "$(json "$tmp/$sched.trace.json" 'len({e["pid"] for e in d["traceEvents"] if e.get("ph") == "X"})')" -eq 4
  check "$sched: the cost table has stage 3's forward" grep -q '^3,F,' "$tmp/$sched.csv"
  "$bin" simulate --schedule $sched --ranks 4 --microbatches 8 --topology "$tmp/$sched.topology.json" >/dev/null
  check "$sched: simulate reads the measured topology" test $? -eq 0
done

# 2. Two ranks on processes 0 and 3 of four.
mpi 4 run --schedule 1F1B --ranks 2 --microbatches 4 --backend fake --workload synthetic -w 1 -n 5 \
  --rank-map 0,3 >"$tmp/map.txt" 2>"$tmp/map.err"
check "--rank-map: 4 processes exit 0" all_exit 0 4
check "--rank-map: process 3 ran rank 1" grep -q "^# process 3: rank 1," "$tmp/map.txt"
check "--rank-map: process 1 ran nothing" grep -q "^# process 1: no rank," "$tmp/map.txt"

# 3. Refusals, before any device work, on every process. mpirun would kill the others as soon as
# the first exits non-zero; here each must be seen to exit by itself.
export OMPI_MCA_orte_abort_on_non_zero_status=0
rm -f "$tmp/exits"
EXITS=$tmp/exits "$mpirun" --oversubscribe -x EXITS \
  -np 2 "$tmp/wrap.sh" "$bin" run --schedule 1F1B --ranks 4 --microbatches 8 --backend fake : \
  -np 2 "$tmp/wrap.sh" "$bin" run --schedule ZBH1 --ranks 4 --microbatches 8 --backend fake \
  >"$tmp/mismatch.out" 2>"$tmp/mismatch.err"
check "different commands: every process exits 2" all_exit 2 4
check "and process 0 names the others" grep -q "processes 2, 3 run other schedules" "$tmp/mismatch.err"
check "and says it once" test "$(grep -c 'ppsched: error' "$tmp/mismatch.err")" -eq 1

# Another build of the same version: the same command, one byte of the binary apart.
mkdir "$tmp/other"
cp "$bin" "$(dirname "$bin")"/libppsched_*.so "$tmp/other/"
printf x >>"$tmp/other/ppsched"
rm -f "$tmp/exits"
EXITS=$tmp/exits "$mpirun" --oversubscribe -x EXITS \
  -np 1 "$tmp/wrap.sh" "$bin" run --schedule 1F1B --ranks 2 --microbatches 4 --backend fake : \
  -np 1 "$tmp/wrap.sh" "$tmp/other/ppsched" run --schedule 1F1B --ranks 2 --microbatches 4 --backend fake \
  >/dev/null 2>"$tmp/build.err"
check "another build of ppsched: every process exits 2" all_exit 2 2
check "and process 0 names it" grep -q "process 1 runs other schedules, options or another ppsched" "$tmp/build.err"

mpi 3 run --schedule 1F1B --ranks 4 --microbatches 8 --backend fake >/dev/null 2>"$tmp/count.err"
check "3 processes for 4 ranks: every process exits 2" all_exit 2 3
check "with the reason, once" test "$(grep -c "4 ranks but the launcher started 3 processes" "$tmp/count.err")" -eq 1

mpi 2 run tests/conformance/pytorch/negative/1f1b_r2_s1_m4.runtime_order.recv_before_send_deadlock.send_recv.csv \
  --microbatches 4 --backend fake >/dev/null 2>"$tmp/deadlock.err"
check "a deadlocking schedule: every process exits 1" all_exit 1 2
check "with the validator's cycle, once" test "$(grep -c "refusing to run" "$tmp/deadlock.err")" -eq 1
check "naming the deadlock" grep -q "deadlock" "$tmp/deadlock.err"

PPSCHED_CUDA_MODULE=/nonexistent/libppsched_cuda.so mpi 2 run --schedule 1F1B --ranks 2 --microbatches 4 \
  >/dev/null 2>"$tmp/nogpu.err"
check "no usable GPU: every process exits 77" all_exit 77 2
check "with the reason once, and the way out" test "$(grep -c "no usable GPU.*--backend fake" "$tmp/nogpu.err")" -eq 1
unset OMPI_MCA_orte_abort_on_non_zero_status

# 4. A process that hangs or dies mid-run: all exit non-zero within the deadline.
for how in STOP KILL; do
  rm -f "$tmp/exits"
  began=$(date +%s)
  EXITS=$tmp/exits "$mpirun" --oversubscribe -np 4 -x EXITS "$tmp/wrap.sh" "$bin" run --schedule 1F1B --ranks 4 \
    --microbatches 8 --backend fake --workload synthetic -w 1 -n 100000000 --timeout 5 \
    >"$tmp/fault.out" 2>"$tmp/fault.err" &
  launcher=$!
  victim=$(rank_pid 2 "$bin run --schedule 1F1B --ranks 4 --microbatches 8 --backend fake --workload synthetic -w 1 -n 100000000")
  # Well inside the timed iterations: before them the processes agree on their binary by hashing
  # it, which for the 200 MB sanitizer build takes over a second, and a signal that lands there
  # ends the job before any process can say why.
  sleep 3
  kill -$how "$victim" 2>/dev/null
  wait $launcher
  code=$?
  took=$(($(date +%s) - began))
  check "SIG$how one process: the job exits non-zero ($code)" test $code -ne 0
  check "SIG$how one process: within the deadline (${took} s)" test $took -lt 25
  check "SIG$how one process: no process exited 0" test "$(awk '$2 == 0' "$tmp/exits" 2>/dev/null | wc -l)" -eq 0
  [ "$how" = STOP ] && check "SIGSTOP: a process says it ends the run, and why" grep -q "ending the run" "$tmp/fault.err"
done

# 5. The README's dry run, as written there (with the binary under test, and oversubscribed for a
# machine with fewer than 4 cores): a few seconds, the synthetic workload, 20 iterations.
readme_line=$(grep -o 'mpirun -np 4 build/app/ppsched run [^#]*--backend fake[^#]*' README.md | head -1)
check "the README has the fake-backend mpirun example" test -n "$readme_line"
read -r -a readme_args <<<"${readme_line#mpirun -np 4 build/app/ppsched }"
began=$(date +%s)
OMPI_MCA_rmaps_base_oversubscribe=1 timeout 60 "$mpirun" -np 4 "$bin" "${readme_args[@]}" >"$tmp/readme.out" 2>"$tmp/readme.err"
code=$?
took=$(($(date +%s) - began))
check "README example: exit 0 ($code)" test "$code" -eq 0
check "README example: a few seconds (${took} s)" test "$took" -lt 20
check "README example: reads as the synthetic workload" grep -q "^# workload synthetic" "$tmp/readme.out"
check "README example: stops after its iterations, not at the timeout" grep -qE " 1F1B .* iterations$" "$tmp/readme.out"

# 6. SIGTERM or SIGINT to a process other than process 0: every process stops at the same
# iteration, the job and process 0 exit 143 or 130 and no process exits 0, process 0 reports the run as interrupted and names the
# process, well before --timeout (the job used to run on to it and exit 0, "complete").
for sig in TERM INT; do
  rm -f "$tmp/exits"
  began=$(date +%s)
  EXITS=$tmp/exits "$mpirun" --oversubscribe -np 4 -x EXITS "$tmp/wrap.sh" "$bin" run --schedule 1F1B --ranks 4 \
    --microbatches 8 --backend fake --workload synthetic --activation-bytes 4096 -w 1 -n 100000000 --timeout 120 \
    >"$tmp/sig.out" 2>"$tmp/sig.err" &
  launcher=$!
  victim=$(rank_pid 2 "$bin run --schedule 1F1B --ranks 4 --microbatches 8 --backend fake --workload synthetic --activation-bytes 4096")
  sleep 3  # inside the timed iterations, as in 4.
  kill -$sig "$victim" 2>/dev/null
  wait $launcher
  code=$?
  took=$(($(date +%s) - began))
  want=$([ "$sig" = TERM ] && echo 143 || echo 130)
  # mpirun ends the others once one exits non-zero, so not every process gets to write down its
  # code (process 0 neither, at times): the job's code, and that none wrote 0.
  check "SIG$sig to process 2: the job exits $want ($code)" test "$code" -eq "$want"
  check "SIG$sig to process 2: no process exited 0" test "$(awk '$2 == 0' "$tmp/exits" 2>/dev/null | wc -l)" -eq 0
  check "SIG$sig to process 2: promptly (${took} s, --timeout 120)" test $took -lt 60
  check "SIG$sig to process 2: the report says interrupted" grep -q " interrupted$" "$tmp/sig.out"
  check "SIG$sig to process 2: process 0 names it" grep -q "process 2 got SIG$sig" "$tmp/sig.err"
done
exit $fail
