#!/usr/bin/env python3
"""Write synthetic PyTorch-profiler (Kineto) traces of a pipeline-parallel training run, with ground truth.

One JSON trace per rank (rank<N>_trace.json, or .json.gz for --gzip-ranks), laid out as Kineto writes them
for a torchtitan run driven by PyTorch's _PipelineScheduleRuntime, plus truth.json holding what the traces
must be read back as. Python 3.11 standard library only; deterministic for given arguments.

The event model is self-contained (it does not use ppsched): each rank runs its schedule row in order on one
GPU compute stream; an action's kernels start when the stream is free, their inputs have arrived and the CPU
has launched them. See tests/trace/README.md for the model, the options and truth.json.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import json
import multiprocessing
import os
import random
import re
import sys
import time

# ----------------------------------------------------------------------------------------------------------
# Schedule: PyTorch action strings
# ----------------------------------------------------------------------------------------------------------

COMPUTE = ("F", "B", "I", "W")
COMMS = ("SEND_F", "RECV_F", "SEND_B", "RECV_B")
NO_MB = ("UNSHARD", "RESHARD", "REDUCE_GRAD")
_ACTION_RE = re.compile(r"(\d+)(SEND_F|RECV_F|SEND_B|RECV_B|UNSHARD|RESHARD|REDUCE_GRAD|F|I|B|W)(\d*)")


class Action:
    """One schedule cell. str() gives PyTorch's _Action string: 2F0, 1SEND_F3, 0UNSHARD, (0F7;7B3)OVERLAP_F_B."""

    __slots__ = ("kind", "stage", "mb", "subs", "text")

    def __init__(self, kind, stage, mb, subs=None):
        self.kind, self.stage, self.mb, self.subs = kind, stage, mb, subs
        if subs is not None:
            self.text = "(" + ";".join(a.text for a in subs) + ")" + kind
        else:
            self.text = f"{stage}{kind}" + ("" if mb is None else str(mb))

    def __repr__(self):
        return self.text

    def leaves(self):
        return self.subs if self.subs is not None else (self,)

    @property
    def is_compute(self):
        return self.kind in COMPUTE or self.kind == "OVERLAP_F_B"


def parse_action(cell: str) -> Action | None:
    cell = cell.strip()
    if not cell:
        return None
    if cell.startswith("("):
        close = cell.find(")")
        if close < 0:
            raise ValueError(f"bad action {cell!r}")
        kind = cell[close + 1:]
        if kind != "OVERLAP_F_B":
            raise ValueError(f"bad container action {cell!r}: only (..)OVERLAP_F_B is known")
        subs = tuple(a for a in (parse_action(s) for s in cell[1:close].split(";")) if a is not None)
        for a in subs:
            if a.kind not in COMPUTE:
                raise ValueError(f"bad sub-action {a} in {cell!r}")
        return Action(kind, -1, None, subs)
    m = _ACTION_RE.fullmatch(cell)
    if not m:
        raise ValueError(f"bad action {cell!r}: expected <stage><F|B|I|W|SEND_F|RECV_F|SEND_B|RECV_B>"
                         f"<microbatch> or <stage><UNSHARD|RESHARD|REDUCE_GRAD>")
    stage, kind, mb = int(m.group(1)), m.group(2), m.group(3)
    if kind in NO_MB:
        if mb:
            raise ValueError(f"bad action {cell!r}: {kind} takes no microbatch")
        return Action(kind, stage, None)
    if not mb:
        raise ValueError(f"bad action {cell!r}: {kind} needs a microbatch")
    return Action(kind, stage, int(mb))


def read_schedule(path: str) -> list[list[Action]]:
    rows = []
    with open(path, newline="") as f:
        for row in csv.reader(f):
            rows.append([a for a in (parse_action(c) for c in row) if a is not None])
    while rows and not rows[-1]:
        rows.pop()  # a trailing empty line is not a rank
    if not rows:
        raise ValueError(f"{path}: no ranks")
    return rows


def synth_1f1b(ranks: int, mbs: int) -> list[list[Action]]:
    """The order PyTorch's 1F1B runtime executes: rank r runs P-r warm-up forwards, then B/F pairs, then Bs."""
    rows = []
    for r in range(ranks):
        warm = min(ranks - r, mbs)
        row = [Action("F", r, m) for m in range(warm)]
        f, b = warm, 0
        while b < mbs:
            row.append(Action("B", r, b))
            b += 1
            if f < mbs:
                row.append(Action("F", r, f))
                f += 1
        rows.append(row)
    return rows


class Schedule:
    def __init__(self, rows: list[list[Action]]):
        self.rows = rows
        self.ranks = len(rows)
        self.stage_rank: dict[int, int] = {}
        mbs = set()
        stages = set()
        for r, row in enumerate(rows):
            for a in row:
                if a.stage >= 0:
                    stages.add(a.stage)
                for leaf in a.leaves():
                    if leaf.kind in COMPUTE:
                        prev = self.stage_rank.setdefault(leaf.stage, r)
                        if prev != r:
                            raise ValueError(f"stage {leaf.stage} has compute actions on ranks {prev} and {r}")
                        mbs.add(leaf.mb)
                        stages.add(leaf.stage)
        if not self.stage_rank:
            raise ValueError("the schedule has no compute actions")
        self.stages = max(stages) + 1
        missing = [s for s in range(self.stages) if s not in self.stage_rank]
        if missing:
            raise ValueError(f"stages {missing} have no compute actions, so no rank")
        self.microbatches = max(mbs) + 1
        self.has_comms = any(a.kind in COMMS for row in rows for a in row)
        self.compute_only = all(a.is_compute for row in rows for a in row)
        # validate the order of compute actions per (stage, mb) on each rank: F before I/B, I before W
        seen = set()
        for r, row in enumerate(rows):
            for a in row:
                for leaf in a.leaves():
                    if leaf.kind not in COMPUTE:
                        continue
                    key = (leaf.kind, leaf.stage, leaf.mb)
                    if key in seen:
                        raise ValueError(f"rank {r}: {leaf} appears twice")
                    seen.add(key)
                    if leaf.kind in ("I", "B") and ("F", leaf.stage, leaf.mb) not in seen:
                        raise ValueError(f"rank {r}: {leaf} before its forward")
                    if leaf.kind == "W" and ("I", leaf.stage, leaf.mb) not in seen:
                        raise ValueError(f"rank {r}: {leaf} before its backward-input")

    def peer_of(self, a: Action) -> int:
        s = a.stage
        if a.kind == "SEND_F":
            return self.stage_rank[s + 1]
        if a.kind == "RECV_F":
            return self.stage_rank[s - 1]
        if a.kind == "SEND_B":
            return self.stage_rank[s - 1]
        if a.kind == "RECV_B":
            return self.stage_rank[s + 1]
        raise ValueError(a)


# ----------------------------------------------------------------------------------------------------------
# Lowering a compute-only schedule the way PyTorch's _PipelineScheduleRuntime does (own implementation of
# _add_unshard_reshard, _add_reduce_grad and _add_send_recv from torch/distributed/pipelining/schedules.py)
# ----------------------------------------------------------------------------------------------------------

