#!/usr/bin/env bash
# Quadratic bait (run by ctest with a time-out): inputs whose size makes any pass that is
# quadratic in ranks, idle cells or chain length take minutes, where linear passes take about a
# second each on this project's 2-core machines.
#   - a send/recv chain across 60,000 ranks (GPipe, one microbatch, lowered): every action waits
#     for the rank before it;
#   - 5,000 ranks with 2,000 idle cells each before their two actions (10 MB of commas);
#   - a sparse schedule whose one microbatch index is 4294967294.
# validate, simulate (timed) and compile must finish; PyTorch's lock-step model, whose grid is
# ranks x steps by definition, must stop at its cell budget with exit 2 rather than run on.
#
#   linear_time_test.sh PPSCHED sanitized|ALLOC_METER
# "sanitized" when the binary is built with ASan, which reserves terabytes of address space for its
# shadow memory: an address-space limit would stop it at start-up, so only the time-out applies.
# Otherwise ALLOC_METER is tests/support/alloc_meter.cpp's library: each command on the chain and
# the idle cells runs under it and may ask malloc for at most 64 bytes per byte of its input file.
# (Linear passes ask for 18-28 here; a per-rank array over all stages asked for 2,850.)
set -euo pipefail
bin=$1
mode=${2:-}
sanitized=
meter=
if [ "$mode" = sanitized ]; then sanitized=sanitized; else meter=$mode; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# metered INPUT ARGS...: runs ppsched ARGS (under the meter where there is one) and, with a meter,
# fails when it asked for more than 64 bytes per byte of INPUT.
metered() {
  local input=$1
  shift
  if [ -z "$meter" ]; then
    "$bin" "$@"
    return
  fi
  local status=0
  LD_PRELOAD=$meter PPSCHED_ALLOC_METER_OUT="$tmp/asked" "$bin" "$@" || status=$?
  local asked size
  asked=$(cat "$tmp/asked")
  size=$(stat -c %s "$input")
  if [ "$asked" -gt $((64 * size)) ]; then
    echo "ppsched $*: asked malloc for $asked bytes, $((asked / size)) per byte of its $size-byte input (at most 64)" >&2
    exit 1
  fi
  return $status
}
"$bin" compile --schedule GPipe --ranks 60000 --microbatches 1 --lower send-recv -o "$tmp/chain.csv"
metered "$tmp/chain.csv" validate "$tmp/chain.csv" --schedule GPipe >/dev/null
metered "$tmp/chain.csv" simulate "$tmp/chain.csv" >/dev/null
metered "$tmp/chain.csv" compile "$tmp/chain.csv" --format json -o "$tmp/chain.json"
metered "$tmp/chain.json" validate "$tmp/chain.json" >/dev/null
awk 'BEGIN { pad = sprintf("%2000s", ""); gsub(/ /, ",", pad); for (r = 0; r < 5000; ++r) printf "%s%dF0,%dB0\r\n", pad, r, r }' \
  >"$tmp/idle.csv"
metered "$tmp/idle.csv" validate "$tmp/idle.csv" >/dev/null || [ $? -eq 1 ]  # findings are fine; a hang is not
metered "$tmp/idle.csv" simulate "$tmp/idle.csv" >/dev/null
set +e
"$bin" simulate "$tmp/idle.csv" --simulator pytorch-steps >/dev/null 2>"$tmp/err"
status=$?
set -e
[ $status -eq 2 ] && grep -q "lock-step simulation passed" "$tmp/err" || { echo "pytorch-steps: exit $status"; cat "$tmp/err"; exit 1; }
# A sparse schedule: three actions, one at microbatch 4294967294. The simulator and the
# validator once sized their tables by the stage x microbatch grid (48 GB, or 4e9 loop turns:
# 50 s); under a 1 GB address-space limit and a 20 s time-out both must answer at once. simulate
# refuses the schedule (it misses the forwards of 4e9 microbatches), so --force makes it simulate.
printf '0F0,0B0,0F4294967294\r\n' >"$tmp/sparse.csv"
limit_memory() { [ "$sanitized" = sanitized ] || ulimit -v 1048576; }
set +e
( limit_memory; timeout 20 "$bin" validate "$tmp/sparse.csv" >/dev/null 2>&1 ); status=$?
[ $status -eq 1 ] || { echo "sparse validate: exit $status (expected 1: findings)"; exit 1; }
( limit_memory; timeout 20 "$bin" simulate --force "$tmp/sparse.csv" >/dev/null 2>&1 ); status=$?
[ $status -le 2 ] || { echo "sparse simulate: exit $status"; exit 1; }  # 2: PyTorch's lowering refuses it, at once
set -e
echo "linear time: all bait inputs handled"
