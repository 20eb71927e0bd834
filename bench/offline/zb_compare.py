#!/usr/bin/env python3
"""Compare `ppsched compile --schedule auto` with the Zero Bubble authors' own searches.

The reference is sail-sg/zero-bubble-pipeline-parallelism, read from a checkout the user gives
(nothing of it is copied here). Its schedulers live in megatron/core/pipeline_parallel/zerobubble/
scheduler/; this script calls four of them:

  zb.py             one chunk: Graph.manual_order over the eight combinations its initial_solution
                    tries (without the optional ILP refinement). Memory per stage in any unit
                    (mem_f, mem_b, mem_w, max_mem), comm as cost_comm.
  zbv.py            V (two chunks): PipelineGraph.try_v_schedule over the four fill_b/fill_f
                    combinations its create_schedule tries. Memory per chunk (f_mem, b_mem, w_mem,
                    max_mem), comm as c_cost.
  v_auto_schedule.py  V: schedule(p, m, (f, b, w, c), max_mem), the adaptive search over building
                    blocks of "Pipeline Parallelism with Controllable Memory" (arXiv 2405.15362).
                    max_mem counts chunk activations (a forward of either chunk adds 1, a W frees
                    1, the B frees nothing: M_W = M_B). It selects by its evaluate_schedule, which
                    is replaced here by the objective compared (see --objective).
  zbv_greedy.py     V: the fixed V-Half and V-Min patterns with their greedy reorder pass
                    (PipelineGraph(p, m, 'half'|'min', f, b, w, c).schedule_from_pattern); no cap:
                    the pattern has its own memory.
v_auto_schedule runs at V-Min's cap, (p+4)//3 microbatches (max_mem 2*((p+4)//3)), and V-Half's,
(p+2)//2 (max_mem 2*((p+2)//2)): the peaks of zbv_greedy's own V-Min and V-Half patterns counted as
their mem_of_stage counts (every p of the review grid), and ppsched's VMin and VHalf families' caps.
Their repository calls v_auto_schedule from nowhere; its runtime calls zb.py, zbv.py and zbv_greedy.py.
Their modules import torch, pulp and a sibling module only for type annotations, the ILP step and
the runtime's node type; stand-ins for those are registered before loading them.

Both sides use one model. Per-rank costs T_F, T_I (their B), T_W; a V chunk costs half (their V
searches get T and a comm of 2c and their times are halved, which keeps integer costs exact); a
fixed latency c per transfer between stages on different ranks (free between a rank's own chunks).
On ppsched's side the costs are `--cost F=..,I=..,W=..`, the latency a `--topology` whose links all
have latency c and a huge bandwidth, and the stage spec's activation_bytes is 0, so that bytes add
nothing (a transfer costs latency + bytes / bandwidth). Memory: a microbatch's activation on a rank
is 4 bytes (2 per V chunk), M_W = M_B x mw_ratio (the stage spec's weight_grad_memory_bytes; their
mem_w), and a cap of `cap` microbatches is 4 x cap bytes. v_auto_schedule models M_W = M_B whatever
the ratio; at mw_ratio 0.5 its schedules still fit the cap, they just do not use the memory an I
frees. zbv_greedy's V-Half and V-Min are compared at their own memory: the peak of their schedule in
this model, measured by `ppsched simulate`, is ppsched's cap.

Every schedule of theirs is also written as a PyTorch CSV and simulated by ppsched (--runtime ideal,
the model the search optimises): their_check says whether ppsched finds the times they computed,
and their_peak is its peak memory in this model.

Objectives (--objective): makespan, the largest end time; span, the Zero Bubble paper's objective,
the longest rank span (last end - first start on a rank). Both are computed for both sides; where
a search of theirs produces several candidates, the best for the objective is taken (zb.py's
initial_solution and zbv.py's create_schedule keep the one of least span or bubble, so under
makespan theirs can only gain by it). ppsched's
numbers come from `ppsched simulate --runtime ideal --optimizer post-validated --format json`
(summary.makespan and summary.iteration_time, the longest rank span). Under span, compile gets
`--optimizer post-validated` when `ppsched compile --help` lists --optimizer; otherwise the
makespan-optimised schedule's span is compared, and the output says so.

A unit of work is one (p, m) with all its cost mixes: the cost-independent parts of v_auto_schedule
(each building block's repeat/squeeze/reorder) and zbv_greedy (the reorder on unit slots) are
computed once per unit and reused for the other mixes, which gives the same schedules (class Reuse);
their_s then times only the rest, and the row's note says so. --no-reuse runs every search in full.
--grid small is the earlier 576-configuration grid (no comm, M_W = M_B/2, zbv.py also at V-Half's
cap); --grid speed times the searches at large p; --grid review is p in {2,3,4,5,6,8,12,16}, m in
{p, p+1, 2p, 3p, 4p}, seven integer cost mixes and the paper's six measured ones with and without
their comm, M_W = M_B/2 and M_B, against every reference; --grid wide is p in {4, 7, 10, 16, 24, 32},
m in {p+2, 3p/2, 5p, 8p}, four mixes with T_F > T_I, two of the review's and one measured with comm.

Usage, run by hand (not part of the build or the tests):
  bench/offline/zb_compare.py --zb-repo PATH --ppsched build/app/ppsched [--grid small|speed|review]
      [--objective makespan|span] [--only FAMILY,...] [--p P,...] [--jobs N] [--csv PATH]
  bench/offline/zb_compare.py --summarize PATH.csv      # the tallies and lists of an earlier run
Families for --only: onechunk (zb.py at caps p and 2p), zbv (zbv.py), vauto (v_auto_schedule.py at
V-Min's and V-Half's caps), vhalf, vmin (zbv_greedy.py), or a reference's name as printed.
"""
import argparse
import contextlib
import csv
import importlib.util
import io
import json
import multiprocessing
import os
import re
import subprocess
import sys
import tempfile
import time
import types