def lower(sched: Schedule, max_active_stages: int = 3) -> list[list[Action]]:
    n_mb, n_st, s2r = sched.microbatches, sched.stages, sched.stage_rank
    staged = []
    for row in sched.rows:
        # UNSHARD / RESHARD: keep the next `max_active_stages` distinct stages unsharded
        out, active = [], set()
        for i, a in enumerate(row):
            nxt = []
            for b in row[i:]:
                if b.subs is not None:
                    for leaf in b.subs:
                        if leaf.stage not in nxt:
                            nxt.append(leaf.stage)
                    if len(nxt) >= max_active_stages:
                        break
                elif b.stage not in nxt:
                    nxt.append(b.stage)
                    if len(nxt) == max_active_stages:
                        break
            for s in sorted(active):  # PyTorch iterates a set of small ints: ascending here
                if s not in nxt:
                    active.discard(s)
                    out.append(Action("RESHARD", s, None))
            for s in nxt:
                if s not in active:
                    active.add(s)
                    out.append(Action("UNSHARD", s, None))
            out.append(a)
        for s in sorted(active):
            out.append(Action("RESHARD", s, None))
        # REDUCE_GRAD right after the last B/W of each stage
        out2, cnt = [], {}
        for a in out:
            out2.append(a)
            if a.kind in NO_MB:
                continue
            for leaf in a.leaves():
                if leaf.kind in ("B", "W"):
                    cnt[leaf.stage] = cnt.get(leaf.stage, 0) + 1
                    if cnt[leaf.stage] == n_mb:
                        out2.append(Action("REDUCE_GRAD", leaf.stage, None))
        staged.append(out2)

    def has_comms(a):
        if a.kind == "F":
            return a.stage != n_st - 1 and s2r[a.stage + 1] != s2r[a.stage]
        if a.kind in ("I", "B"):
            return a.stage != 0 and s2r[a.stage - 1] != s2r[a.stage]
        return False

    def ready(a, prev):
        if a.kind == "F" and a.stage != 0:
            return ("RECV_F", a.stage, a.mb) in prev or ("F", a.stage - 1, a.mb) in prev
        if a.kind in ("I", "B") and a.stage != n_st - 1:
            return (("RECV_B", a.stage, a.mb) in prev or ("I", a.stage + 1, a.mb) in prev
                    or ("B", a.stage + 1, a.mb) in prev)
        return True

    todo = {r: list(staged[r]) for r in range(len(staged)) if staged[r]}
    result = {r: [] for r in range(len(staged))}
    prev = {r: set() for r in range(len(staged))}
    while todo:
        progress = False
        for r in sorted(todo):
            a = todo[r][0]
            leaves = a.leaves()
            if not all(ready(x, prev[r]) for x in leaves):
                continue
            result[r].append(a)
            for x in leaves:
                prev[r].add((x.kind, x.stage, x.mb))
                if has_comms(x):
                    if x.kind == "F":
                        send, recv = Action("SEND_F", x.stage, x.mb), Action("RECV_F", x.stage + 1, x.mb)
                    else:
                        send, recv = Action("SEND_B", x.stage, x.mb), Action("RECV_B", x.stage - 1, x.mb)
                    result[r].append(send)
                    prev[r].add((send.kind, send.stage, send.mb))
                    rr = s2r[recv.stage]
                    result[rr].append(recv)
                    prev[rr].add((recv.kind, recv.stage, recv.mb))
            todo[r].pop(0)
            if not todo[r]:
                del todo[r]
            progress = True
        if not progress:
            raise ValueError("malformed compute schedule: cannot place the sends/recvs")
    return [result[r] for r in range(len(staged))]


# ----------------------------------------------------------------------------------------------------------
# Costs
# ----------------------------------------------------------------------------------------------------------

def parse_costs(text: str | None, n_stages: int) -> list[dict[str, float]]:
    if text is None:
        spec = {"F": 1000.0, "B": 2000.0, "I": 1000.0, "W": 1000.0}
    elif os.path.exists(text):
        with open(text) as f:
            spec = json.load(f)
    else:
        spec = json.loads(text)
    if isinstance(spec, dict) and "stages" in spec and isinstance(spec["stages"], list):
        spec = spec["stages"]
    if isinstance(spec, dict):
        per = [dict(spec) for _ in range(n_stages)]
    elif isinstance(spec, list):
        if len(spec) != n_stages:
            raise ValueError(f"--costs: {len(spec)} per-stage entries for {n_stages} stages")
        per = [dict(x) for x in spec]
    else:
        raise ValueError("--costs: expected an object {\"F\":..} or a list of them, one per stage")
    out = []
    for s, c in enumerate(per):
        for k in c:
            if k not in COMPUTE:
                raise ValueError(f"--costs: unknown kind {k!r} (stage {s})")
        if "B" not in c and "I" in c and "W" in c:
            c["B"] = c["I"] + c["W"]
        if "B" in c and "I" not in c and "W" not in c:
            c["I"] = c["W"] = c["B"] / 2
        if "F" not in c:
            raise ValueError(f"--costs: stage {s} has no F cost")
        out.append({k: float(v) for k, v in c.items()})
    return out


# ----------------------------------------------------------------------------------------------------------
# The event model (all times integer nanoseconds on the true common clock)
# ----------------------------------------------------------------------------------------------------------

US = 1000
GAP = 4 * US          # CPU gap between consecutive actions
PRE = 6 * US          # CPU time in a PP range before its first launch
POST = 5 * US         # CPU time in a PP range after its last launch
LEAD = 40 * US        # --host-sync: the CPU issues an action about this much before its GPU work can start
LAT = 5 * US          # launch -> earliest kernel start
COMM_CPU = 50 * US    # CPU time of one NCCL p2p call (record_param_comms)
COMM_LAUNCH_AT = 16 * US  # where in that call the kernel is launched
WAIT_CPU = 3 * US     # one cudaStreamWaitEvent
COMPUTE_STREAM = 7
PP_PG_NAME = "1"      # the pipeline process group


class P2P:
    """One p2p transfer: a send kernel on the producer's rank and a recv kernel on the consumer's rank."""
    __slots__ = ("key", "src", "dst", "send_start", "recv_start", "end", "send_launch", "recv_launch",
                 "send_stream", "recv_stream", "label")

    def __init__(self, key, src, dst, label):
        self.key, self.src, self.dst, self.label = key, src, dst, label
        self.send_start = self.recv_start = self.end = None
        self.send_launch = self.recv_launch = None
        self.send_stream = self.recv_stream = None


class Rec:
    """What one PP range did on one rank in one step."""
    __slots__ = ("action", "cpu_start", "cpu_end", "items", "subs")

    def __init__(self, action):
        self.action = action
        self.cpu_start = self.cpu_end = 0
        self.items = []   # CPU-side things in order: ("recv"|"send"|"comm", P2P, t) / ("wait", t) / ("launch", SubRec)
        self.subs = []    # SubRec per compute leaf


class SubRec:
    """The kernels of one compute leaf: back to back on the compute stream."""
    __slots__ = ("leaf", "cost", "nmain", "nfill", "t0", "sp", "gpu_start", "seed", "thread")

    def __init__(self, leaf):
        self.leaf = leaf


def quant(x: float, q: int) -> int:
    return int(round(x / q)) * q


