#!/usr/bin/env bash
# The host side of a multi-process `ppsched run` on the fake backend (docs/bench.md, "Multi-process
# run"): per-launch host time (enqueue, less waits on other processes) next to the single-process
# figure, and start-up (joining the launcher's job, discovery, the communicator, the ping-pong).
# Not a Google Benchmark binary: it times whole processes under mpirun.
#   bench/multi_process_bench.sh [PPSCHED] [MPIRUN]   (defaults: build/app/ppsched, mpirun)
# Prints a Markdown table; REPEATS (default 5) launches per row, the median reported.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/app/ppsched}
mpirun=${2:-mpirun}
repeats=${REPEATS:-5}
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load $(cut -d' ' -f1 /proc/loadavg)"
echo
echo "| processes | bytes per transfer | host us per launch | start-up s | wall s (whole launch) |"
echo "|--:|--:|--:|--:|--:|"
for np in 1 2 4; do
  for bytes in 64 65536; do
    hosts=() starts=() walls=()
    for _ in $(seq "$repeats"); do
      args=(run --schedule 1F1B --ranks "$np" --microbatches 32 --backend fake --workload synthetic -w 5 -n 500
        --activation-bytes "$bytes" --format json -o "$tmp/r.json")
      began=$EPOCHREALTIME
      if [ "$np" -eq 1 ]; then
        "$bin" "${args[@]}"
      else
        "$mpirun" --oversubscribe -np "$np" "$bin" "${args[@]}"
      fi
      walls+=("$(awk -v a="$began" -v b="$EPOCHREALTIME" 'BEGIN {print b - a}')")
      hosts+=("$(field "$tmp/r.json" 'd["results"][0]["host_us_per_launch"]')")
      starts+=("$(field "$tmp/r.json" 'd.get("multi_process", {}).get("startup_s", "-")')")
    done
    start=$(printf '%s\n' "${starts[@]}" | median)
    [ "$start" = - ] || start=$(printf '%.2f' "$start")
    printf '| %s | %s | %.2f | %s | %.2f |\n' "$np" "$bytes" "$(printf '%s\n' "${hosts[@]}" | median)" \
      "$start" "$(printf '%s\n' "${walls[@]}" | median)"
  done
done
