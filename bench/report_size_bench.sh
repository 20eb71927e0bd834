#!/usr/bin/env bash
# What simulate's reports cost on a long schedule (docs/bench.md, "Reports sized by the question"):
# bytes, wall time and peak RSS of whole `ppsched simulate` processes on 1F1B, 64 ranks x 16,384
# microbatches (6.2M actions), for the default JSON document, the same with the per-action views
# asked for, and the text report. Not a Google Benchmark binary: it times whole processes.
#   bench/report_size_bench.sh [PPSCHED]     REPEATS (default 5) runs per row, the median reported
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/app/ppsched}
repeats=${REPEATS:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load $(cut -d' ' -f1 /proc/loadavg)"
echo
echo "| report | bytes | wall s (median of $repeats) | peak RSS MB |"
echo "|---|--:|--:|--:|"
schedule=(--schedule 1F1B --ranks 64 --microbatches 16384)
row() {
  local name=$1
  shift
  : >"$tmp/times"
  : >"$tmp/rss"
  for _ in $(seq "$repeats"); do
    /usr/bin/time -f "%e %M" -o "$tmp/t" "$bin" simulate "${schedule[@]}" "$@" -o "$tmp/out"
    read -r wall rss <"$tmp/t"
    echo "$wall" >>"$tmp/times"
    echo "$rss" >>"$tmp/rss"
  done
  printf '| %s | %s | %s | %s |\n' "$name" "$(stat -c %s "$tmp/out")" "$(median <"$tmp/times")" \
    "$(($(median <"$tmp/rss") / 1024))"
}
row "JSON, default views (summary, bubbles, memory)" --format json
row "JSON, every view (+ critical-path, memory-timeline)" --format json \
  --views summary,bubbles,memory,critical-path,memory-timeline
row "text, default views" --format text
