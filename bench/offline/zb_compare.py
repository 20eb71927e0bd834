#!/usr/bin/env python3
"""Compare `ppsched compile --schedule auto` with the Zero Bubble authors' own searches.

The reference is sail-sg/zero-bubble-pipeline-parallelism, read from a checkout the user gives
(nothing of it is copied here): the one-chunk heuristic of
megatron/core/pipeline_parallel/zerobubble/scheduler/zb.py (Graph.manual_order over the eight
combinations its initial_solution tries, without the optional ILP refinement) and the V search of
.../scheduler/zbv.py (PipelineGraph.try_v_schedule over the four fill_b/fill_f combinations its
create_schedule tries). Their modules import torch, pulp and a sibling module only for type
annotations and the ILP step; stand-ins for those are registered before loading them.

Both sides use the same model: no comm, per-rank costs T_F, T_I, T_W (a V chunk costs half),
M_W = M_B / 2, and a cap of `cap` microbatches of activation per rank. On ppsched's side that is a
stage spec in made-up bytes (a microbatch's activation on a rank is 4 bytes) and the schedule is
simulated again with `ppsched simulate`. Their makespan is the largest end time of their schedule
(their own objective for one chunk is the longest per-stage span; both are printed).

Usage, run by hand (not part of the build or the tests):
  bench/offline/zb_compare.py --zb-repo PATH --ppsched build/app/ppsched [--grid small|speed]
"""
import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import types

GRAPH_MODULE = "megatron.core.pipeline_parallel.zerobubble.scheduler.graph"
SCHEDULER_DIR = "megatron/core/pipeline_parallel/zerobubble/scheduler"


