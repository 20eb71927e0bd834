#!/usr/bin/env python3
"""Write the per-rank orders of the Zero Bubble authors' zbv_greedy.py (V-Half and V-Min, reordered
slot by slot) as a corpus: tests/conformance/zero-bubble/zbv_greedy.txt, which
tests/conformance/zbv_greedy_test.cpp compares ppsched's own reorder (lib/synth/v_slot_reorder)
with. Their order does not depend on the costs, so unit costs are used.

Usage (by hand, with a checkout of sail-sg/zero-bubble-pipeline-parallelism):
  bench/offline/zbv_greedy_orders.py --zb-repo PATH [--out FILE]
Each case is a line `case <half|min> <p> <m>` and then one line per rank: its actions in order,
space-separated, as <kind><stage>,<microbatch> with kind F, I or W and V stages (rank r holds r
and 2p-1-r). A case their code fails on is written as `case ... failed`.
"""
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zb_compare  # noqa: E402

SHAPES = [(p, m) for p in (2, 3, 4, 5, 6, 8, 9, 12) for m in sorted({p, p + 1, p + 2, 2 * p, 3 * p + 1, 5 * p})]


def orders(mods, mode, p, m):
    zg = mods["zbv_greedy"]
    graph = zg.PipelineGraph(p, m, mode, 1, 1, 1, 0)
    pattern = graph.stable_pattern_v_half(p) if mode == "half" else graph.stable_pattern_v_min(p)
    try:
        _, _, order = graph.schedule_from_pattern(pattern, m, [1] * 6)
    except (AssertionError, IndexError, KeyError, ValueError):
        return None
    chunk_of = [0, 1, 1, 0, 1, 0]
    kind_of = "FFIIWW"
    return [" ".join(f"{kind_of[ty]}{zb_compare.v_stage(p, rank, chunk_of[ty])},{mb}" for ty, mb in order[rank])
            for rank in range(p)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--zb-repo", required=True)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "../../tests/conformance/zero-bubble/"
                                                  "zbv_greedy.txt"))
    args = ap.parse_args()
    mods = zb_compare.load_reference(args.zb_repo)
    commit = subprocess.run(["git", "-C", args.zb_repo, "rev-parse", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    lines = [f"# zbv_greedy.py of sail-sg/zero-bubble-pipeline-parallelism at {commit}",
             "# written by bench/offline/zbv_greedy_orders.py"]
    for mode in ("half", "min"):
        for p, m in SHAPES:
            ranks = orders(mods, mode, p, m)
            if ranks is None:
                lines.append(f"case {mode} {p} {m} failed")
                continue
            lines.append(f"case {mode} {p} {m}")
            lines.extend(ranks)
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
