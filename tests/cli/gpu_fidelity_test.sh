#!/usr/bin/env bash
# scripts/gpu-fidelity on the fake backend: the sweep runs end to end (isolated costs, every
# family asked for, the auto schedule compiled at its cap, the simulator fed the written cost
# table) and prints a row per family whose own prediction matches the fake run.
#   gpu_fidelity_test.sh PPSCHED
set -uo pipefail
bin=$1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
table=$(PPSCHED=$bin LAYERS=1 RANKS=4 FAMILIES="1F1B ZBVZeroBubble auto" scripts/gpu-fidelity "$out" --backend fake 2>&1)
rc=$?
echo "$table"
[ $rc -eq 0 ] || { echo "FAIL: gpu-fidelity exited $rc"; exit 1; }
fail=0
for fam in 1F1B ZBVZeroBubble auto; do
  for f in "$fam-p4.json" "$fam-p4.costs.csv" "$fam-p4.sim.json" "$fam-p4.trace.json"; do
    [ -s "$out/$f" ] || { echo "FAIL: no $f"; fail=1; }
  done
  # The row: family, p, m, measured, cv, simulated, error, run's own ratio (the fake device runs
  # every stream alone, so run's prediction is the simulator's timeline up to 2% jitter).
  row=$(echo "$table" | awk -v f="$fam" '$1 == f && $2 == 4')
  ratio=$(echo "$row" | awk '{print $8}')
  awk -v r="$ratio" 'BEGIN { exit !(r > 0.97 && r < 1.03) }' || { echo "FAIL: $fam run ratio '$ratio'"; fail=1; }
done
[ -s "$out/auto-p4.csv" ] || { echo "FAIL: the auto schedule was not compiled"; fail=1; }
[ -s "$out/isolated-ZBVZeroBubble.costs.csv" ] || { echo "FAIL: no isolated cost table"; fail=1; }
exit $fail