def load_reference(repo):
    """Loads zb.py and zbv.py from the checkout, with stand-ins for their heavy imports."""
    for name in ["torch", "pulp"]:
        stub = types.ModuleType(name)
        stub.Tensor = object
        sys.modules.setdefault(name, stub)
    parts = GRAPH_MODULE.split(".")
    for k in range(1, len(parts) + 1):
        sys.modules.setdefault(".".join(parts[:k]), types.ModuleType(".".join(parts[:k])))
    graph = sys.modules[GRAPH_MODULE]
    for name in ["GraphConfig", "ScheduledNode", "FuncType", "F", "B", "W"]:
        setattr(graph, name, None)
    loaded = {}
    for name in ["zb", "zbv"]:
        path = os.path.join(repo, SCHEDULER_DIR, name + ".py")
        spec = importlib.util.spec_from_file_location("reference_" + name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        loaded[name] = module
    return loaded["zb"], loaded["zbv"]


def their_one_chunk(zb, p, m, t_f, t_i, t_w, cap):
    cfg = types.SimpleNamespace(cost_f=[t_f] * p, cost_b=[t_i] * p, cost_w=[t_w] * p, cost_comm=0,
                                mem_f=[2] * p, mem_b=[-1] * p, mem_w=[-1] * p, max_mem=[2 * cap] * p,
                                print_scaling=1)
    graph = zb.Graph.build_graph(p, m, cfg)
    best = None
    for bubble_before_b in (True, False):
        for prioritize_b in (True, False):
            for no_bubble_greedy in (True, False):
                try:
                    _, end, span = graph.manual_order(allow_bubble_before_first_b=bubble_before_b,
                                                      prioritize_b=prioritize_b,
                                                      no_bubble_greedy=no_bubble_greedy)
                except (AssertionError, ValueError):
                    continue
                if best is None or span < best[1]:
                    best = (max(end), span)
    return best


def their_v(zbv, p, m, t_f, t_i, t_w, cap):
    # Per chunk costs T/2: pass T and halve the times. A chunk holds 2 units (half a microbatch).
    graph = zbv.PipelineGraph(p, m, t_f, t_i, t_w, 0, 2, -1, -1, max_mem=int(round(4 * cap)))
    best = None
    for fill_b in (True, False):
        for fill_f in (True, False):
            try:
                _, end, bubble = graph.try_v_schedule(fill_b=fill_b, fill_f=fill_f)
            except AssertionError:
                continue
            if best is None or bubble < best[1]:
                best = (max(end) / 2, bubble)
    return best


def ours(ppsched, p, m, v, t_f, t_i, t_w, cap, workdir):
    stages = p * v
    per_stage = 4 // v  # bytes of activation a stage holds per microbatch
    spec = {"schema_version": 1,
            "stages": [{"activation_bytes": 1, "activation_memory_bytes": per_stage,
                        "weight_grad_memory_bytes": per_stage // 2} for _ in range(stages)]}
    spec_path = os.path.join(workdir, "spec.json")
    with open(spec_path, "w") as f:
        json.dump(spec, f)
    out = os.path.join(workdir, "auto.csv")
    cost = f"F={t_f},I={t_i},W={t_w},B={t_i + t_w}"
    start = time.perf_counter()
    compile_run = subprocess.run([ppsched, "compile", "--schedule", "auto", "--ranks", str(p), "--microbatches",
                                  str(m), "--stages-per-rank", str(v), "--memory-cap", str(4 * cap), "--cost",
                                  cost, "--stage-spec", spec_path, "-o", out], capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if compile_run.returncode != 0:
        return None, compile_run.stderr.strip(), seconds
    sim = subprocess.run([ppsched, "simulate", out, "--cost", cost, "--stage-spec", spec_path, "--views",
                          "summary"], capture_output=True, text=True)
    makespan = float(re.search(r"makespan\s+([0-9.]+)", sim.stdout).group(1))
    origin = re.search(r"chose (.*) \(\d+ candidates?", compile_run.stderr)
    return makespan, origin.group(1) if origin else "?", seconds


def grid(kind):
    if kind == "speed":
        return [(64, 512, 1, 2, 3, 1, 64), (32, 512, 2, 2, 3, 1, 32), (64, 512, 2, 2, 3, 1, 64),
                (128, 2048, 2, 2, 3, 1, 128), (256, 2048, 1, 2, 3, 1, 256)]
    rows = []
    for p in (2, 3, 4, 5, 6, 8, 12, 16):
        for m in (p, 2 * p, 4 * p):
            for costs in ((1, 1, 1), (2, 3, 1), (1, 2, 1), (2, 2, 1), (3, 4, 2), (1, 1, 2)):
                rows.append((p, m, 1) + costs + (p,))
                rows.append((p, m, 1) + costs + (2 * p,))
                rows.append((p, m, 2) + costs + (p,))
                rows.append((p, m, 2) + costs + ((p + 2) // 2,))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--zb-repo", required=True, help="checkout of sail-sg/zero-bubble-pipeline-parallelism")
    ap.add_argument("--ppsched", default="build/app/ppsched")
    ap.add_argument("--grid", choices=["small", "speed"], default="small")
    args = ap.parse_args()
    zb, zbv = load_reference(args.zb_repo)
    tally = {"better": 0, "same": 0, "worse": 0, "theirs failed": 0}
    print("p m v T_F T_I T_W cap | theirs (s) | ppsched auto (s) | verdict")
    with tempfile.TemporaryDirectory() as workdir:
        for p, m, v, t_f, t_i, t_w, cap in grid(args.grid):
            start = time.perf_counter()
            theirs = (their_one_chunk(zb, p, m, t_f, t_i, t_w, cap) if v == 1
                      else their_v(zbv, p, m, t_f, t_i, t_w, cap))
            their_seconds = time.perf_counter() - start
            mine, origin, my_seconds = ours(args.ppsched, p, m, v, t_f, t_i, t_w, cap, workdir)
            if theirs is None:
                verdict = "theirs failed"
            elif mine is None:
                verdict = "worse"
            else:
                verdict = "better" if mine < theirs[0] - 1e-9 else ("worse" if mine > theirs[0] + 1e-9 else "same")
            tally[verdict] += 1
            their_text = "-" if theirs is None else f"{theirs[0]:g} ({their_seconds:.2f})"
            print(f"{p} {m} {v} {t_f} {t_i} {t_w} {cap} | {their_text} | {mine} ({my_seconds:.3f}) {origin} | {verdict}",
                  flush=True)
    print(tally)


if __name__ == "__main__":
    main()
