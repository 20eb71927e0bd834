#!/usr/bin/env bash
# Issue 48's targets, measured against the speed of reading the file: on 1F1B, 64 ranks x 16,384
# microbatches lowered with send/recv (6.2M actions, about 72 MB), `wc -l FILE` and each of
# validate, the lock-step dry run (CSV and text step grid), simulate's summary and the lowering
# itself, REPEATS times each in one run. Prints the median wall time, its ratio to `wc -l`'s, and
# peak RSS above the process baseline (validate of a 2-rank file) per action. Targets: each
# within 15x of `wc -l`, at most 16 bytes per action (the text step grid 24). Each run writes a new
# output file: the one the previous repeat left is removed first, outside the timing (replacing a
# 70 MB file makes the kernel drop the old one's page cache, about 50 ms on this VM, which a first
# run does not pay; REPLACE=1 keeps the old file to measure that too).
#   bench/validate_speed.sh [PPSCHED]     REPEATS (default 5); RANKS, MICROBATCHES for another size
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/app/ppsched}
repeats=${REPEATS:-5}
ranks=${RANKS:-64}
microbatches=${MICROBATCHES:-16384}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
file=$tmp/1f1b.csv
lower=(compile --schedule 1F1B --ranks "$ranks" --microbatches "$microbatches" --lower send-recv)
"$bin" "${lower[@]}" -o "$file"
"$bin" compile --schedule 1F1B --ranks 2 --microbatches 2 --lower send-recv -o "$tmp/tiny.csv"
actions=$(tr ',' '\n' <"$file" | grep -c '[^[:space:]]')
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "file: 1F1B ${ranks}x${microbatches} send_recv, $(stat -c %s "$file") bytes, $actions actions"
# Wall seconds and peak RSS (KiB) of one command, median of REPEATS runs: "wall rss".
measure() {
  : >"$tmp/walls"
  : >"$tmp/rsss"
  for _ in $(seq "$repeats"); do
    [[ ${REPLACE:-0} == 1 ]] || rm -f "$tmp/out"
    # Wall time to the millisecond from bash's `time` (/usr/bin/time prints 2 decimals), peak RSS
    # from /usr/bin/time, whose own start (well under a millisecond) the wall time includes.
    { TIMEFORMAT=%R && time /usr/bin/time -f "%M" -o "$tmp/t" "$@" >/dev/null; } 2>>"$tmp/walls"
    read -r rss <"$tmp/t"
    echo "$rss" >>"$tmp/rsss"
  done
  echo "$(median <"$tmp/walls") $(median <"$tmp/rsss")"
}
# /usr/bin/time prints 2 decimals: wc -l is timed as a loop of 10 and divided.
wc_time() {
  : >"$tmp/walls"
  for _ in $(seq "$repeats"); do
    /usr/bin/time -f "%e" -o "$tmp/t" sh -c 'for i in 1 2 3 4 5 6 7 8 9 10; do wc -l "$1" >/dev/null; done' sh "$file"
    cat "$tmp/t" >>"$tmp/walls"
  done
  median <"$tmp/walls" | awk '{printf "%.4f", $1 / 10}'
}
wc_s=$(wc_time)
read -r _ base_kb < <(measure "$bin" validate "$tmp/tiny.csv")
echo "wc -l: $wc_s s; baseline peak RSS (validate of a 2-rank file): $base_kb KiB"
echo
echo "| command | wall s (median of $repeats) | x wc -l | peak RSS MB | B/action above baseline |"
echo "|---|--:|--:|--:|--:|"
row() {
  local name=$1
  shift
  read -r wall rss < <(measure "$bin" "$@")
  awk -v n="$name" -v w="$wall" -v r="$rss" -v b="$base_kb" -v a="$actions" -v c="$wc_s" 'BEGIN {
    printf "| %s | %.3f | %.1f | %.1f | %.1f |\n", n, w, w / c, r / 1024, (r - b) * 1024 / a }'
}
row "validate" validate "$file"
row "simulate --simulator pytorch-steps --format csv" simulate "$file" --simulator pytorch-steps --format csv -o "$tmp/out"
row "simulate --simulator pytorch-steps --format text" simulate "$file" --simulator pytorch-steps --format text -o "$tmp/out"
row "simulate --views summary" simulate "$file" --views summary -o "$tmp/out"
row "compile --lower send-recv (the lowering)" "${lower[@]}" -o "$tmp/out"
