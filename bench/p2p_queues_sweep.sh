#!/usr/bin/env bash
# Which of PyTorch's own runtime orders deadlock on which communicator queues (docs/rules.md,
# "Communicator queues"; docs/manual.md, `validate`): each family PyTorch lowers, on 2, 3, 4 and 8
# ranks and 1 to 16 microbatches, lowered as `--lower runtime` does (cff2ecc8, with and without
# --defer-pp-recv), then validated under each --p2p-queues value. Prints, per family and keyword,
# how many sizes lower and how many of those deadlock under each. About 1,000 processes, 2 min.
#   bench/p2p_queues_sweep.sh [PPSCHED]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/app/ppsched}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "| family | lowering | sizes | deadlock per-rank | per-direction | per-edge |"
echo "|---|---|--:|--:|--:|--:|"
for family in 1F1B GPipe ZBH1 Interleaved1F1B LoopedBFS InterleavedZeroBubble ZBVZeroBubble DualPipeV; do
  for defer in "" --defer-pp-recv; do
    sizes=0 rank=0 direction=0 edge=0
    for ranks in 2 3 4 8; do
      for mbs in 1 2 3 4 8 16; do
        f=$tmp/s.csv
        "$bin" compile --schedule "$family" --ranks "$ranks" --microbatches "$mbs" --lower runtime $defer -o "$f" \
          2>/dev/null || continue
        sizes=$((sizes + 1))
        for q in per-rank per-direction per-edge; do
          rc=0
          "$bin" validate "$f" --p2p-queues "$q" >/dev/null 2>&1 || rc=$?
          [ "$rc" -le 1 ] || { echo "validate exited $rc on $family $ranks x $mbs $defer" >&2; exit 1; }
          [ "$rc" -eq 1 ] || continue
          case $q in per-rank) rank=$((rank + 1)) ;; per-direction) direction=$((direction + 1)) ;; *) edge=$((edge + 1)) ;; esac
        done
      done
    done
    [ "$sizes" -gt 0 ] && echo "| $family | ${defer:-default} | $sizes | $rank | $direction | $edge |"
  done
done
