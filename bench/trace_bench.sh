#!/usr/bin/env bash
# ppsched trace against Python's json.load on the same traces (issue 47's targets: at least 5x
# faster, peak memory under 2x the largest single trace). Writes RANKS traces of about 52 MB each
# (tests/trace/gen_kineto_trace.py, 1F1B with 64 microbatches, 300 filler kernels per action),
# then times, best of REPEATS: ppsched trace (wall, peak RSS) and json.load of each file in turn.
#   bench/trace_bench.sh [RANKS] [REPEATS]      (build/app/ppsched; PPSCHED=... for another)
set -euo pipefail
cd "$(dirname "$0")/.."
ranks=${1:-8}
repeats=${2:-3}
bin=${PPSCHED:-build/app/ppsched}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python3 tests/trace/gen_kineto_trace.py --synth-1f1b "$ranks",64 --filler 300 --lower --steps 1 --jobs 2 \
  --out "$dir" >/dev/null 2>&1
largest=$(stat -c %s "$dir"/rank*_trace.json | sort -n | tail -1)
total=$(cat "$dir"/rank*_trace.json | wc -c)
best() { sort -n | head -1; }
ours=$(for _ in $(seq "$repeats"); do
  /usr/bin/time -f "%e %M" "$bin" trace "$dir"/rank*_trace.json --format json -o /dev/null 2>&1 | tail -1
done | sort -n | head -1)
wall=${ours% *}
rss_kb=${ours#* }
python=$(for _ in $(seq "$repeats"); do
  /usr/bin/time -f "%e" python3 -c 'import json, sys
for f in sys.argv[1:]:
    with open(f) as h: json.load(h)' "$dir"/rank*_trace.json 2>&1 | tail -1
done | best)
awk -v r="$ranks" -v t="$total" -v l="$largest" -v w="$wall" -v m="$rss_kb" -v p="$python" 'BEGIN {
  printf "traces: %d ranks, %.1f MB in all, the largest %.1f MB\n", r, t / 1e6, l / 1e6
  printf "ppsched trace: %.2f s (%.0f MB/s), peak RSS %.1f MB = %.2f x the largest trace\n", w, t / 1e6 / w, m / 1024, m * 1024 / l
  printf "python json.load: %.2f s (%.0f MB/s)\n", p, t / 1e6 / p
  printf "ppsched is %.1f x faster\n", p / w
}'
