#!/usr/bin/env bash
# simulate --memory-cap and validate --max-memory judge the same peak (run by ctest). With a stage
# spec the peak is bytes: each rank's weights plus its live activations. The spec gives every
# stage different weights, so a command that left the weights out, or placed them on the wrong
# ranks, would pass a cap just under the real peak.
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# 4 ranks x 2 stages (V: rank r holds stages r and 7-r); stage s weighs (s+1) GB.
{
  echo '{"schema_version": 1, "stages": ['
  for s in 0 1 2 3 4 5 6 7; do
    sep=$([ $s -lt 7 ] && echo , || true)
    echo "  {\"activation_bytes\": 1000000, \"activation_memory_bytes\": 100000000,"
    echo "   \"weight_grad_memory_bytes\": 50000000, \"weight_bytes\": $(( (s + 1) * 1000000000 ))}$sep"
  done
  echo ']}'
} >"$tmp/spec.json"
"$bin" compile --schedule ZBVZeroBubble --ranks 4 --microbatches 8 -o "$tmp/zbv.csv" || fail "compile: exit $?"

peak=$("$bin" simulate "$tmp/zbv.csv" --stage-spec "$tmp/spec.json" --format json --views summary |
  sed -n 's/^ *"peak_memory": \([0-9.e+]*\),*$/\1/p')
[ -n "$peak" ] || fail "simulate printed no peak_memory"
# V puts 9 GB of weights on every rank; the activations add less than 1 GB.
awk -v p="$peak" 'BEGIN { exit !(p > 9e9 && p < 10e9) }' || fail "peak $peak is not 9 GB of weights plus activations"
below=$(awk -v p="$peak" 'BEGIN { printf "%.0f", p - 1000 }')
at=$(awk -v p="$peak" 'BEGIN { printf "%.0f", p }')

"$bin" simulate "$tmp/zbv.csv" --stage-spec "$tmp/spec.json" --memory-cap "$at" --views summary >/dev/null
[ $? -eq 0 ] || fail "simulate --memory-cap at the peak: expected exit 0"
"$bin" simulate "$tmp/zbv.csv" --stage-spec "$tmp/spec.json" --memory-cap "$below" --views summary >/dev/null
[ $? -eq 1 ] || fail "simulate --memory-cap under the peak: expected exit 1"
"$bin" validate "$tmp/zbv.csv" --stage-spec "$tmp/spec.json" --max-memory "$at" >"$tmp/out" 2>&1
[ $? -eq 0 ] || { cat "$tmp/out"; fail "validate --max-memory at the peak: expected exit 0"; }
"$bin" validate "$tmp/zbv.csv" --stage-spec "$tmp/spec.json" --max-memory "$below" >"$tmp/out" 2>&1
[ $? -eq 1 ] || { cat "$tmp/out"; fail "validate --max-memory under the peak: expected exit 1"; }
grep -q "GiB of weights and activations ([0-9]* bytes)" "$tmp/out" || { cat "$tmp/out"; fail "validate does not say what the peak holds"; }
"$bin" validate "$tmp/zbv.csv" --max-memory 0 >"$tmp/out" 2>&1
[ $? -eq 2 ] || fail "validate --max-memory 0: expected a usage error (a cap is positive)"

# A cap in activations is spelled as such and means the same in simulate, validate and tune: ZBV
# on 4 ranks x 8 microbatches holds 8 of PyTorch's stage_microbatch slots on every rank, and 8
# microbatches on rank 0. The plain number under --memory-model pytorch-liveness is the same cap.
for cap in 8slots "8 slots" 8microbatches; do
  "$bin" simulate "$tmp/zbv.csv" --memory-cap "$cap" --views summary >/dev/null
  [ $? -eq 0 ] || fail "simulate --memory-cap '$cap' at the peak: expected exit 0"
  "$bin" validate "$tmp/zbv.csv" --max-memory "$cap" >/dev/null 2>&1
  [ $? -eq 0 ] || fail "validate --max-memory '$cap' at the peak: expected exit 0"
done
for cap in 7slots 7microbatches; do
  "$bin" simulate "$tmp/zbv.csv" --memory-cap "$cap" --views summary >/dev/null 2>&1
  [ $? -eq 1 ] || fail "simulate --memory-cap $cap under the peak: expected exit 1"
  "$bin" validate "$tmp/zbv.csv" --max-memory "$cap" >"$tmp/out" 2>&1
  [ $? -eq 1 ] || fail "validate --max-memory $cap under the peak: expected exit 1"
done
"$bin" simulate "$tmp/zbv.csv" --memory-cap 7 --memory-model pytorch-liveness --views summary >/dev/null 2>&1
[ $? -eq 1 ] || fail "simulate --memory-cap 7 --memory-model pytorch-liveness: expected exit 1, as 7slots"
tune_zbv() { "$bin" tune --ranks 4 --microbatches 8 --families ZBVZeroBubble --stages-per-rank 2 --memory-cap "$1" --top 0; }
tune_zbv 8slots | grep -q "ZBVZeroBubble .* best$" || fail "tune --memory-cap 8slots: ZBV should fit"
tune_zbv 7slots | grep -q "ZBVZeroBubble .*over the cap" || fail "tune --memory-cap 7slots: ZBV should be over the cap"
echo "ok: simulate and validate agree on the peak ($peak bytes); slot and microbatch caps agree in simulate, validate and tune"