GRAPH_MODULE = "megatron.core.pipeline_parallel.zerobubble.scheduler.graph"
SCHEDULER_DIR = "megatron/core/pipeline_parallel/zerobubble/scheduler"
MODULES = ["zb", "zbv", "v_auto_schedule", "zbv_greedy"]
TOLERANCE = 1e-9  # relative; measured costs sum in floating point

# name: (family, stages per rank, cap in microbatches from p, or None: the schedule's own peak)
REFERENCES = {
    "zb.py@p": ("onechunk", 1, lambda p: p),
    "zb.py@2p": ("onechunk", 1, lambda p: 2 * p),
    "zbv.py@p": ("zbv", 2, lambda p: p),
    "zbv.py@vhalf": ("zbv", 2, lambda p: (p + 2) // 2),  # --grid small only
    "v_auto@vmin": ("vauto", 2, lambda p: (p + 4) // 3),
    "v_auto@vhalf": ("vauto", 2, lambda p: (p + 2) // 2),
    "zbv_greedy.vhalf": ("vhalf", 2, None),
    "zbv_greedy.vmin": ("vmin", 2, None),
}
REVIEW_REFERENCES = ["zb.py@p", "zb.py@2p", "zbv.py@p", "v_auto@vmin", "v_auto@vhalf", "zbv_greedy.vhalf",
                     "zbv_greedy.vmin"]
SMALL_REFERENCES = ["zb.py@p", "zb.py@2p", "zbv.py@p", "zbv.py@vhalf"]

INTEGER_MIXES = [("1,1,1", 1, 1, 1), ("2,3,1", 2, 3, 1), ("1,2,1", 1, 2, 1), ("2,2,1", 2, 2, 1),
                 ("3,4,2", 3, 4, 2), ("1,1,2", 1, 1, 2), ("1,1,0.5", 1, 1, 0.5)]
# The Zero Bubble paper's profiled T_F, T_B (our I), T_W and T_comm in ms (arXiv 2401.10241).
MEASURED_MIXES = [("1.5B", 18.522, 18.086, 9.337, 0.601), ("1.5B-m32", 18.513, 18.086, 9.331, 0.626),
                  ("1.5B-m64", 18.546, 18.097, 9.321, 0.762), ("14.6B", 11.347, 11.248, 8.132, 0.377),
                  ("14.6B-b", 11.307, 11.254, 8.101, 0.379), ("14.6B-c", 11.325, 11.308, 8.109, 0.378)]

FIELDS = ["grid", "objective", "p", "m", "v", "mix", "t_f", "t_i", "t_w", "comm", "mw_ratio", "cap", "cap_bytes",
          "reference", "their_value", "their_makespan", "their_span", "their_peak", "their_check", "their_s",
          "our_value", "our_makespan", "our_span", "our_peak", "our_s", "our_optimizer", "our_origin", "verdict",
          "rel_diff", "note"]
VERDICTS = ["better", "same", "worse", "theirs failed", "ours failed"]


def load_reference(repo):
    """Loads the four scheduler modules from the checkout, with stand-ins for their heavy imports."""
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
    for name in MODULES:
        path = os.path.join(repo, SCHEDULER_DIR, name + ".py")
        spec = importlib.util.spec_from_file_location("reference_" + name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        loaded[name] = module
    return loaded


# ---- their side ----
# Each search returns its best schedule as {rank: [(stage, kind, mb, start, end)]} (None when it found none),
# the failures of its candidates, and the seconds spent in their code (not in turning results into ours).

def measure(ranks):
    """(makespan, span) of a schedule given as rank -> [(stage, kind, mb, start, end)]."""
    makespan = max(a[4] for acts in ranks.values() for a in acts)
    span = max(max(a[4] for a in acts) - min(a[3] for a in acts) for acts in ranks.values() if acts)
    return makespan, span


def objective_key(objective, makespan, span):
    return (makespan, span) if objective == "makespan" else (span, makespan)


def pick(candidates, objective):
    """The best of several candidates (times, convert) for the objective (the other time breaks ties):
    convert() of the one whose (makespan, span) is least. Candidates stay in their own form until then,
    so that holding them does not slow the next search down (the garbage collector walks what is held)."""
    best = None
    for (ms, sp), convert in candidates:
        key = objective_key(objective, ms, sp)
        if best is None or key < best[0]:
            best = (key, convert)
    return None if best is None else best[1]()


def their_one_chunk(mods, p, m, t_f, t_i, t_w, comm, mw, cap, objective):
    zb = mods["zb"]
    # A microbatch's activation is 2 units: F adds 2, I frees 2 - M_W, W frees M_W.
    cfg = types.SimpleNamespace(cost_f=[t_f] * p, cost_b=[t_i] * p, cost_w=[t_w] * p, cost_comm=comm,
                                mem_f=[2] * p, mem_b=[-(2 - 2 * mw)] * p, mem_w=[-2 * mw] * p,
                                max_mem=[2 * cap] * p, print_scaling=1)
    graph = zb.Graph.build_graph(p, m, cfg)
    cost = [t_f, t_i, t_w]
    candidates, failures, seconds = [], [], 0.0
    for bubble_before_b in (True, False):
        for prioritize_b in (True, False):
            for no_bubble_greedy in (True, False):
                start = time.perf_counter()
                try:
                    _, end, _ = graph.manual_order(allow_bubble_before_first_b=bubble_before_b,
                                                   prioritize_b=prioritize_b, no_bubble_greedy=no_bubble_greedy)
                except (AssertionError, ValueError) as e:
                    failures.append(f"{type(e).__name__}: {e}".strip())
                    continue
                finally:
                    seconds += time.perf_counter() - start
                # end[get_id(kind, stage, mb)]: the ids of one (kind, stage) are m consecutive ones
                first = [min(end[graph.get_id(k, j, 0):graph.get_id(k, j, 0) + m]) - cost[k] for k in range(3)
                         for j in range(p)]
                last = [max(end[graph.get_id(k, j, 0):graph.get_id(k, j, 0) + m]) for k in range(3) for j in range(p)]
                span = max(max(last[j::p]) - min(first[j::p]) for j in range(p))

                def convert(end=end):
                    ranks = {j: [] for j in range(p)}
                    for kind in range(3):
                        for j in range(p):
                            for mb in range(m):
                                t = end[graph.get_id(kind, j, mb)]
                                ranks[j].append((j, "FIW"[kind], mb, t - cost[kind], t))
                    return ranks
                candidates.append(((max(end), span), convert))
    return pick(candidates, objective), failures, seconds


def v_stage(p, rank, chunk):
    return rank if chunk == 0 else 2 * p - 1 - rank


def their_zbv(mods, p, m, t_f, t_i, t_w, comm, mw, cap, objective):
    zbv = mods["zbv"]
    # Per chunk: F adds 2 units (a microbatch on a rank is 4), I frees 2 - M_W, W frees M_W. The costs are
    # per rank and the comm doubled, so every time is twice the model's.
    graph = zbv.PipelineGraph(p, m, t_f, t_i, t_w, 2 * comm, 2, -(2 - 2 * mw), -2 * mw, max_mem=4 * cap)
    cost = [t_f, t_i, t_w]
    candidates, failures, seconds = [], [], 0.0
    for fill_b in (True, False):
        for fill_f in (True, False):
            start = time.perf_counter()
            try:
                schedule, end, _ = graph.try_v_schedule(fill_b=fill_b, fill_f=fill_f)
            except AssertionError as e:
                failures.append(f"AssertionError: {e}".strip())
                continue
            finally:
                seconds += time.perf_counter() - start
            span = 0
            for rank in range(p):
                cat, chunk, mb = schedule[rank][0]  # a rank's program runs in order
                begin = end[graph.get_id(cat, chunk, rank, mb)] - cost[cat]
                cat, chunk, mb = schedule[rank][-1]
                span = max(span, end[graph.get_id(cat, chunk, rank, mb)] - begin)

            def convert(schedule=schedule, end=end):
                ranks = {}
                for rank in range(p):
                    acts = []
                    for cat, chunk, mb in schedule[rank]:
                        # zbv.py numbers a backward's chunk from the loss side: its chunk 0 is the second one.
                        model_chunk = chunk if cat == 0 else 1 - chunk
                        t = end[graph.get_id(cat, chunk, rank, mb)] / 2
                        acts.append((v_stage(p, rank, model_chunk), "FIW"[cat], mb, t - cost[cat] / 2, t))
                    ranks[rank] = acts
                return ranks
            candidates.append(((max(end) / 2, span / 2), convert))
    return pick(candidates, objective), failures, seconds


def vauto_ranks(nodes, p):
    ranks = {}
    for rank, stage_nodes in enumerate(nodes):
        ranks[rank] = [(v_stage(p, rank, n.chunk), {"F": "F", "B": "I", "W": "W"}[n.type], n.minibatch,
                        n.start_time / 2, n.completion_time / 2) for n in stage_nodes]
    return ranks


def their_vauto(mods, p, m, t_f, t_i, t_w, comm, mw, cap, objective):
    va = mods["v_auto_schedule"]

    seen = {}  # building blocks often repeat and squeeze into the same schedule

    def evaluate(schedule, f, b, w, c):  # replaces theirs (the span), so that it selects by the objective
        key = (tuple("".join(row) for row in schedule), f, b, w, c)
        if key not in seen:
            ms, sp = measure(vauto_ranks(va.transform_schedule(schedule, f, b, w, c), p))
            seen[key] = objective_key(objective, ms, sp)
        return seen[key]

    va.evaluate_schedule = evaluate
    # max_mem counts chunk activations: cap microbatches hold 2 x cap chunks.
    start = time.perf_counter()
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            nodes = va.schedule(p, m, (t_f, t_i, t_w, 2 * comm), 2 * cap)
    except (AssertionError, TypeError, ValueError, IndexError, KeyError) as e:
        # schedule() ends in transform_schedule(None) (a TypeError) when no building block fits max_mem.
        return None, [f"{type(e).__name__}: {e}".strip()], time.perf_counter() - start
    return vauto_ranks(nodes, p), [], time.perf_counter() - start


def their_zbv_greedy(mods, p, m, t_f, t_i, t_w, comm, mode):
    zg = mods["zbv_greedy"]
    graph = zg.PipelineGraph(p, m, mode, t_f, t_i, t_w, 2 * comm)
    pattern = graph.stable_pattern_v_half(p) if mode == "half" else graph.stable_pattern_v_min(p)
    cost = [t_f, t_f, t_i, t_i, t_w, t_w]
    began = time.perf_counter()
    try:
        _, start, order = graph.schedule_from_pattern(pattern, m, cost)
    except (AssertionError, IndexError, KeyError, ValueError) as e:
        return None, [f"{type(e).__name__}: {e}".strip()], time.perf_counter() - began
    seconds = time.perf_counter() - began
    # Types F f B b W w: F the first chunk's forward, f the second's; B the second chunk's backward (it goes
    # up from stage 0's rank), b the first's; W and w their weight gradients.
    chunk_of = [0, 1, 1, 0, 1, 0]
    kind_of = "FFIIWW"
    ranks = {}
    for rank in range(p):
        ranks[rank] = [(v_stage(p, rank, chunk_of[ty]), kind_of[ty], mb, start[rank][ty][mb] / 2,
                        (start[rank][ty][mb] + cost[ty]) / 2) for ty, mb in order[rank]]
    return ranks, [], seconds


# ---- ppsched's side ----

def run_binary(command):
    """subprocess.run, tried again for a while when the binary is missing or busy (being relinked)."""
    for attempt in range(12):
        try:
            return subprocess.run(command, capture_output=True, text=True)
        except OSError:
            if attempt == 11:
                raise
            time.sleep(5)


class Ppsched:
    def __init__(self, binary, workdir, time_budget=None):
        self.binary = binary
        self.workdir = workdir
        self.time_budget = time_budget
        help_text = run_binary([binary, "compile", "--help"]).stdout
        self.compile_has_optimizer = "--optimizer" in help_text
        # compile ranks auto's answer under PyTorch's runtime by default; compared here is the ideal
        # model, the one the search optimises and both sides are simulated under.
        self.compile_has_runtime = "--runtime" in help_text

    def inputs(self, p, v, t_f, t_i, t_w, comm, mw):
        per_stage = 4 // v  # bytes of activation a stage holds per microbatch
        spec = {"schema_version": 1,
                "stages": [{"activation_bytes": 0, "activation_memory_bytes": per_stage,
                            "weight_grad_memory_bytes": round(per_stage * mw)} for _ in range(p * v)]}
        spec_path = os.path.join(self.workdir, f"spec-{p}-{v}-{mw}.json")
        with open(spec_path, "w") as f:
            json.dump(spec, f)
        args = ["--cost", f"F={t_f},I={t_i},W={t_w},B={t_i + t_w}", "--stage-spec", spec_path]
        if comm:
            link = {"latency_us": comm, "bandwidth_gbps": 1e12}
            topology = {"schema_version": 1, "nodes": [list(range(p))],
                        "links": {"intra_node": link, "inter_node": link, "inter_slice": link}}
            topology_path = os.path.join(self.workdir, f"topology-{p}-{comm}.json")
            with open(topology_path, "w") as f:
                json.dump(topology, f)
            args += ["--topology", topology_path]
        return args

    def simulate(self, schedule_path, inputs):
        run = run_binary([self.binary, "simulate", schedule_path, *inputs, "--runtime", "ideal", "--optimizer",
                          "post-validated", "--views", "summary", "--format", "json"])
        if run.returncode not in (0, 1):
            raise RuntimeError(run.stderr.strip() or f"simulate exited {run.returncode}")
        summary = json.loads(run.stdout)["summary"]
        return summary["makespan"], summary["iteration_time"], summary["peak_memory"]

    def optimizer(self, objective):
        if objective == "makespan":
            return "sync"
        return "post-validated" if self.compile_has_optimizer else "sync (compile has no --optimizer)"

    def auto(self, p, m, v, inputs, cap_bytes, objective):
        out = os.path.join(self.workdir, "auto.csv")
        command = [self.binary, "compile", "--schedule", "auto", "--ranks", str(p), "--microbatches", str(m),
                   "--stages-per-rank", str(v), "--memory-cap", f"{cap_bytes:g}", *inputs, "-o", out]
        if objective == "span" and self.compile_has_optimizer:
            command += ["--optimizer", "post-validated"]
        if self.compile_has_runtime:
            command += ["--runtime", "ideal"]
        if self.time_budget:
            command += ["--time-budget", str(self.time_budget)]
        start = time.perf_counter()
        run = run_binary(command)
        seconds = time.perf_counter() - start
        if run.returncode != 0:
            return {"error": run.stderr.strip().replace("\n", " | "), "seconds": seconds}
        try:
            makespan, span, peak = self.simulate(out, inputs)
        except (RuntimeError, ValueError, KeyError) as e:
            return {"error": f"simulate: {e}".replace("\n", " | "), "seconds": seconds}
        origin = re.search(r"chose (.*?) \(\d+ candidates?", run.stderr)
        return {"makespan": makespan, "span": span, "peak": peak, "seconds": seconds,
                "origin": origin.group(1) if origin else "?"}

    def check_theirs(self, ranks, inputs):
        """Writes their schedule as a compute-only CSV and simulates it: (makespan, span, peak)."""
        path = os.path.join(self.workdir, "theirs.csv")
        with open(path, "w") as f:
            for rank in range(len(ranks)):
                acts = sorted(ranks[rank], key=lambda a: (a[3], a[4]))
                f.write(",".join(f"{s}{k}{mb}" for s, k, mb, _, _ in acts) + "\n")
        return self.simulate(path, inputs)


# ---- the grids ----

def review_units():
    mixes = [(name, t_f, t_i, t_w, 0) for name, t_f, t_i, t_w in INTEGER_MIXES]
    for name, t_f, t_i, t_w, comm in MEASURED_MIXES:
        mixes += [(name, t_f, t_i, t_w, 0), (name, t_f, t_i, t_w, comm)]
    return [{"p": p, "m": m, "mixes": mixes, "mw": [0.5, 1.0], "refs": REVIEW_REFERENCES}
            for p in (2, 3, 4, 5, 6, 8, 12, 16) for m in (p, p + 1, 2 * p, 3 * p, 4 * p)]


# Mixes where the forward outweighs the input gradient (T_F > T_I), which the review grid lacked.
FORWARD_HEAVY_MIXES = [("2,1,1", 2, 1, 1), ("3,1,0.5", 3, 1, 0.5), ("4,2,1", 4, 2, 1), ("3,2,2", 3, 2, 2)]


def wide_units():
    """Issue 44's widened grid: p up to 32, m up to 8p, T_F > T_I mixes beside two of the review's."""
    mixes = [(name, t_f, t_i, t_w, 0) for name, t_f, t_i, t_w in FORWARD_HEAVY_MIXES + INTEGER_MIXES[:2]]
    mixes += [(name, t_f, t_i, t_w, comm) for name, t_f, t_i, t_w, comm in MEASURED_MIXES[:1]]
    return [{"p": p, "m": m, "mixes": mixes, "mw": [0.5, 1.0], "refs": REVIEW_REFERENCES}
            for p in (4, 7, 10, 16, 24, 32) for m in sorted({p + 2, 3 * p // 2, 5 * p, 8 * p})]


def small_units():
    mixes = [(name, t_f, t_i, t_w, 0) for name, t_f, t_i, t_w in INTEGER_MIXES[:6]]
    return [{"p": p, "m": m, "mixes": mixes, "mw": [0.5], "refs": SMALL_REFERENCES}
            for p in (2, 3, 4, 5, 6, 8, 12, 16) for m in (p, 2 * p, 4 * p)]


def speed_units():
    rows = [(64, 512, "zb.py@p"), (32, 512, "zbv.py@p"), (64, 512, "zbv.py@p"), (128, 2048, "zbv.py@p"),
            (256, 2048, "zb.py@p")]
    return [{"p": p, "m": m, "mixes": [("2,3,1", 2, 3, 1, 0)], "mw": [0.5], "refs": [ref]} for p, m, ref in rows]


def select_references(units, only):
    if not only:
        return units
    wanted = set(only.split(","))
    unknown = wanted - set(REFERENCES) - {fam for fam, _, _ in REFERENCES.values()}
    if unknown:
        raise SystemExit(f"--only: unknown {', '.join(sorted(unknown))}; families: onechunk, zbv, vauto, vhalf, vmin, "
                         f"or names: {', '.join(REFERENCES)}")
    kept = []
    for u in units:
        refs = [r for r in u["refs"] if r in wanted or REFERENCES[r][0] in wanted]
        if refs:
            kept.append(dict(u, refs=refs))
    return kept


# ---- one unit of work: one (p, m), every cost mix, M_W ratio and reference ----

STATE = {}


class Reuse:
    """Memoises the parts of v_auto_schedule and zbv_greedy that do not depend on the costs, so that a
    unit's cost mixes share them: v_auto_schedule's schedule_by_building_block (the repeat, squeeze and
    reorder of one building block; its caller then evaluates the result with the costs) and
    zbv_greedy's PipelineGraph.reorder (which works on unit slots; the costs enter only in
    eager_execution_time after it). Both are deterministic in their arguments, and copies are handed
    out, so the searches return what they return without it (--no-reuse turns it off, to time them)."""

    def __init__(self, mods):
        self.hits = 0
        self.blocks, self.reorders = {}, {}
        va, zg = mods["v_auto_schedule"], mods["zbv_greedy"]
        build = va.schedule_by_building_block
        reorder = zg.PipelineGraph.reorder

        def schedule_by_building_block(p, m, building_block, max_mem, keep_stable_phase=False):
            key = (p, m, tuple(map(tuple, building_block)), max_mem, keep_stable_phase)
            if key in self.blocks:
                self.hits += 1
                s, peak, bubbles = self.blocks[key]
            else:
                s, peak, bubbles = build(p, m, building_block, max_mem, keep_stable_phase)
                s = None if s is None else tuple("".join(row) for row in s)
                self.blocks[key] = (s, peak, list(bubbles))
            return (None if s is None else [list(row) for row in s]), peak, list(bubbles)

        def graph_reorder(graph, stage_result, consider_w):
            key = (graph.n_stage, graph.n_micro, graph.mem_config, consider_w,
                   json.dumps(stage_result, separators=(",", ":")))
            if key in self.reorders:
                self.hits += 1
            else:
                self.reorders[key] = json.dumps(reorder(graph, stage_result, consider_w))
            return json.loads(self.reorders[key])

        va.schedule_by_building_block = schedule_by_building_block
        zg.PipelineGraph.reorder = graph_reorder

    def clear(self):
        self.blocks.clear()
        self.reorders.clear()


def init_worker(repo, binary, workdir, objective, time_budget, grid, reuse):
    STATE["mods"] = load_reference(repo)
    STATE["reuse"] = Reuse(STATE["mods"]) if reuse else None
    sys.setrecursionlimit(1_000_000)  # v_auto_schedule's transform_schedule recurses along dependency chains
    mine = tempfile.mkdtemp(prefix=f"w{os.getpid()}-", dir=workdir)
    STATE["ppsched"] = Ppsched(binary, mine, time_budget)
    STATE["objective"] = objective
    STATE["grid"] = grid


def run_unit(unit):
    reuse = STATE["reuse"]
    rows = []
    for mix in unit["mixes"]:
        rows += run_mix(unit, mix)
    if reuse:
        reuse.clear()
    return rows


def run_mix(unit, mix_costs):
    mods, ours, objective, reuse = STATE["mods"], STATE["ppsched"], STATE["objective"], STATE["reuse"]
    p, m = unit["p"], unit["m"]
    mix, t_f, t_i, t_w, comm = mix_costs
    rows = []
    their_cache = {}  # searches whose memory model does not depend on mw_ratio run once
    our_cache = {}
    for mw in unit["mw"]:
        for ref in unit["refs"]:
            family, v, cap_rule = REFERENCES[ref]
            inputs = ours.inputs(p, v, t_f, t_i, t_w, comm, mw)
            cap = cap_rule(p) if cap_rule else None
            key = ref if family in ("vauto", "vhalf", "vmin") else (ref, mw)
            if key not in their_cache:
                hits = reuse.hits if reuse else 0
                if family == "onechunk":
                    result = their_one_chunk(mods, p, m, t_f, t_i, t_w, comm, mw, cap, objective)
                elif family == "zbv":
                    result = their_zbv(mods, p, m, t_f, t_i, t_w, comm, mw, cap, objective)
                elif family == "vauto":
                    result = their_vauto(mods, p, m, t_f, t_i, t_w, comm, mw, cap, objective)
                else:
                    result = their_zbv_greedy(mods, p, m, t_f, t_i, t_w, comm, family[1:])
                reused = bool(reuse) and reuse.hits > hits
                their_cache[key] = result + (reused,)
            ranks, failures, their_seconds, reused = their_cache[key]
            row = {"grid": STATE["grid"], "objective": objective, "p": p, "m": m, "v": v, "mix": mix, "t_f": t_f,
                   "t_i": t_i, "t_w": t_w, "comm": comm, "mw_ratio": mw, "reference": ref,
                   "their_s": f"{their_seconds:.3f}", "our_optimizer": ours.optimizer(objective)}
            notes = []
            if reused:
                notes.append("their time: cost-independent part reused from an earlier mix")
            theirs = None
            if ranks is not None:
                their_ms, their_sp = measure(ranks)
                try:
                    sim_ms, sim_sp, sim_peak = ours.check_theirs(ranks, inputs)
                except (RuntimeError, ValueError, KeyError) as e:
                    sim_ms = sim_sp = sim_peak = float("nan")
                    notes.append("ppsched cannot simulate theirs: " + str(e)[:200])
                agree = (abs(sim_ms - their_ms) <= 1e-6 * max(1.0, their_ms)
                         and abs(sim_sp - their_sp) <= 1e-6 * max(1.0, their_sp))
                row.update(their_makespan=f"{their_ms:.6g}", their_span=f"{their_sp:.6g}",
                           their_peak=f"{sim_peak / 4:g}",
                           their_check="ok" if agree else f"ppsched finds {sim_ms:.6g}/{sim_sp:.6g}")
                if cap is None and sim_peak == sim_peak:
                    cap = sim_peak / 4  # their own memory, in microbatches
                if sim_peak > 4 * cap + 1e-9:
                    notes.append(f"their peak {sim_peak / 4:g} is over the cap")
                theirs = their_ms if objective == "makespan" else their_sp
                row["their_value"] = f"{theirs:.6g}"
            else:
                notes.append("theirs: " + (failures[0] if failures else "no schedule"))
            if cap is None:
                row["cap"] = ""
                row["verdict"] = "theirs failed"
                row["note"] = "; ".join(notes)
                rows.append(row)
                continue
            cap_bytes = 4 * cap
            row["cap"], row["cap_bytes"] = f"{cap:g}", f"{cap_bytes:g}"
            our_key = (v, cap_bytes, mw)  # per mix
            if our_key not in our_cache:
                our_cache[our_key] = ours.auto(p, m, v, inputs, cap_bytes, objective)
            mine = our_cache[our_key]
            row["our_s"] = f"{mine['seconds']:.3f}"
            if "error" in mine:
                notes.append("ours: " + mine["error"][:300])
                value = None
            else:
                value = mine["makespan"] if objective == "makespan" else mine["span"]
                row.update(our_fields(mine, value))
            if theirs is None:
                verdict = "theirs failed"
            elif value is None:
                verdict = "ours failed"
            else:
                verdict = verdict_of(value, theirs, TOLERANCE * max(1.0, abs(theirs)))
                row["rel_diff"] = f"{(value - theirs) / theirs:+.6f}"
            row["verdict"] = verdict
            row["note"] = "; ".join(notes)
            rows.append(row)
    return rows


def our_fields(mine, value):
    """The CSV fields of one search of ours that finished (Ppsched.auto's result) and its value."""
    return {"our_value": f"{value:.6g}", "our_makespan": f"{mine['makespan']:.6g}", "our_span": f"{mine['span']:.6g}",
            "our_peak": f"{mine['peak'] / 4:g}", "our_origin": mine["origin"]}


def verdict_of(value, theirs, tol):
    return "better" if value < theirs - tol else ("worse" if value > theirs + tol else "same")


def against_worker(binary, workdir, objective, time_budget):
    STATE["ppsched"] = Ppsched(binary, tempfile.mkdtemp(prefix=f"w{os.getpid()}-", dir=workdir), time_budget)
    STATE["objective"] = objective


def recheck_search(key):
    """One search of ours for a configuration of an earlier run: (key, result of Ppsched.auto)."""
    ours = STATE["ppsched"]
    p, m, v, t_f, t_i, t_w, comm, mw, cap_bytes = key
    inputs = ours.inputs(p, v, t_f, t_i, t_w, comm, mw)
    return key, ours.auto(p, m, v, inputs, cap_bytes, STATE["objective"])


def recheck(rows, binary, objective, time_budget, jobs):
    """Runs ppsched's side again for the rows of an earlier run, against their recorded values: a
    change to the search is checked in seconds, without running the authors' searches again."""
    rows = [r for r in rows if r["objective"] == objective and r.get("their_value") and r.get("cap_bytes")]
    def key(r):
        return (int(r["p"]), int(r["m"]), int(r["v"]), float(r["t_f"]), float(r["t_i"]), float(r["t_w"]),
                float(r["comm"]), float(r["mw_ratio"]), float(r["cap_bytes"]))
    keys = sorted({key(r) for r in rows}, key=lambda k: -k[0] * k[1])
    with tempfile.TemporaryDirectory() as workdir:
        init = (binary, workdir, objective, time_budget)
        if jobs > 1:
            with multiprocessing.Pool(jobs, initializer=against_worker, initargs=init) as pool:
                found = dict(pool.imap_unordered(recheck_search, keys))
        else:
            against_worker(*init)
            found = dict(map(recheck_search, keys))
    out = []
    for r in rows:
        r = dict(r)
        mine = found[key(r)]
        theirs = float(r["their_value"])
        r["our_s"] = f"{mine['seconds']:.3f}"
        if "error" in mine:
            r.update(verdict="ours failed", note="ours: " + mine["error"][:300], rel_diff="")
        else:
            value = mine["makespan"] if objective == "makespan" else mine["span"]
            # Their value is recorded to 6 significant digits: half a unit of the last is no difference.
            tol = max(TOLERANCE * max(1.0, abs(theirs)), 5e-6 * abs(theirs))
            r.update(our_fields(mine, value), rel_diff=f"{(value - theirs) / theirs:+.6f}",
                     verdict=verdict_of(value, theirs, tol))
        out.append(r)
    seconds = sorted(float(r["our_s"]) for r in out)
    print(f"{len(keys)} searches of ours again, against {len(out)} recorded values; search time median "
          f"{seconds[len(seconds) // 2]:.3f} s, most {seconds[-1]:.3f} s")
    return out


# ---- output ----

def line(row):
    theirs = row.get("their_value") or "-"
    ours = row.get("our_value") or "-"
    gap = f" {float(row['rel_diff']) * 100:+.2f}%" if row.get("rel_diff") else ""
    return (f"{row['reference']:16} p={row['p']} m={row['m']} v={row['v']} {row['mix']} c={row['comm']} "
            f"mw={row['mw_ratio']} cap={row.get('cap') or '-'} | theirs {theirs} ({row['their_s']} s) | "
            f"ours {ours} ({row.get('our_s') or '-'} s) {row.get('our_origin', '')} | {row['verdict']}{gap}"
            + (f" [{row['note']}]" if row.get("note") else ""))


def print_search_times(rows):
    """ppsched's time per row (the whole compile process, as our_s records it) by size: p x m buckets and
    stages per rank. A row's time is one search, whatever the reference it is compared with, so each
    (p, m, v, mix, mw, cap) counts once."""
    searches = {}
    for r in rows:
        if r.get("our_s"):
            key = (r["p"], r["m"], r["v"], r["mix"], r["mw_ratio"], r["cap"])
            searches[key] = float(r["our_s"])
    if not searches:
        return
    buckets = [(0, 1024), (1024, 4096), (4096, 1 << 40)]
    print("\nppsched's search time (compile process wall, s), median / most, by p x m and chunks per rank:")
    for v in sorted({k[2] for k in searches}):
        for low, high in buckets:
            times = sorted(t for k, t in searches.items() if k[2] == v and low < int(k[0]) * int(k[1]) <= high)
            if times:
                label = f"{low} < p x m <= {high}" if high < (1 << 40) else f"p x m > {low}"
                print(f"  v={v} {label:22} {len(times):5} searches: {times[len(times) // 2]:.3f} / {times[-1]:.3f}")


def summarize(rows):
    if not rows:
        print("no rows")
        return
    objectives = sorted({r["objective"] for r in rows})
    optimizers = sorted({r["our_optimizer"] for r in rows})
    print(f"\nobjective: {', '.join(objectives)}; ppsched compile optimizer: {', '.join(optimizers)}")
    if any("no --optimizer" in o for o in optimizers):
        print("note: this ppsched compile has no --optimizer, so its schedule minimises the makespan; "
              "its span is what is compared")
    refs = [r for r in REFERENCES if any(row["reference"] == r for row in rows)]
    print(f"\n{'reference':18}" + "".join(f"{v:>15}" for v in VERDICTS) + f"{'total':>8}")
    for ref in refs:
        mine = [r for r in rows if r["reference"] == ref]
        print(f"{ref:18}" + "".join(f"{sum(r['verdict'] == v for r in mine):>15}" for v in VERDICTS)
              + f"{len(mine):>8}")
    print(f"{'all':18}" + "".join(f"{sum(r['verdict'] == v for r in rows):>15}" for v in VERDICTS) + f"{len(rows):>8}")
    for ref in refs:
        gaps = [float(r["rel_diff"]) for r in rows if r["reference"] == ref and r.get("rel_diff")]
        if gaps:
            print(f"  {ref}: relative difference ours - theirs: mean {sum(gaps) / len(gaps) * 100:+.3f}%, "
                  f"best {min(gaps) * 100:+.2f}%, worst {max(gaps) * 100:+.2f}%")
    mismatch = [r for r in rows if r.get("their_check") not in (None, "", "ok")]
    if mismatch:
        print(f"\nppsched's simulation of their schedule disagrees with their times in {len(mismatch)} rows:")
        for r in mismatch[:20]:
            print("  " + line(r) + f" ({r['their_check']})")
    worse = sorted((r for r in rows if r["verdict"] == "worse"), key=lambda r: -float(r["rel_diff"]))
    print(f"\nours worse: {len(worse)}")
    for r in worse:
        print("  " + line(r))
    if worse:
        patterns = {"m <= p+1": lambda r: int(r["m"]) <= int(r["p"]) + 1,
                    "T_W < T_F": lambda r: float(r["t_w"]) < float(r["t_f"]),
                    "comm > 0": lambda r: float(r["comm"]) > 0,
                    "mw_ratio 0.5": lambda r: float(r["mw_ratio"]) == 0.5}
        print("  of them: " + ", ".join(f"{name} {sum(f(r) for r in worse)}" for name, f in patterns.items()))
    print_search_times(rows)
    failed = [r for r in rows if r["verdict"] in ("theirs failed", "ours failed")]
    if failed:
        print(f"\nfailed: {len(failed)}")
        groups = {}
        for r in failed:
            why = r.get("note", "")
            why = re.sub(r"\d+", "N", why)[:120]
            groups.setdefault((r["verdict"], r["reference"], why), []).append(r)
        for (verdict, ref, why), group in sorted(groups.items()):
            pm = sorted({(int(r["p"]), int(r["m"])) for r in group})
            print(f"  {verdict}, {ref}, {len(group)} rows ({why}): p,m = "
                  + " ".join(f"{p},{m}" for p, m in pm))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--zb-repo", help="checkout of sail-sg/zero-bubble-pipeline-parallelism")
    ap.add_argument("--ppsched", default="build/app/ppsched")
    ap.add_argument("--grid", choices=["small", "speed", "review", "wide"], default="small")
    ap.add_argument("--objective", choices=["makespan", "span"], default="makespan")
    ap.add_argument("--only", help="comma-separated families (onechunk, zbv, vauto, vhalf, vmin) or reference names")
    ap.add_argument("--p", help="comma-separated rank counts: only these of the grid")
    ap.add_argument("--jobs", type=int, default=1, help="configurations run in parallel processes")
    ap.add_argument("--csv", help="write one row per configuration here")
    ap.add_argument("--no-reuse", action="store_true",
                    help="run every search of theirs in full for every cost mix (slower; for their times)")
    ap.add_argument("--time-budget", type=float, help="passed to ppsched compile --time-budget")
    ap.add_argument("--summarize", metavar="CSV", help="print the summary of an earlier run's CSV and exit")
    ap.add_argument("--against", metavar="CSV",
                    help="run only ppsched's side again, against the values of theirs an earlier run's CSV holds")
    args = ap.parse_args()
    if args.against:
        with open(args.against) as f:
            rows = recheck(list(csv.DictReader(f)), os.path.abspath(args.ppsched), args.objective, args.time_budget,
                           args.jobs)
        if args.csv:
            with open(args.csv, "w", newline="") as out:
                writer = csv.DictWriter(out, fieldnames=FIELDS)
                writer.writeheader()
                writer.writerows(rows)
        summarize(rows)
        return
    if args.summarize:
        with open(args.summarize) as f:
            summarize(list(csv.DictReader(f)))
        return
    if not args.zb_repo:
        ap.error("--zb-repo is required")
    units = {"small": small_units, "speed": speed_units, "review": review_units, "wide": wide_units}[args.grid]()
    units = select_references(units, args.only)
    if args.p:
        units = [u for u in units if u["p"] in {int(x) for x in args.p.split(",")}]
    units.sort(key=lambda u: -u["p"] * u["m"])  # the longest first, for the parallel runs
    binary = os.path.abspath(args.ppsched)
    started = time.time()
    rows = []
    out = open(args.csv, "w", newline="") if args.csv else None
    writer = csv.DictWriter(out, fieldnames=FIELDS) if out else None
    if writer:
        writer.writeheader()
    with tempfile.TemporaryDirectory() as workdir:
        init = (os.path.abspath(args.zb_repo), binary, workdir, args.objective, args.time_budget, args.grid,
                not args.no_reuse)
        probe = Ppsched(binary, workdir)
        print(f"{len(units)} (p, m), {sum(len(u['mixes']) * len(u['refs']) * len(u['mw']) for u in units)} "
              f"comparisons, objective {args.objective}, ppsched compile optimizer {probe.optimizer(args.objective)}, "
              f"{args.jobs} jobs", flush=True)
        if args.jobs > 1:
            pool = multiprocessing.Pool(args.jobs, initializer=init_worker, initargs=init)
            results = pool.imap_unordered(run_unit, units)
        else:
            init_worker(*init)
            pool = None
            results = map(run_unit, units)
        for unit_rows in results:
            for row in unit_rows:
                print(line(row), flush=True)
                if writer:
                    writer.writerow(row)
            if out:
                out.flush()
            rows += unit_rows
        if pool:
            pool.close()
            pool.join()
    if out:  # again, in grid order
        out.seek(0)
        out.truncate()
        writer.writeheader()
        order = {name: k for k, name in enumerate(REFERENCES)}
        rows.sort(key=lambda r: (order[r["reference"]], r["p"], r["m"], r["mix"], r["comm"], r["mw_ratio"]))
        writer.writerows(rows)
        out.close()
    summarize([{k: str(v) for k, v in r.items()} for r in rows])
    print(f"\nwall time {time.time() - started:.0f} s")


if __name__ == "__main__":
    main()
