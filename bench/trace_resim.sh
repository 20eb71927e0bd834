#!/usr/bin/env bash
# How close `ppsched trace`'s re-simulation comes to the measured time (docs/bench.md, "Profiler
# traces"): each family on 4 ranks x 8 microbatches, traced by tests/trace/gen_kineto_trace.py (its
# own event model, 5% jitter, three steps, clock offsets) with an NCCL stream per rank pair and with
# one per rank, re-simulated in the queues the streams show (the default) and, for contrast, in the
# other model. Prints a Markdown table. About 10 s.
#   bench/trace_resim.sh [PPSCHED]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/app/ppsched}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "| family | NCCL streams | measured (ms) | re-simulated, queues as measured | in the other queue model |"
echo "|---|---|--:|--:|--:|"
for spec in 1F1B:1 GPipe:1 ZBH1:1 Interleaved1F1B:2 LoopedBFS:2 InterleavedZeroBubble:2 ZBVZeroBubble:2 DualPipeV:2; do
  family=${spec%:*} v=${spec#*:}
  "$bin" compile --schedule "$family" --ranks 4 --microbatches 8 --stages-per-rank "$v" -o "$tmp/s.csv" 2>/dev/null
  sed -i 's/,[^,]*REDUCE_GRAD[^,]*//g; s/^[^,]*REDUCE_GRAD[^,]*,//' "$tmp/s.csv"  # the generator lowers it again
  for streams in per-pair per-rank; do
    other=per-rank
    [ "$streams" = per-rank ] && other=per-pair
    rm -rf "$tmp/t"
    python3 tests/trace/gen_kineto_trace.py --schedule "$tmp/s.csv" --lower --steps 3 --jitter 0.05 --seed 7 \
      --clock-offset-us 1:1500,2:-800,3:12345 --gzip-ranks 2 --p2p-streams "$streams" --out "$tmp/t" \
      --costs '{"F": 1000, "I": 1100, "W": 900, "B": 2000}' >/dev/null  2>&1
    "$bin" trace "$tmp"/t/rank*_trace.json* --format json >"$tmp/a.json"
    "$bin" trace "$tmp"/t/rank*_trace.json* --format json --p2p-queues "$other" >"$tmp/b.json"
    python3 - "$family" "$streams" "$tmp/a.json" "$tmp/b.json" <<'PY'
import json, sys
family, streams, a, b = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3])), json.load(open(sys.argv[4]))
m = a["measured_iteration_us"]
err = lambda j: 100 * (j["simulated_iteration_us"] / m - 1)
print(f"| {family} | {streams} | {m / 1e3:.2f} | {a['p2p_queues']['queues']}: {err(a):+.2f}% "
      f"| {b['p2p_queues']['queues']}: {err(b):+.2f}% |")
PY
  done
done
