#!/usr/bin/env python3
"""Whether two ppsched binaries build the same automatic schedules, byte for byte.

  auto_identity.py BEFORE AFTER [--jobs N] [--only-cases] [--list]

Runs from the repository root (the CLI cases' paths are relative to it) and compares, for every
command line below, the two binaries' stdout, stderr and exit code:
  (a) every CLI golden case whose arguments ask for the automatic schedule (tests/cli/cases/*/args
      with `--schedule auto`, or `auto` among tune's --families), run as the case runs it;
  (b) a grid of `compile --schedule auto` configurations: ranks 2 to 32 (odd ones among them), one
      and two stages per rank, m = p, p + 1, 2p and 4p microbatches, every memory cap of the
      shape's list (none; for V the caps of V-Min and V-Half, below p; p and 2p; for one chunk also
      one microbatch, the tightest that fits), each with two cost mixes and an optimizer drawn from
      a fixed seed, and a few with a smaller or larger --time-budget; and two caps below one
      microbatch, which the search refuses.
Cost mixes: unit costs; F=2,I=3,W=1; F=1,I=1,W=0.5; F=3,I=4,W=2 with a latency between nodes; a
fused backward cheaper than I then W; a table of random per-stage costs; that table with a
topology whose links have latency and bandwidth and a stage spec (bytes sent, M_W = M_B / 2, the
cap in bytes). The inputs are written to a temporary folder, the same for both binaries.

A refactoring of lib/auto that claims no behaviour change runs this with the binary built before it
and the one built after: every line must be identical. Exit 0 when all are, 1 otherwise (the
differences are printed), 2 on a usage error.
"""
import argparse
import concurrent.futures
import glob
import json
import os
import random
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RANKS = [2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 23, 32]
SEED = 42
ACT_BYTES = 1 << 20  # a stage's M_B with the stage spec


def cli_cases():
    """(name, args, stdin path or None) of every golden case that runs the automatic search."""
    out = []
    for args_file in sorted(glob.glob(os.path.join(ROOT, "tests", "cli", "cases", "*", "args"))):
        with open(args_file) as f:
            args = [line.rstrip("\n") for line in f]
        asks = any(a == "--schedule" and i + 1 < len(args) and args[i + 1].lower() == "auto" for i, a in enumerate(args))
        asks |= any(a == "--families" and i + 1 < len(args) and "auto" in args[i + 1].lower().split(",")
                    for i, a in enumerate(args))
        if asks:
            case = os.path.dirname(args_file)
            stdin = os.path.join(case, "stdin")
            out.append(("case " + os.path.basename(case), args, stdin if os.path.exists(stdin) else None))
    return out


def write_inputs(folder, rng):
    """Per (ranks, stages per rank): a random cost table, a topology and a stage spec."""
    files = {}
    for p in RANKS:
        topo = {"schema_version": 1, "nodes": [list(range(r, min(r + 2, p))) for r in range(0, p, 2)],
                "links": {"intra_node": {"latency_us": 0.5, "bandwidth_gbps": 400},
                          "inter_node": {"latency_us": round(rng.uniform(0.25, 2), 2), "bandwidth_gbps": 25},
                          "inter_slice": {"latency_us": 10, "bandwidth_gbps": 10}}}
        latency = dict(topo, links={"intra_node": {"latency_us": 0, "bandwidth_gbps": 1e9},
                                    "inter_node": {"latency_us": 0.75, "bandwidth_gbps": 1e9},
                                    "inter_slice": {"latency_us": 0.75, "bandwidth_gbps": 1e9}})
        for name, data in (("topology", topo), ("latency", latency)):
            path = os.path.join(folder, f"{name}-{p}.json")
            with open(path, "w") as f:
                json.dump(data, f)
            files[(name, p)] = path
        for v in (1, 2):
            stages = p * v
            path = os.path.join(folder, f"costs-{p}x{v}.csv")
            with open(path, "w") as f:
                f.write("stage,kind,time_us\n")
                for s in range(stages):
                    fwd, inp, wgt = (round(rng.uniform(0.25, 4) / v, 3) for _ in range(3))
                    bwd = round(min(inp + wgt, rng.uniform(0.8, 1.2) * (inp + wgt)), 3)
                    for kind, t in (("F", fwd), ("B", bwd), ("I", inp), ("W", wgt)):
                        f.write(f"{s},{kind},{t}\n")
            files[("costs", p, v)] = path
            spec = {"schema_version": 1, "stages": [
                {"activation_bytes": rng.choice([1, 2, 4]) * 1e6, "activation_memory_bytes": ACT_BYTES,
                 "weight_grad_memory_bytes": ACT_BYTES / 2} for _ in range(stages)]}
            path = os.path.join(folder, f"spec-{p}x{v}.json")
            with open(path, "w") as f:
                json.dump(spec, f)
            files[("spec", p, v)] = path
    return files


