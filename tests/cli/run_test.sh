#!/usr/bin/env bash
# `ppsched run` end to end without a GPU: the fake backend closes the loop through the real
# binary (run -> --cost-out -> simulate --costs predicts the measured median within 5%), a
# schedule that fails validation is refused, a missing CUDA backend exits 77, and Ctrl-C stops
# at an iteration boundary with exit 130 and the partial table.
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() {  # check NAME CONDITION...
  local name=$1
  shift
  if "$@"; then echo "ok: $name"; else echo "FAILED: $name"; fail=1; fi
}

# 1. The loop, for the three schedules the issue names, each with a 4-rank, 8-microbatch pipeline.
for sched in 1F1B ZBH1 ZBVZeroBubble; do
  "$bin" run --schedule $sched --ranks 4 --microbatches 8 --backend fake --workload synthetic \
    --cost F=100,I=120,W=80 --fake-jitter 0.05 -w 2 -n 30 --cost-out "$tmp/$sched.csv" --trace "$tmp/$sched.json" \
    >"$tmp/$sched.txt" 2>"$tmp/$sched.err"
  check "$sched: run exits 0" test $? -eq 0
  measured=$(awk -v s=$sched '$1 == s {print $6}' "$tmp/$sched.txt")
  predicted=$("$bin" simulate --schedule $sched --ranks 4 --microbatches 8 --lower send-recv \
    --costs "$tmp/$sched.csv" | awk '/^makespan/ {print $2}')
  check "$sched: simulate --costs (the measured table) predicts $predicted us, measured $measured us: within 5%" \
    awk -v m="$measured" -v p="$predicted" 'BEGIN { r = p / m; exit !(m > 0 && r > 0.95 && r < 1.05) }'
  check "$sched: the cost table has a row per stage and kind" grep -q '^3,F,' "$tmp/$sched.csv"
  check "$sched: the trace is a Chrome trace" grep -q '"traceEvents"' "$tmp/$sched.json"
done

# 2. --min-ratio/--max-ratio gate the fidelity: measured/simulated is about 1 here.
"$bin" run --schedule 1F1B --ranks 2 --microbatches 4 --backend fake --workload synthetic -n 10 -w 1 \
  --max-ratio 0.5 >/dev/null 2>"$tmp/gate.err"
check "a ratio above --max-ratio exits 1" test $? -eq 1
check "and says why" grep -q "outside \[0, 0.5\]" "$tmp/gate.err"

# 3. A schedule that fails validation never reaches a device.
"$bin" run tests/conformance/pytorch/negative/1f1b_r2_s1_m3.runtime_order.w_before_i.compute_only.csv \
  --microbatches 3 --backend fake >/dev/null 2>"$tmp/invalid.err"
check "an invalid schedule exits 1" test $? -eq 1
check "with the validator's finding" grep -q "weight-before-input-grad" "$tmp/invalid.err"

# 4. No CUDA backend: exit 77 (ctest's skip code) and say which of the reasons it is.
PPSCHED_CUDA_MODULE=/nonexistent/libppsched_cuda.so "$bin" run --schedule 1F1B --ranks 2 --microbatches 2 \
  >/dev/null 2>"$tmp/nogpu.err"
check "no CUDA backend exits 77" test $? -eq 77
check "and names the reason" grep -qE "no usable GPU \((built without CUDA|no GPU driver|no GPU device)\)" "$tmp/nogpu.err"

# 5. Ctrl-C: stops at an iteration boundary, prints what it measured, exits 130. Job control on,
# so that the background job does not start with SIGINT ignored (ppsched keeps an inherited SIG_IGN).
set -m
"$bin" run --schedule 1F1B --ranks 4 --microbatches 64 --backend fake --workload synthetic --min-samples 100000000 \
  --timeout 1000 >"$tmp/int.txt" 2>&1 &
pid=$!
sleep 1
kill -INT $pid
wait $pid
check "SIGINT exits 130" test $? -eq 130
check "after printing the partial table" grep -q "interrupted" "$tmp/int.txt"
exit $fail
