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
set -euo pipefail
bin=$1
# "sanitized" when the binary is built with ASan, which reserves terabytes of address space for its
# shadow memory: an address-space limit would stop it at start-up, so only the time-out applies.
sanitized=${2:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" compile --schedule GPipe --ranks 60000 --microbatches 1 --lower send-recv -o "$tmp/chain.csv"
"$bin" validate "$tmp/chain.csv" --schedule GPipe >/dev/null
"$bin" simulate "$tmp/chain.csv" >/dev/null
"$bin" compile "$tmp/chain.csv" --format json -o "$tmp/chain.json"
"$bin" validate "$tmp/chain.json" >/dev/null
awk 'BEGIN { pad = sprintf("%2000s", ""); gsub(/ /, ",", pad); for (r = 0; r < 5000; ++r) printf "%s%dF0,%dB0\r\n", pad, r, r }' \
  >"$tmp/idle.csv"
"$bin" validate "$tmp/idle.csv" >/dev/null || [ $? -eq 1 ]  # findings are fine; a hang is not
"$bin" simulate "$tmp/idle.csv" >/dev/null
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