def cost_mixes(files, p, v):
    """(name, flags, the memory unit a cap is counted in) of each cost mix."""
    mb = 1.0  # without a stage spec a cap counts microbatches of activation per rank
    return [
        ("unit", [], mb),
        ("F2I3W1", ["--cost", "F=2,I=3,W=1"], mb),
        ("F1I1W.5", ["--cost", "F=1,I=1,W=0.5"], mb),
        ("F3I4W2+latency", ["--cost", "F=3,I=4,W=2", "--topology", files[("latency", p)]], mb),
        ("fused-B", ["--cost", "F=1,B=1.5,I=1,W=1"], mb),
        ("table", ["--costs", files[("costs", p, v)]], mb),
        ("table+topology+spec", ["--costs", files[("costs", p, v)], "--topology", files[("topology", p)],
                                 "--stage-spec", files[("spec", p, v)]], v * ACT_BYTES),
    ]


def caps(p, v):
    """The caps tried for a shape, in microbatches of activation per rank (None: no cap)."""
    if v == 2:
        return [None, (p + 4) // 3, (p + 2) / 2, p, 2 * p]
    return [None, 1, p, 2 * p]


def grid(files):
    rng = random.Random(SEED)
    out = []
    for p in RANKS:
        for v in (1, 2):
            for m in (p, p + 1, 2 * p, 4 * p):
                for cap, (name, flags, unit) in ((c, mix) for c in caps(p, v)
                                                 for mix in rng.sample(cost_mixes(files, p, v), 2)):
                    optimizer = rng.choice(["sync", "post-validated"])
                    args = ["compile", "--schedule", "auto", "--ranks", str(p), "--stages-per-rank", str(v),
                            "--microbatches", str(m), "--optimizer", optimizer] + flags
                    if cap is not None:
                        args += ["--memory-cap", f"{cap * unit:.12g}"]
                    budget = rng.random()
                    if budget < 0.05:
                        args += ["--time-budget", "0.05"]
                    elif budget < 0.1:
                        args += ["--time-budget", "3"]
                    label = f"p={p} v={v} m={m} cap={cap} {name} {optimizer}" + (
                        " budget " + args[-1] if "--time-budget" in args else "")
                    out.append((label, args, None))
    # The refusals: a cap below one microbatch, and a cap that nothing fits.
    out.append(("cap below a microbatch", ["compile", "--schedule", "auto", "--ranks", "4", "--microbatches", "8",
                                           "--memory-cap", "0.5"], None))
    out.append(("V cap below a microbatch", ["compile", "--schedule", "auto", "--ranks", "4", "--stages-per-rank",
                                             "2", "--microbatches", "8", "--memory-cap", "0.75"], None))
    return out


def run(binary, args, stdin):
    env = dict(os.environ, NO_COLOR="1")
    with open(stdin or os.devnull, "rb") as f:
        r = subprocess.run([binary] + args, stdin=f, capture_output=True, cwd=ROOT, env=env)
    return r.stdout, r.stderr, r.returncode


def first_difference(a, b):
    for name, x, y in zip(("stdout", "stderr", "exit code"), a, b):
        if x != y:
            if isinstance(x, int):
                return f"exit code {x} before, {y} after"
            lines_x, lines_y = x.decode(errors="replace").splitlines(), y.decode(errors="replace").splitlines()
            for k, (lx, ly) in enumerate(zip(lines_x, lines_y)):
                if lx != ly:
                    return f"{name} line {k + 1}:\n    before: {lx[:200]}\n    after:  {ly[:200]}"
            return f"{name}: {len(lines_x)} lines before, {len(lines_y)} after"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only-cases", action="store_true", help="only the CLI golden cases")
    ap.add_argument("--list", action="store_true", help="print the command lines and stop")
    a = ap.parse_args()
    for b in (a.before, a.after):
        if not os.access(b, os.X_OK):
            print(f"auto_identity.py: {b} is not an executable", file=sys.stderr)
            return 2
    with tempfile.TemporaryDirectory(prefix="auto-identity-") as folder:
        files = write_inputs(folder, random.Random(SEED))
        cases = cli_cases()
        configs = [] if a.only_cases else grid(files)
        lines = cases + configs
        if a.list:
            for label, args, _ in lines:
                print(f"{label}: ppsched {' '.join(args)}")
            return 0
        with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
            before = [pool.submit(run, a.before, args, stdin) for _, args, stdin in lines]
            after = [pool.submit(run, a.after, args, stdin) for _, args, stdin in lines]
            differ = []
            exits = {}
            for (label, args, _), fb, fa in zip(lines, before, after):
                rb, ra = fb.result(), fa.result()
                exits[rb[2]] = exits.get(rb[2], 0) + 1
                why = first_difference(rb, ra)
                if why:
                    differ.append(f"{label}: ppsched {' '.join(args)}\n  {why}")
    for d in differ:
        print(d)
    same_cases = len(cases) - sum(1 for d in differ if d.startswith("case "))
    print(f"CLI cases: {len(cases)}, identical {same_cases}")
    print(f"grid configurations: {len(configs)}, identical {len(configs) - (len(differ) - (len(cases) - same_cases))}")
    print("exit codes (before): " + ", ".join(f"{k}: {n}" for k, n in sorted(exits.items())))
    print(f"{len(lines)} command lines, {len(lines) - len(differ)} identical, {len(differ)} different")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