class Model:
    def __init__(self, args, sched: Schedule, rows: list[list[Action]], explicit: bool):
        self.a = args
        self.s = sched
        self.rows = rows
        self.explicit = explicit
        self.q = 1000 if args.ts_format == "int" else 1
        self.transfer = quant(args.transfer_us * US, self.q)
        self.costs = parse_costs(args.costs, sched.stages)

    def cost_of(self, leaf: Action, step: int) -> tuple[int, int, int, str]:
        """(jittered GPU ns, main kernels, filler kernels, rng seed) for one compute leaf in one step."""
        c = self.costs[leaf.stage].get(leaf.kind)
        if c is None or c <= 0:
            raise ValueError(f"--costs gives no positive {leaf.kind} cost for stage {leaf.stage}")
        seed = f"{self.a.seed}:{step}:{leaf.text}"
        rng = random.Random(seed)
        f = rng.uniform(1 - self.a.jitter, 1 + self.a.jitter) if self.a.jitter > 0 else 1.0
        q = self.q
        cost = max(q, quant(c * US * f, q))
        nmain = 1 + rng.randrange(3)
        nfill = self.a.filler
        # every kernel gets at least one quantum; the filler takes at most 30% of the action
        while nfill and nfill * q > cost * 3 // 10:
            nfill //= 2
        while nmain > 1 and nmain * q > cost - (cost * 3 // 10 if nfill else 0):
            nmain -= 1
        return cost, nmain, nfill, seed

    def spacing(self, cost: int, nk: int) -> int:
        return max(self.q, quant(min(6 * US, cost / (2 * nk)), self.q))

    # ---- one step ---------------------------------------------------------------------------------------
    def simulate_step(self, step: int, t_start: int):
        s, q = self.s, self.q
        R = s.ranks
        recs = [[] for _ in range(R)]
        cursor = [t_start + quant(((r * 7) % 23) * US, q) + 30 * US for r in range(R)]
        compute_free = [t_start] * R
        ends: dict[tuple, int] = {}          # ("F"|"G"|"I", stage, mb) -> GPU end of that leaf
        p2p: dict[tuple, P2P] = {}
        comm_free: list[dict[int, int | None]] = [dict() for _ in range(R)]
        idx = [0] * R
        transfers: list[P2P] = []
        s2r = s.stage_rank

        def remote_inputs(leaf):
            """Keys of the p2p transfers this leaf consumes, plus the local ends it needs."""
            rem, loc = [], []
            st, m = leaf.stage, leaf.mb
            if leaf.kind == "F":
                if st > 0:
                    (loc if s2r[st - 1] == s2r[st] else rem).append(("F", st - 1, m))
            elif leaf.kind in ("I", "B"):
                loc.append(("F", st, m))
                if st < s.stages - 1:
                    (loc if s2r[st + 1] == s2r[st] else rem).append(("G", st + 1, m))
            elif leaf.kind == "W":
                loc.append(("I", st, m))
            return rem, loc

        def out_key(leaf):
            if leaf.kind == "F":
                return ("F", leaf.stage, leaf.mb)
            if leaf.kind in ("I", "B"):
                return ("G", leaf.stage, leaf.mb)
            return None

        def sends_of(leaf, r):
            """Implicit mode: the transfers this leaf produces (to another rank)."""
            st = leaf.stage
            if leaf.kind == "F" and st < s.stages - 1 and s2r[st + 1] != r:
                return [(("F", st, leaf.mb), s2r[st + 1])]
            if leaf.kind in ("I", "B") and st > 0 and s2r[st - 1] != r:
                return [(("G", st, leaf.mb), s2r[st - 1])]
            return []

        def try_compute(r, a: Action) -> bool:
            leaves = a.leaves()
            # gather requirements first; return False (without touching state) if some are unknown
            need = []
            for leaf in leaves:
                rem, loc = remote_inputs(leaf)
                lv = []
                for k in loc:
                    if k[0] == "I" and k not in ends:
                        return False
                    if k not in ends:
                        # produced by an earlier leaf of this same action (OVERLAP_F_B) or missing
                        if any(out_key(x) == k for x in leaves):
                            lv.append(k)
                            continue
                        return False
                    lv.append(k)
                rv = []
                for k in rem:
                    if self.explicit:
                        t = p2p.get(("recv", r) + k)
                        if t is None or t.end is None:
                            return False
                    else:
                        t = p2p.get(k)
                        if t is None:
                            return False
                    rv.append(k)
                need.append((leaf, lv, rv))
            rec = Rec(a)
            costs = []
            nk_total = 0
            for leaf, _, _ in need:
                cost, nmain, nfill, seed = self.cost_of(leaf, step)
                costs.append((cost, nmain, nfill, seed))
                nk_total += nmain + nfill
            # first estimate of when the GPU can start the first leaf
            leaf0, lv0, rv0 = need[0]
            est = compute_free[r]
            for k in lv0:
                if k in ends:
                    est = max(est, ends[k])
            for k in rv0:
                if self.explicit:
                    est = max(est, p2p[("recv", r) + k].end)
                else:
                    est = max(est, p2p[k].send_start + self.transfer)
            n_recv = 0 if self.explicit else sum(len(rv) for _, _, rv in need)
            sp_all = [self.spacing(c[0], c[1] + c[2]) for c in costs]
            lead = LEAD + PRE + n_recv * COMM_CPU + sum(sp * (c[1] + c[2]) for sp, c in zip(sp_all, costs))
            t = max(cursor[r] + GAP, est - lead) if self.a.host_sync else cursor[r] + GAP
            t = quant(t, q) if t % q else t
            rec.cpu_start = t
            t += PRE
            for (leaf, lv, rv), (cost, nmain, nfill, seed), sp in zip(need, costs, sp_all):
                ready = compute_free[r]
                for k in lv:
                    ready = max(ready, ends[k])
                for k in rv:
                    if self.explicit:
                        tr = p2p[("recv", r) + k]
                    else:
                        tr = p2p[k]
                        # the recv is posted now, from inside this PP range
                        tr.recv_launch = t + COMM_LAUNCH_AT
                        tr.recv_start = tr.recv_launch + LAT
                        tr.end = max(tr.send_start, tr.recv_start) + self.transfer
                        rec.items.append(("recv", tr, t))
                        t += COMM_CPU
                    ready = max(ready, tr.end)
                for k in rv:
                    rec.items.append(("wait", t))
                    t += WAIT_CPU
                sub = SubRec(leaf)
                sub.cost, sub.nmain, sub.nfill, sub.seed, sub.sp = cost, nmain, nfill, seed, sp
                sub.t0 = t
                sub.thread = "bwd" if (self.a.backward_thread and leaf.kind in ("B", "I", "W")) else "main"
                nk = nmain + nfill
                last_launch = t + (nk - 1) * sp
                t += nk * sp
                sub.gpu_start = max(ready, last_launch + LAT)
                end = sub.gpu_start + cost
                compute_free[r] = end
                ok = out_key(leaf)
                if ok is not None:
                    ends[ok] = end
                if leaf.kind == "I":
                    ends[("I", leaf.stage, leaf.mb)] = end
                rec.items.append(("launch", sub))
                rec.subs.append(sub)
                if not self.explicit:
                    for key, dst in sends_of(leaf, r):
                        tr = P2P(key, r, dst, key[0])
                        tr.send_launch = t + COMM_LAUNCH_AT
                        tr.send_start = max(end, tr.send_launch + LAT)
                        p2p[key] = tr
                        transfers.append(tr)
                        rec.items.append(("send", tr, t))
                        t += COMM_CPU
            rec.cpu_end = t + POST
            cursor[r] = rec.cpu_end
            recs[r].append(rec)
            return True

        def try_comm(r, a: Action) -> bool:
            peer = s.peer_of(a)
            free = comm_free[r].get(queue(peer), t_start)
            if free is None:
                return False  # the previous kernel on this stream waits for its partner
            if a.kind in ("SEND_F", "SEND_B"):
                src_stage = a.stage
                role = "send"
            else:
                src_stage = a.stage - 1 if a.kind == "RECV_F" else a.stage + 1
                role = "recv"
            fam = "F" if a.kind.endswith("_F") else "G"
            key = (fam, src_stage, a.mb)
            tr = p2p.get(key)
            if tr is None:
                if role == "send":
                    tr = P2P(key, r, peer, fam)
                else:
                    tr = P2P(key, peer, r, fam)
                p2p[key] = tr
                transfers.append(tr)
            if (role == "send" and tr.send_start is not None) or (role == "recv" and tr.recv_start is not None):
                raise ValueError(f"rank {r}: {a} appears twice")
            est = max(free, compute_free[r])
            rec = Rec(a)
            t = max(cursor[r] + GAP, est - LEAD - COMM_LAUNCH_AT) if self.a.host_sync else cursor[r] + GAP
            rec.cpu_start = t
            launch = t + PRE + COMM_LAUNCH_AT
            start = max(launch + LAT, est)
            stream = comm_stream_id(r, peer)
            if role == "send":
                tr.send_launch, tr.send_start, tr.send_stream = launch, start, stream
            else:
                tr.recv_launch, tr.recv_start, tr.recv_stream = launch, start, stream
                p2p[("recv", r) + key] = tr
            rec.items.append(("comm", tr, t + PRE, role))
            rec.cpu_end = t + PRE + COMM_CPU + POST
            cursor[r] = rec.cpu_end
            if tr.send_start is not None and tr.recv_start is not None:
                tr.end = max(tr.send_start, tr.recv_start) + self.transfer
                comm_free[tr.src][queue(tr.dst)] = tr.end
                comm_free[tr.dst][queue(tr.src)] = tr.end
            else:
                comm_free[r][queue(peer)] = None
            recs[r].append(rec)
            return True

        def try_other(r, a: Action) -> bool:
            rec = Rec(a)
            rec.cpu_start = cursor[r] + GAP
            rec.cpu_end = rec.cpu_start + 12 * US
            cursor[r] = rec.cpu_end
            recs[r].append(rec)
            return True

        def queue(peer):
            # --p2p-streams per-rank: every p2p kernel of a rank on one stream, in program order (one
            # communicator, as batch_isend_irecv coalesces on the group's); per-pair: one per peer
            return -1 if self.a.p2p_streams == "per-rank" else peer

        def comm_stream_id(r, peer):
            # one NCCL stream per peer pair, as ProcessGroupNCCL keys p2p communicators by the rank pair
            if self.a.p2p_streams == "per-rank":
                return 24
            return 20 + 4 * (1 + (peer - r if peer > r else (r - peer) + R))

        pending = sum(len(x) for x in self.rows)
        while pending:
            progressed = False
            for r in range(R):
                row = self.rows[r]
                while idx[r] < len(row):
                    a = row[idx[r]]
                    if a.is_compute:
                        ok = try_compute(r, a)
                    elif a.kind in COMMS:
                        if not self.explicit:
                            raise ValueError(f"rank {r}: {a} in a schedule treated as compute-only")
                        ok = try_comm(r, a)
                    else:
                        ok = try_other(r, a)
                    if not ok:
                        break
                    idx[r] += 1
                    pending -= 1
                    progressed = True
            if not progressed:
                stuck = {r: str(self.rows[r][idx[r]]) for r in range(R) if idx[r] < len(self.rows[r])}
                raise ValueError(f"the schedule deadlocks in step {step}: next actions {stuck}")
        for tr in transfers:
            if tr.end is None:
                raise ValueError(f"unmatched p2p {tr.key} between ranks {tr.src} and {tr.dst}")
        return recs, transfers


def assign_pool_streams(transfers_by_rank: dict[int, list[tuple[P2P, str]]]):
    """Implicit mode: put each rank's NCCL kernels on as few streams as needed so none overlap."""
    for r, items in transfers_by_rank.items():
        items.sort(key=lambda it: (it[0].send_start if it[1] == "send" else it[0].recv_start))
        lanes: list[int] = []
        for tr, role in items:
            start = tr.send_start if role == "send" else tr.recv_start
            for i, last in enumerate(lanes):
                if last <= start:
                    lanes[i] = tr.end
                    break
            else:
                i = len(lanes)
                lanes.append(tr.end)
            sid = 24 + 4 * i
            if role == "send":
                tr.send_stream = sid
            else:
                tr.recv_stream = sid


# ----------------------------------------------------------------------------------------------------------
# Kernel durations (re-derived at emission from the leaf's seed, so the model keeps no per-kernel state)
# ----------------------------------------------------------------------------------------------------------

def split_cost(cost: int, nmain: int, nfill: int, seed: str, q: int) -> list[int]:
    rng = random.Random(seed + ":split")
    fill_total = (cost * 3 // 10) // (nfill * q) * (nfill * q) if nfill else 0
    each = fill_total // nfill if nfill else 0
    main_total = cost - fill_total
    w = [rng.uniform(0.5, 1.5) for _ in range(nmain)]
    parts, acc = [], 0
    units = main_total // q
    for i in range(nmain - 1):
        u = max(1, int(units * w[i] / sum(w)))
        parts.append(u * q)
        acc += u * q
    parts.append(main_total - acc)
    out = []
    # main kernels interleaved with the filler: main[0], fill..., main[1], fill..., ...
    per = nfill // nmain
    extra = nfill - per * nmain
    for i, p in enumerate(parts):
        out.append(p)
        out.extend([each] * (per + (1 if i < extra else 0)))
    return out


# ----------------------------------------------------------------------------------------------------------
# Writing Kineto JSON
# ----------------------------------------------------------------------------------------------------------

MAIN_KERNELS = {
    "F": ["nvjet_tst_256x128_64x4_2x1_v_bz_coopA_TNN",
          "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, "
          "cutlass::bfloat16_t, Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, true, "
          "false, false, true, true, false, false>(pytorch_flash::Flash_fwd_params)",
          "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_tn"],
    "B": ["void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<128, 64, "
          "128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 8, "
          "cutlass::bfloat16_t> >, false, false, false, false, false, true, false, false>"
          "(pytorch_flash::Flash_bwd_params)",
          "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_"
          "kernel__5x_cublas",
          "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_nt"],
    "W": ["sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_"
          "kernel__5x_cublas",
          "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_nt",
          "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, "
          "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, "
          "at::detail::Array<char*, 3>)"],
}
MAIN_KERNELS["I"] = MAIN_KERNELS["B"]
FILL_KERNEL = ("void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x1_tn_align8>"
               "(cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x1_tn_align8::Params)")
NCCL_KERNEL = "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)"
OPT_KERNEL = ("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)"
              "::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, "
              "(at::native::ADAM_MODE)1, false>, bool, float*, double, double, double, double, double, bool, "
              "float*, float*>(at::native::(anonymous namespace)::TensorListMetadata<4>, at::native::(anonymous "
              "namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, bool, float*, double, "
              "double, double, double, double, bool, float*, float*)")
KERNEL_SHAPE = {  # registers, shared memory, blocks/SM, warps/SM, grid, block, occupancy
    "main": (168, 213248, 1.0, 12.0, "[132, 1, 1]", "[384, 1, 1]", 19),
    "fill": (64, 16384, 2.0, 8.0, "[264, 1, 1]", "[128, 1, 1]", 12),
    "nccl": (96, 99120, 0.015152, 0.545455, "[2, 1, 1]", "[576, 1, 1]", 0),
    "opt": (54, 0, 7.757576, 31.030304, "[1024, 1, 1]", "[128, 1, 1]", 48),
}
H100 = ('{{\n      "id": {i}, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85045477376,\n'
        '      "computeMajor": 9, "computeMinor": 0,\n'
        '      "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,\n'
        '      "regsPerBlock": 65536, "warpSize": 32,\n'
        '      "sharedMemPerBlock": 49152, "numSms": 132\n'
        '    , "regsPerMultiprocessor": 65536, "sharedMemPerBlockOptin": 232448, '
        '"sharedMemPerMultiprocessor": 233472\n    }}')
BASE_NS = 1735689600 * 10**9          # baseTimeNanoseconds (2025-01-01T00:00:00Z)
T0_NS = 1209600 * 10**9 + 123456789   # the first event: 14 days after the base, as true-clock ns since BASE_NS


class Writer:
    """Formats one rank's events the way Kineto lays them out."""

    def __init__(self, rank, cfg, offset_ns):
        self.rank = rank
        self.cfg = cfg
        self.off = offset_ns
        self.int_ts = cfg["ts_format"] == "int"
        self.pid = 1_000_003 + 7919 * rank
        self.tid_main = self.pid
        self.tid_bwd = self.pid + 137
        self.dev = rank % cfg["gpus_per_node"]
        self.ext = 0
        self.rfid = 0
        self.evidx = 0
        self.corr = 1000 + rank  # correlation ids are per process
        self.cpu: list[str] = []
        self.gpu: list[str] = []
        self.gpu_ann: list[str] = []
        self.names: dict[str, str] = {}
        self.streams: set[int] = set()
        self.used_bwd = False
        self.kernel_count = 0

    def T(self, ns: int) -> str:
        ns += self.off
        if self.int_ts:
            return str((BASE_NS + ns) // 1000)
        return "%d.%03d" % divmod(ns, 1000)

    def D(self, ns: int) -> str:
        if self.int_ts:
            return str(ns // 1000)
        return "%d.%03d" % divmod(ns, 1000)

    def J(self, s: str) -> str:
        j = self.names.get(s)
        if j is None:
            j = self.names[s] = json.dumps(s)
        return j

    def next_ids(self):
        self.ext += 1
        self.rfid += 1
        self.evidx += 1
        return self.ext

    def x(self, out, cat, name, pid, tid, ts, dur, args):
        out.append('  {\n    "ph": "X", "cat": "%s", "name": %s, "pid": %s, "tid": %s,\n    "ts": %s, "dur": %s,\n'
                   '    "args": {\n      %s\n    }\n  }' % (cat, self.J(name), pid, tid, self.T(ts), self.D(dur), args))

    def op(self, cat, name, tid, ts, dur, extra=""):
        e = self.next_ids()
        self.x(self.cpu, cat, name, self.pid, tid, ts, dur,
               '"External id": %d,"Record function id": %d, "Ev Idx": %d%s' % (e, self.rfid, self.evidx, extra))
        return e

    def runtime(self, name, cbid, tid, ts, dur, ext):
        self.corr += 1
        c = self.corr
        self.x(self.gpu, "cuda_runtime", name, self.pid, tid, ts, dur,
               '"External id": %d,      "cbid": %d, "correlation": %d' % (ext, cbid, c))
        return c

    def kernel(self, name, shape, stream, ts, dur, tid, launch_ts, launch_dur, ext, launch_name="cudaLaunchKernel",
               cbid=211, extra=""):
        """A kernel with its launch and the ac2g flow pair, in Kineto's order: kernel, f, runtime, s."""
        self.corr += 1
        c = self.corr
        regs, smem, bps, wps, grid, block, occ = KERNEL_SHAPE[shape]
        self.streams.add(stream)
        self.kernel_count += 1
        g = self.gpu
        g.append('  {\n    "ph": "X", "cat": "kernel", "name": %s, "pid": %d, "tid": %d,\n    "ts": %s, "dur": %s,\n'
                 '    "args": {\n      "External id": %d,      "queued": 0, "device": %d, "context": 1,      '
                 '"stream": %d, "correlation": %d,      "registers per thread": %d,      "shared memory": %d,      '
                 '"blocks per SM": %s,      "warps per SM": %s,      "grid": %s,      "block": %s,      '
                 '"est. achieved occupancy %%": %d%s\n    }\n  }'
                 % (self.J(name), self.dev, stream, self.T(ts), self.D(dur), ext, self.dev, stream, c, regs, smem,
                    bps, wps, grid, block, occ, extra))
        g.append('  {\n    "ph": "f", "id": %d, "pid": %d, "tid": %d, "ts": %s,\n    "cat": "ac2g", "name": "ac2g", '
                 '"bp": "e"\n  }' % (c, self.dev, stream, self.T(ts)))
        g.append('  {\n    "ph": "X", "cat": "cuda_runtime", "name": "%s", "pid": %d, "tid": %d,\n    "ts": %s, '
                 '"dur": %s,\n    "args": {\n      "External id": %d,      "cbid": %d, "correlation": %d\n    }\n  }'
                 % (launch_name, self.pid, tid, self.T(launch_ts), self.D(launch_dur), ext, cbid, c))
        g.append('  {\n    "ph": "s", "id": %d, "pid": %d, "tid": %d, "ts": %s,\n    "cat": "ac2g", "name": "ac2g"\n'
                 '  }' % (c, self.pid, tid, self.T(launch_ts)))

    def memcpy(self, launch_ts, launch_dur, ts, dur, ext):
        self.corr += 1
        c = self.corr
        self.streams.add(COMPUTE_STREAM)
        g = self.gpu
        g.append('  {\n    "ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pinned -> Device)", "pid": %d, '
                 '"tid": %d,\n    "ts": %s, "dur": %s,\n    "args": {\n      "External id": %d,      "device": %d, '
                 '"context": 1,      "stream": %d, "correlation": %d,      "bytes": 262144,      '
                 '"memory bandwidth (GB/s)": %.6f\n    }\n  }'
                 % (self.dev, COMPUTE_STREAM, self.T(ts), self.D(dur), ext, self.dev, COMPUTE_STREAM, c,
                    262144 / dur))
        g.append('  {\n    "ph": "f", "id": %d, "pid": %d, "tid": %d, "ts": %s,\n    "cat": "ac2g", "name": "ac2g", '
                 '"bp": "e"\n  }' % (c, self.dev, COMPUTE_STREAM, self.T(ts)))
        g.append('  {\n    "ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": %d, "tid": %d,\n'
                 '    "ts": %s, "dur": %s,\n    "args": {\n      "External id": %d,      "cbid": 41, '
                 '"correlation": %d\n    }\n  }' % (self.pid, self.tid_main, self.T(launch_ts), self.D(launch_dur), ext, c))
        g.append('  {\n    "ph": "s", "id": %d, "pid": %d, "tid": %d, "ts": %s,\n    "cat": "ac2g", "name": "ac2g"\n'
                 '  }' % (c, self.pid, self.tid_main, self.T(launch_ts)))

    def gpu_annotation(self, name, stream, ts, dur, ext):
        self.x(self.gpu_ann, "gpu_user_annotation", name, self.dev, stream, ts, dur, '"External id": %d' % ext)


def emit_rank(job):
    """Write one rank's trace file; returns (path, bytes, kernels, per-step kernel spans)."""
    rank, cfg, steps, path = job
    q = cfg["q"]
    w = Writer(rank, cfg, cfg["offsets"].get(rank, 0))
    R = cfg["ranks"]
    pp_ranks = "[" + ", ".join(str(i) for i in range(R)) + "]"
    spans = []
    for st in steps:
        k_first, k_last = None, None
        w.op("user_annotation", "ProfilerStep#%d" % st["number"], w.tid_main, st["cpu_begin"][rank],
             st["cpu_end"][rank] - st["cpu_begin"][rank])
        if rank == cfg["input_rank"]:
            # the input batch goes to the GPU before the first PP range (a gpu_memcpy outside every PP range)
            t = st["cpu_begin"][rank] + 4 * US
            e = w.op("cpu_op", "aten::_to_copy", w.tid_main, t, 20 * US)
            w.memcpy(t + 6 * US, 8 * US, t + 11 * US, 8 * US, e)
        for rec in st["recs"][rank]:
            a = rec.action
            label = "PP:" + a.text
            pp_ext = None
            if cfg["pp"]:
                pp_ext = w.op("user_annotation", label, w.tid_main, rec.cpu_start, rec.cpu_end - rec.cpu_start)
            ann_streams: dict[int, list[int]] = {}

            def note(stream, ts, end):
                span = ann_streams.get(stream)
                if span is None:
                    ann_streams[stream] = [ts, end]
                else:
                    span[0] = min(span[0], ts)
                    span[1] = max(span[1], end)

            for item in rec.items:
                tag = item[0]
                if tag == "wait":
                    ext = pp_ext if pp_ext is not None else 0
                    w.runtime("cudaStreamWaitEvent", 147, w.tid_main, item[1], 2 * US, ext)
                elif tag in ("recv", "send", "comm"):
                    tr, t = item[1], item[2]
                    role = item[3] if tag == "comm" else tag
                    peer = tr.dst if role == "send" else tr.src
                    ext = w.op("cpu_op", "record_param_comms", w.tid_main, t, COMM_CPU - 4 * US,
                               ', "Collective name": "%s", "dtype": "BFloat16", "In msg nelems": 16777216, '
                               '"Out msg nelems": 16777216, "Group size": %d, "Process Group Name": "%s", '
                               '"Process Group Description": "pp", "Process Group Ranks": "%s", '
                               '"In split size": "[]", "Out split size": "[]", "Global rank start": 0, '
                               '"Global rank stride": 1' % (role, R, PP_PG_NAME, pp_ranks))
                    nccl_name = ("nccl:send %d->%d" % (rank, peer)) if role == "send" else (
                        "nccl:recv %d<-%d" % (rank, peer))
                    nccl_ext = w.op("user_annotation", nccl_name, w.tid_main, t + 2 * US, COMM_CPU - 10 * US)
                    w.runtime("cudaEventRecord", 135, w.tid_main, t + 6 * US, 2 * US, ext)
                    w.runtime("cudaStreamWaitEvent", 147, w.tid_main, t + 10 * US, 2 * US, ext)
                    if role == "send":
                        start, stream, launch = tr.send_start, tr.send_stream, tr.send_launch
                    else:
                        start, stream, launch = tr.recv_start, tr.recv_stream, tr.recv_launch
                    assert launch == t + COMM_LAUNCH_AT, (launch, t)
                    w.kernel(NCCL_KERNEL, "nccl", stream, start, tr.end - start, w.tid_main, launch, 12 * US, ext,
                             "cudaLaunchKernelExC", 430,
                             ', "Collective name": "%s", "In msg nelems": 16777216, "Out msg nelems": 16777216, '
                             '"Group size": %d, "dtype": "BFloat16", "In split size": "[]", "Out split size": "[]", '
                             '"Process Group Name": "%s", "Process Group Description": "pp", '
                             '"Process Group Ranks": "%s"' % (role, R, PP_PG_NAME, pp_ranks))
                    w.runtime("cudaEventRecord", 135, w.tid_main, t + 30 * US, 2 * US, ext)
                    if cfg["gpu_ann"]:
                        w.gpu_annotation(nccl_name, stream, start, tr.end - start, nccl_ext)
                        if tag == "comm" and pp_ext is not None:
                            note(stream, start, tr.end)
                    k_first = start if k_first is None else min(k_first, start)
                    k_last = tr.end if k_last is None else max(k_last, tr.end)
                elif tag == "launch":
                    sub = item[1]
                    durs = split_cost(sub.cost, sub.nmain, sub.nfill, sub.seed, q)
                    tid = w.tid_main
                    base_ext = pp_ext if pp_ext is not None else 0
                    nk = len(durs)
                    if sub.thread == "bwd":
                        tid = w.tid_bwd
                        w.used_bwd = True
                        base_ext = w.op("cpu_op", "autograd::engine::evaluate_function: MmBackward0", tid,
                                        sub.t0, nk * sub.sp)
                    kind = sub.leaf.kind
                    names = MAIN_KERNELS[kind]
                    t = sub.t0
                    gt = sub.gpu_start
                    rdur = max(q, quant(sub.sp * 6 // 10, q))
                    mi = 0
                    for i, d in enumerate(durs):
                        if mi < sub.nmain and is_main_index(i, sub.nmain, sub.nfill):
                            w.kernel(names[mi % len(names)], "main", COMPUTE_STREAM, gt, d, tid, t, rdur, base_ext)
                            mi += 1
                        else:
                            e = w.op("cpu_op", "aten::mm", tid, t, sub.sp)
                            w.kernel(FILL_KERNEL, "fill", COMPUTE_STREAM, gt, d, tid, t, rdur, e)
                        t += sub.sp
                        gt += d
                    note(COMPUTE_STREAM, sub.gpu_start, gt)
                    k_first = sub.gpu_start if k_first is None else min(k_first, sub.gpu_start)
                    k_last = gt if k_last is None else max(k_last, gt)
            if cfg["gpu_ann"] and pp_ext is not None:
                for stream, (b, e) in sorted(ann_streams.items()):
                    w.gpu_annotation(label, stream, b, e - b, pp_ext)
        opt = st["opt"][rank]
        if opt is not None:
            t0, g0, gdur = opt
            e = w.op("user_annotation", "Optimizer.step#AdamW.step", w.tid_main, t0, 60 * US)
            half = gdur // 2 // q * q
            w.kernel(OPT_KERNEL, "opt", COMPUTE_STREAM, g0, half, w.tid_main, t0 + 10 * US, 8 * US, e)
            w.kernel(OPT_KERNEL, "opt", COMPUTE_STREAM, g0 + half, gdur - half, w.tid_main, t0 + 30 * US, 8 * US, e)
        spans.append((k_first, k_last))

    # metadata and the profiler's own events
    t_meta = cfg["trace_begin"] + 1000 * US
    meta = []
    proc = "python3.11"

    def m(name, pid, tid, arg):
        meta.append('  {\n    "name": "%s", "ph": "M", "ts": %s, "pid": %s, "tid": %s,\n    "args": {\n      %s\n'
                    '    }\n  }' % (name, w.T(t_meta), pid, tid, arg))

    m("process_name", w.pid, 0, '"name": "%s"' % proc)
    m("process_labels", w.pid, 0, '"labels": "CPU"')
    m("process_sort_index", w.pid, 0, '"sort_index": %d' % w.pid)
    m("process_name", w.dev, 0, '"name": "%s"' % proc)
    m("process_labels", w.dev, 0, '"labels": "GPU %d"' % w.dev)
    m("process_sort_index", w.dev, 0, '"sort_index": %d' % (16777216 + w.dev))
    for sid in sorted(w.streams):
        m("thread_name", w.dev, sid, '"name": "stream %d "' % sid)
        m("thread_sort_index", w.dev, sid, '"sort_index": %d' % sid)
    m("thread_name", w.pid, w.tid_main, '"name": "thread %d (pt_main_thread)"' % w.tid_main)
    m("thread_sort_index", w.pid, w.tid_main, '"sort_index": %d' % w.tid_main)
    if w.used_bwd:
        m("thread_name", w.pid, w.tid_bwd, '"name": "thread %d (pt_autograd_0)"' % w.tid_bwd)
        m("thread_sort_index", w.pid, w.tid_bwd, '"sort_index": %d' % w.tid_bwd)
    tb, te = cfg["trace_begin"], cfg["trace_end"]
    tail = [
        '  {\n    "ph": "X", "cat": "Trace", "ts": %s, "dur": %s,\n    "pid": "Spans", "tid": "PyTorch Profiler",\n'
        '    "name": "PyTorch Profiler (0)",\n    "args": {\n      "Op count": 0\n    }\n  }' % (w.T(tb), w.D(te - tb)),
        '  {\n    "name": "process_sort_index", "ph": "M", "ts": %s,\n    "pid": "Spans", "tid": 0,\n    "args": {\n'
        '      "sort_index": 536870912\n    }\n  }' % w.T(tb),
        '  {\n    "name": "Iteration Start: PyTorch Profiler", "ph": "i", "s": "g",\n    "pid": "Traces", '
        '"tid": "Trace PyTorch Profiler", "ts": %s\n  }' % w.T(tb),
        '  {\n    "name": "Record Window End", "ph": "i", "s": "g",\n    "pid": "", "tid": "", "ts": %s\n  }' % w.T(te),
    ]

    ndev = cfg["gpus_per_node"]
    dist = {"backend": "nccl", "rank": rank, "world_size": R, "pg_count": 2,
            "pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl", "pg_size": R,
                           "ranks": list(range(R))},
                          {"pg_name": PP_PG_NAME, "pg_desc": "pp", "backend_config": "cuda:nccl", "pg_size": R,
                           "ranks": list(range(R))}],
            "nccl_version": "2.21.5"}
    head = ('{\n  "schemaVersion": 1,\n  "deviceProperties": [\n    '
            + ",\n    ".join(H100.format(i=i) for i in range(ndev)) + "\n  ],\n"
            + '  "cupti_version": 24, "cuda_runtime_version": 12040, "cuda_driver_version": 12040,\n'
            + '  "distributedInfo": ' + json.dumps(dist) + ",\n"
            + '  "record_shapes": 0,\n'
            + '  "traceEvents": [\n')
    if cfg["int_no_base"]:
        foot = ('\n  ],\n  "traceName": "%s",\n  "displayTimeUnit": "ms"\n}\n' % path.rsplit("/", 1)[-1])
    else:
        foot = ('\n  ],\n  "traceName": "%s",\n  "displayTimeUnit": "ms",\n  "baseTimeNanoseconds": %d\n}\n'
                % (path.rsplit("/", 1)[-1], BASE_NS))
    parts = w.cpu + w.gpu + w.gpu_ann + meta + tail
    if path.endswith(".gz"):
        # no file name and mtime 0 in the gzip header, so the bytes depend on the arguments only
        raw = open(path, "wb")
        f = io.TextIOWrapper(gzip.GzipFile(filename="", mode="wb", compresslevel=6, fileobj=raw, mtime=0),
                             encoding="utf-8")
        f.raw_file = raw
    else:
        f = open(path, "w", encoding="utf-8", buffering=1 << 22)
    with f:
        f.write(head)
        chunk = 20000
        for i in range(0, len(parts), chunk):
            if i:
                f.write(",\n")
            f.write(",\n".join(parts[i:i + chunk]))
        f.write(foot)
    if path.endswith(".gz"):
        f.raw_file.close()
    return path, os.path.getsize(path), w.kernel_count, spans


def is_main_index(i: int, nmain: int, nfill: int) -> bool:
    """Position i in split_cost's order is a main kernel (main[0], fill.., main[1], fill.., ...)."""
    per = nfill // nmain
    extra = nfill - per * nmain
    pos = 0
    for k in range(nmain):
        if i == pos:
            return True
        pos += 1 + per + (1 if k < extra else 0)
        if i < pos:
            return False
    return False


# ----------------------------------------------------------------------------------------------------------
# Driver
# ----------------------------------------------------------------------------------------------------------

def parse_rank_map(text: str | None, ranks: int, what: str) -> dict[int, float]:
    out = {}
    if not text:
        return out
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        r, _, v = part.partition(":")
        r = int(r)
        if not 0 <= r < ranks:
            raise ValueError(f"{what}: rank {r} out of range 0..{ranks - 1}")
        out[r] = float(v)
    return out


def parse_rank_list(text: str | None, ranks: int, what: str) -> set[int]:
    if not text:
        return set()
    out = set()
    for part in text.split(","):
        if part.strip():
            r = int(part)
            if not 0 <= r < ranks:
                raise ValueError(f"{what}: rank {r} out of range 0..{ranks - 1}")
            out.add(r)
    return out


_JOB_CTX = None


def _emit_job(i):
    return emit_rank(_JOB_CTX[i])


def us(ns: int) -> float:
    return round(ns / 1000.0, 3)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--schedule", help="PyTorch pipeline CSV, one row per rank")
    p.add_argument("--synth-1f1b", metavar="RANKS,MB", help="instead of --schedule: PyTorch's 1F1B order "
                   "for RANKS ranks and MB microbatches (also written to OUT/schedule.csv)")
    p.add_argument("--costs", help='GPU time per action in us: JSON text or file, {"F":..,"B":..,"I":..,"W":..} '
                   'for every stage or a list with one such object per stage (default F 1000, B 2000, I 1000, '
                   'W 1000; B defaults to I+W, I and W to B/2)')
    p.add_argument("--transfer-us", type=float, default=50.0, help="time of one p2p message (default 50)")
    p.add_argument("--steps", type=int, default=2, help="profiled steps (default 2)")
    p.add_argument("--first-step", type=int, default=4, help="number of the first ProfilerStep#N (default 4)")
    p.add_argument("--jitter", type=float, default=0.0, help="each action's GPU time times a factor in "
                   "[1-j, 1+j] (default 0)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--clock-offset-us", help="R1:OFF,R2:OFF - shift every timestamp of rank R's file by OFF us")
    p.add_argument("--gzip-ranks", help="comma list of ranks written as rank<N>_trace.json.gz")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--filler", type=int, default=0, help="N extra aten::mm cpu_op + cudaLaunchKernel + kernel "
                   "per compute action (to make big files)")
    p.add_argument("--no-pp-annotations", action="store_true", help="omit the PP: ranges")
    p.add_argument("--gpu-annotations", action="store_true", help="also write gpu_user_annotation events")
    p.add_argument("--lower", action="store_true", help="lower a compute-only CSV the way PyTorch's runtime does "
                   "(UNSHARD/RESHARD, REDUCE_GRAD, SEND_*/RECV_* actions with their own PP: ranges)")
    p.add_argument("--backward-thread", action="store_true", help="launch B/I/W kernels from the autograd "
                   "thread (pt_autograd_0), as real runs do; the PP: ranges stay on the main thread")
    p.add_argument("--host-sync", action="store_true", help="the CPU issues each action only about 40 us "
                   "before its GPU work can start, as a host that synchronizes with its GPU (host launch gaps "
                   "appear); default: the CPU runs ahead, as PyTorch's non-blocking NCCL calls let it")
    p.add_argument("--p2p-streams", choices=["per-pair", "per-rank"], default="per-pair",
                   help="with comms: one NCCL stream per peer pair (default), or one per rank in program order")
    p.add_argument("--gpus-per-node", type=int, default=1, help="rank r uses GPU r %% N; deviceProperties lists "
                   "N GPUs (default 1)")
    p.add_argument("--ts-format", choices=("decimal3", "int"), default="decimal3",
                   help="decimal3: us with 3 decimals relative to baseTimeNanoseconds (Kineto 2024+); int: whole "
                   "epoch us and no baseTimeNanoseconds (older Kineto)")
    p.add_argument("--step-gap-us", type=float, default=500.0, help="idle time between steps (default 500)")
    p.add_argument("--optimizer-us", type=float, default=0.0, help="if > 0, an Optimizer.step range with "
                   "this much GPU time after each step (not part of the iteration time in truth.json)")
    p.add_argument("--jobs", type=int, default=0, help="parallel writer processes (default: CPU count)")
    p.add_argument("--self-check", action="store_true", help="reload the written files and check invariants")
    args = p.parse_args(argv)

    if bool(args.schedule) == bool(args.synth_1f1b):
        p.error("give exactly one of --schedule and --synth-1f1b")
    if args.steps < 1:
        p.error("--steps must be >= 1")
    if not 0 <= args.jitter < 1:
        p.error("--jitter must be in [0, 1)")
    os.makedirs(args.out, exist_ok=True)
    t_wall = time.time()

    if args.synth_1f1b:
        nr, nm = (int(x) for x in args.synth_1f1b.split(","))
        rows = synth_1f1b(nr, nm)
        with open(os.path.join(args.out, "schedule.csv"), "w", newline="") as f:
            csv.writer(f).writerows([[a.text for a in row] for row in rows])
        schedule_src = f"synth-1f1b {nr},{nm}"
    else:
        rows = read_schedule(args.schedule)
        schedule_src = args.schedule
    sched = Schedule(rows)
    explicit = sched.has_comms
    lowered = False
    if args.lower:
        if not sched.compute_only:
            p.error("--lower needs a compute-only schedule")
        rows = lower(sched)
        explicit = lowered = True
    model = Model(args, sched, rows, explicit)
    q = model.q
    R = sched.ranks

    offsets = {r: quant(v * US, q) for r, v in parse_rank_map(args.clock_offset_us, R, "--clock-offset-us").items()}
    gz = parse_rank_list(args.gzip_ranks, R, "--gzip-ranks")

    # simulate the steps on the true clock
    steps = []
    t0 = T0_NS if q == 1 else quant(T0_NS, q)
    t = t0 + 2000 * US
    all_transfers = []
    for k in range(args.steps):
        recs, transfers = model.simulate_step(k, t)
        gpu_end = [t] * R
        cpu_end = [t] * R
        for r in range(R):
            for rec in recs[r]:
                cpu_end[r] = max(cpu_end[r], rec.cpu_end)
                for sub in rec.subs:
                    gpu_end[r] = max(gpu_end[r], sub.gpu_start + sub.cost)
        for tr in transfers:
            gpu_end[tr.src] = max(gpu_end[tr.src], tr.end)
            gpu_end[tr.dst] = max(gpu_end[tr.dst], tr.end)
        opt = [None] * R
        done = [max(gpu_end[r], cpu_end[r]) for r in range(R)]
        if args.optimizer_us > 0:
            og = max(q, quant(args.optimizer_us * US, q))
            for r in range(R):
                t0 = done[r] + 50 * US
                opt[r] = (t0, t0 + 40 * US, og)
                done[r] = t0 + 40 * US + og
        t_next = max(done) + quant(args.step_gap_us * US, q)
        steps.append({"number": args.first_step + k, "t": t, "t_next": t_next, "recs": recs, "opt": opt,
                      "transfers": transfers})
        all_transfers.append(transfers)
        t = t_next
    if not explicit:
        by_rank: dict[int, list] = {}
        for transfers in all_transfers:
            for tr in transfers:
                by_rank.setdefault(tr.src, []).append((tr, "send"))
                by_rank.setdefault(tr.dst, []).append((tr, "recv"))
        assign_pool_streams(by_rank)
    for k, st in enumerate(steps):
        skew = [quant(((r * 7) % 23) * US, q) for r in range(R)]
        st["cpu_begin"] = [st["t"] + skew[r] for r in range(R)]
        st["cpu_end"] = [st["t_next"] + skew[r] for r in range(R)]
    trace_begin = t0
    trace_end = steps[-1]["t_next"] + 30 * US + 500 * US

    cfg = {"q": q, "ranks": R, "offsets": offsets, "ts_format": args.ts_format, "int_no_base": args.ts_format == "int",
           "gpus_per_node": max(1, args.gpus_per_node), "pp": not args.no_pp_annotations,
           "gpu_ann": args.gpu_annotations and not args.no_pp_annotations, "trace_begin": trace_begin,
           "trace_end": trace_end, "input_rank": sched.stage_rank[0]}
    step_view = [{"number": st["number"], "recs": st["recs"], "opt": st["opt"], "cpu_begin": st["cpu_begin"],
                  "cpu_end": st["cpu_end"]} for st in steps]
    files = {}
    jobs = []
    for r in range(R):
        name = f"rank{r}_trace.json" + (".gz" if r in gz else "")
        files[r] = name
        jobs.append((r, cfg, step_view, os.path.join(args.out, name)))

    global _JOB_CTX
    _JOB_CTX = jobs
    njobs = args.jobs or os.cpu_count() or 1
    njobs = max(1, min(njobs, R))
    if njobs > 1 and "fork" in multiprocessing.get_all_start_methods():
        with multiprocessing.get_context("fork").Pool(njobs) as pool:
            results = pool.map(_emit_job, range(R), chunksize=1)
    else:
        results = [emit_rank(j) for j in jobs]

    # ground truth
    truth_steps = []
    actions = []
    per_kind: dict[tuple[int, str], list[int]] = {}
    for k, st in enumerate(steps):
        ranks_view = {}
        k_first = min(x[3][k][0] for x in results if x[3][k][0] is not None)
        k_last = max(x[3][k][1] for x in results if x[3][k][1] is not None)
        c_first, c_last = None, None
        for r in range(R):
            order = []
            for rec in st["recs"][r]:
                order.append(rec.action.text)
                for sub in rec.subs:
                    leaf = sub.leaf
                    per_kind.setdefault((leaf.stage, leaf.kind), []).append(sub.cost)
                    c_first = sub.gpu_start if c_first is None else min(c_first, sub.gpu_start)
                    c_last = sub.gpu_start + sub.cost if c_last is None else max(c_last, sub.gpu_start + sub.cost)
                    actions.append({
                        "step": k, "rank": r, "action": leaf.text, "stage": leaf.stage, "kind": leaf.kind,
                        "microbatch": leaf.mb,
                        "container": rec.action.text if rec.action.subs is not None else None,
                        "gpu_time_us": us(sub.cost), "gpu_start_us": us(sub.gpu_start),
                        "gpu_end_us": us(sub.gpu_start + sub.cost),
                        "nominal_us": model.costs[leaf.stage][leaf.kind],
                        "kernels": sub.nmain + sub.nfill,
                        "cpu_range_us": [us(rec.cpu_start), us(rec.cpu_end)],
                    })
            sp = results[r][3][k]
            ranks_view[str(r)] = {
                "actions": order,
                "first_kernel_start_us": us(sp[0]) if sp[0] is not None else None,
                "last_kernel_end_us": us(sp[1]) if sp[1] is not None else None,
                "profiler_step_cpu_us": [us(st["cpu_begin"][r]), us(st["cpu_end"][r])],
            }
        truth_steps.append({
            "profiler_step": "ProfilerStep#%d" % st["number"],
            "iteration_time_us": us(k_last - k_first),
            "first_kernel_start_us": us(k_first), "last_kernel_end_us": us(k_last),
            "compute_iteration_time_us": us(c_last - c_first),
            "ranks": ranks_view,
            "transfers": [{"kind": "activation" if tr.label == "F" else "gradient",
                           "producer_stage": tr.key[1], "microbatch": tr.key[2], "src_rank": tr.src,
                           "dst_rank": tr.dst, "send_start_us": us(tr.send_start), "recv_start_us": us(tr.recv_start),
                           "end_us": us(tr.end)} for tr in st["transfers"]],
        })
    mean = {}
    for (stage, kind), v in sorted(per_kind.items()):
        mean.setdefault(str(stage), {})[kind] = {"mean_us": round(sum(v) / len(v) / 1000.0, 6), "count": len(v),
                                                 "nominal_us": model.costs[stage][kind]}
    truth = {
        "generator": "tests/trace/gen_kineto_trace.py",
        "argv": sys.argv[1:] if argv is None else list(argv),
        "schedule": schedule_src,
        "ranks": R, "stages": sched.stages, "microbatches": sched.microbatches,
        "stage_to_rank": [sched.stage_rank[s] for s in range(sched.stages)],
        "comms": "explicit" if explicit else "implicit",
        "lowered": lowered,
        "pp_annotations": not args.no_pp_annotations,
        "gpu_annotations": cfg["gpu_ann"],
        "backward_thread": args.backward_thread,
        "host_sync": args.host_sync,
        "label_format": "PP:<action>",
        "ts_format": args.ts_format,
        "time_unit": "us",
        "clock": ("true common clock in us, relative to baseTimeNanoseconds" if args.ts_format == "decimal3"
                  else "true common clock in us, relative to base_time_ns (files hold epoch us)"),
        "base_time_ns": BASE_NS,
        "clock_offsets_us": {str(r): us(offsets.get(r, 0)) for r in range(R)},
        "transfer_us": us(model.transfer),
        "jitter": args.jitter, "seed": args.seed,
        "files": {str(r): files[r] for r in range(R)},
        "steps": truth_steps,
        "mean_gpu_time_us": mean,
        "actions": actions,
    }
    with open(os.path.join(args.out, "truth.json"), "w") as f:
        json.dump(truth, f, indent=1)
        f.write("\n")
    total = sum(x[1] for x in results)
    print(f"wrote {R} traces ({total / 1e6:.1f} MB, {sum(x[2] for x in results)} kernels) and truth.json to "
          f"{args.out} in {time.time() - t_wall:.1f} s", file=sys.stderr)
    if args.self_check:
        t1 = time.time()
        problems = self_check(args.out, truth)
        if problems:
            for pr in problems[:50]:
                print("self-check: " + pr, file=sys.stderr)
            print(f"self-check FAILED ({len(problems)} problems)", file=sys.stderr)
            return 1
        print(f"self-check passed in {time.time() - t1:.1f} s", file=sys.stderr)
    return 0


# ----------------------------------------------------------------------------------------------------------
# Self-check
# ----------------------------------------------------------------------------------------------------------

def _ns(v) -> int:
    """ts/dur value (us, as json parsed it) to integer ns; exact for ints and for 3-decimal values < 2**53 ns."""
    if isinstance(v, int):
        return v * 1000
    return int(round(v * 1000))


def self_check(out_dir: str, truth: dict) -> list[str]:
    probs: list[str] = []
    R = truth["ranks"]
    int_ts = truth["ts_format"] == "int"
    base = truth["base_time_ns"]
    per_kind_sum: dict[tuple[int, str], list[int]] = {}
    for r in range(R):
        name = truth["files"][str(r)]
        path = os.path.join(out_dir, name)

        def tsns(x, r=r):
            # back to the true clock: remove the rank's offset (and the epoch for int files)
            v = _ns(x)
            if int_ts:
                v -= base
            return v - _ns(truth["clock_offsets_us"][str(r)])

        opener = gzip.open if name.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as f:
            doc = json.load(f)
        di = doc.get("distributedInfo")
        if not isinstance(di, dict) or di.get("rank") != r or di.get("world_size") != R:
            probs.append(f"{name}: distributedInfo {di!r} should say rank {r}, world_size {R}")
        if not int_ts and doc.get("baseTimeNanoseconds") != base:
            probs.append(f"{name}: baseTimeNanoseconds missing or wrong")
        ev = doc["traceEvents"]
        launches = {}
        kernels = []
        steps = []
        pps = []
        flows_s, flows_f = {}, {}
        for e in ev:
            cat = e.get("cat")
            ph = e.get("ph")
            if ph == "X" and cat in ("cuda_runtime", "cuda_driver"):
                c = e["args"].get("correlation")
                if c in launches:
                    probs.append(f"{name}: correlation {c} used by two launches")
                launches[c] = e
            elif ph == "X" and cat == "kernel":
                kernels.append(e)
            elif ph == "X" and cat == "user_annotation":
                if e["name"].startswith("ProfilerStep#"):
                    steps.append(e)
                elif e["name"].startswith("PP:"):
                    pps.append(e)
            elif cat == "ac2g":
                (flows_s if ph == "s" else flows_f)[e["id"]] = e
        for k in kernels:
            c = k["args"]["correlation"]
            ln = launches.get(c)
            if ln is None:
                probs.append(f"{name}: kernel {k['name'][:40]} correlation {c} has no launch")
                continue
            if _ns(ln["ts"]) >= _ns(k["ts"]):
                probs.append(f"{name}: kernel correlation {c} starts before its launch")
            if c not in flows_s or c not in flows_f:
                probs.append(f"{name}: kernel correlation {c} lacks its ac2g flow pair")
            if k["args"]["stream"] != k["tid"] or k["args"]["device"] != k["pid"]:
                probs.append(f"{name}: kernel correlation {c} pid/tid differ from device/stream")
        # kernels on one stream never overlap
        by_stream: dict[int, list] = {}
        for k in kernels:
            by_stream.setdefault(k["tid"], []).append((_ns(k["ts"]), _ns(k["ts"]) + _ns(k["dur"])))
        for sid, iv in by_stream.items():
            iv.sort()
            for (a0, a1), (b0, b1) in zip(iv, iv[1:]):
                if b0 < a1:
                    probs.append(f"{name}: kernels overlap on stream {sid} at {b0}")
                    break
        # every PP range lies within a ProfilerStep range on the CPU
        sspans = sorted((_ns(s["ts"]), _ns(s["ts"]) + _ns(s["dur"])) for s in steps)
        if len(steps) != len(truth["steps"]):
            probs.append(f"{name}: {len(steps)} ProfilerStep ranges, expected {len(truth['steps'])}")
        for pp in pps:
            b, e_ = _ns(pp["ts"]), _ns(pp["ts"]) + _ns(pp["dur"])
            if not any(s0 <= b and e_ <= s1 for s0, s1 in sspans):
                probs.append(f"{name}: {pp['name']} at {pp['ts']} is outside every ProfilerStep")
        # PP ranges, in order, give truth's action order; kernels launched inside them give the GPU times
        if truth["pp_annotations"]:
            pps.sort(key=lambda e: _ns(e["ts"]))
            got = [e["name"][3:] for e in pps]
            want = [a for st in truth["steps"] for a in st["ranks"][str(r)]["actions"]]
            if got != want:
                probs.append(f"{name}: PP ranges {got[:6]}... differ from truth {want[:6]}...")
            starts = [_ns(e["ts"]) for e in pps]
            import bisect
            sums: dict[int, int] = {}
            for k in kernels:
                if k["name"].startswith("nccl") or "multi_tensor_apply" in k["name"]:
                    continue
                ln = launches.get(k["args"]["correlation"])
                if ln is None:
                    continue
                t = _ns(ln["ts"])
                i = bisect.bisect_right(starts, t) - 1
                if i < 0 or t > starts[i] + _ns(pps[i]["dur"]):
                    probs.append(f"{name}: compute kernel launch at {ln['ts']} outside every PP range")
                    continue
                sums[i] = sums.get(i, 0) + _ns(k["dur"])
            for i, e in enumerate(pps):
                if i in sums:
                    act = e["name"][3:]
                    if act.startswith("("):
                        continue  # OVERLAP_F_B: two leaves in one range
                    m = _ACTION_RE.fullmatch(act)
                    per_kind_sum.setdefault((int(m.group(1)), m.group(2)), []).append(sums[i])
        # clock offsets: back on the true clock, each ProfilerStep starts where truth says
        for st, s in zip(truth["steps"], sorted(steps, key=lambda e: _ns(e["ts"]))):
            want = _ns(st["ranks"][str(r)]["profiler_step_cpu_us"][0])
            if tsns(s["ts"]) != want:
                probs.append(f"{name}: {s['name']} starts at {tsns(s['ts'])} ns on the true clock, truth {want}")
    if truth["pp_annotations"]:
        have_overlap = any(a["container"] for a in truth["actions"])
        for stage, kinds in truth["mean_gpu_time_us"].items():
            for kind, v in kinds.items():
                got = per_kind_sum.get((int(stage), kind))
                if got is None:
                    if not have_overlap:
                        probs.append(f"stage {stage} {kind}: no kernels found in PP ranges")
                    continue
                if have_overlap:
                    continue
                mean = sum(got) / len(got) / 1000.0
                if abs(mean - v["mean_us"]) > 1e-3 or len(got) != v["count"]:
                    probs.append(f"stage {stage} {kind}: kernels in PP ranges give {mean:.3f} us over {len(got)}, "
                                 f"truth {v['mean_us']} over {v['count']}")
    return probs


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ValueError as e:
        print(f"gen_kineto_trace: {e}", file=sys.stderr)
        sys.exit(2)
