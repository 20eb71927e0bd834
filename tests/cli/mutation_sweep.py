#!/usr/bin/env python3
"""Every subcommand over mutated corpus files: bad input is answered, never crashed on (run by ctest).

The library fuzzers see what the readers, passes and simulators throw, not what the binary
makes of it: the exit code, the message, the files it leaves. This sweep mutates schedules of
the PyTorch conformance corpus and the examples (cells dropped, duplicated, swapped or edited,
rows moved, bytes inserted or cut) and runs compile, validate, simulate and run (fake backend)
on each mutant, in several forms. It fails on:
  - exit 3 (internal error) or any exit outside 0, 1, 2, or a signal;
  - a command still running after its time limit;
  - a silent failure: a non-zero exit with nothing on stdout or stderr, or exit 0 with nothing
    on stdout where the command writes its report there;
  - "internal error" anywhere on stderr;
  - a changed file: the input modified, an -o target touched by a failed command or left
    unwritten by a successful one, or a temporary file left behind.

  mutation_sweep.py PPSCHED [--mutants N] [--seed S] [--jobs J]

Mutants are drawn from a fixed seed, so a failure reproduces; each one found is printed with the
mutant's text and the command line.
"""
import argparse
import concurrent.futures
import hashlib
import os
import random
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KINDS = ["F", "B", "I", "W", "SEND_F", "RECV_F", "SEND_B", "RECV_B", "UNSHARD", "RESHARD", "REDUCE_GRAD"]
TIME_LIMIT_S = 20


def corpus_files():
    files = []
    for sub in ("tests/conformance/pytorch/configs", "tests/conformance/pytorch/negative"):
        d = os.path.join(ROOT, sub)
        files += sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".csv"))
    d = os.path.join(ROOT, "schedules")
    # Model files (*.model.json) and runtime parameters (*.runtime.json) sit beside the schedules but
    # are not schedules.
    files += sorted(os.path.join(d, f) for f in os.listdir(d)
                    if f.endswith((".csv", ".json")) and not f.endswith((".model.json", ".runtime.json")))
    # Small files keep the sweep fast; the mutations do not need long schedules.
    return [f for f in files if os.path.getsize(f) < 4000]


def mutate_cells(text, rng):
    rows = [r.split(",") for r in text.split("\n")]
    cells = [(i, j) for i, r in enumerate(rows) for j in range(len(r)) if r[j].strip()]
    if not cells:
        return text + "0F0"
    i, j = rng.choice(cells)
    op = rng.randrange(9)
    if op == 0:  # drop a cell
        del rows[i][j]
    elif op == 1:  # duplicate a cell
        rows[i].insert(j, rows[i][j])
    elif op == 2:  # swap two cells of a row
        k = rng.randrange(len(rows[i]))
        rows[i][j], rows[i][k] = rows[i][k], rows[i][j]
    elif op == 3:  # move a cell to another row
        cell = rows[i].pop(j)
        rows[rng.randrange(len(rows))].insert(0, cell)
    elif op == 4:  # another kind, same stage and microbatch
        digits = [c for c in rows[i][j] if c.isdigit()]
        stage = "".join(digits[:1]) or "0"
        mb = "".join(digits[1:]) or "0"
        rows[i][j] = stage + rng.choice(KINDS) + mb
    elif op == 5:  # another number somewhere in the cell
        rows[i][j] = "".join(str(rng.randrange(12)) if c.isdigit() and rng.random() < 0.5 else c for c in rows[i][j])
    elif op == 6:  # drop or duplicate a row
        if rng.random() < 0.5:
            del rows[i]
        else:
            rows.insert(i, list(rows[i]))
    elif op == 7:  # swap two rows
        k = rng.randrange(len(rows))
        rows[i], rows[k] = rows[k], rows[i]
    else:  # an empty cell or a container
        rows[i].insert(j, rng.choice(["", "OVERLAP_F_B", rows[i][j] + ";" + rows[i][j]]))
    return "\n".join(",".join(r) for r in rows)


def mutate_bytes(data, rng):
    pos = rng.randrange(len(data) + 1)
    op = rng.randrange(4)
    if op == 0:
        return data[:pos]
    if op == 1:
        return data[:pos] + bytes([rng.choice(b"\x00\xff\r\n,;{}[]\"-9eF")]) + data[pos:]
    if op == 2:
        return data[:pos] + data[pos + 1:]
    return data[:pos] + data[pos:pos + 8] * 2 + data[pos + 8:]


def mutant(path, rng):
    data = open(path, "rb").read()
    if path.endswith(".csv") and rng.random() < 0.75:
        text = data.decode("utf-8", "replace")
        for _ in range(1 + rng.randrange(2)):
            text = mutate_cells(text, rng)
        return text.encode()
    return mutate_bytes(data, rng)


def commands(f, out):
    """(args, -o target or None, writes its report to stdout)"""
    return [
        (["compile", f, "-o", out + ".csv"], out + ".csv", False),
        (["compile", f, "--format", "json", "-o", out + ".json"], out + ".json", False),
        (["compile", f, "--format", "text"], None, True),
        (["compile", f, "--lower", "send-recv"], None, True),
        (["compile", f, "--lower", "runtime", "--lenient"], None, True),
        (["validate", f], None, True),
        (["validate", f, "--format", "json"], None, True),
        (["validate", f, "--format", "sarif"], None, True),
        (["validate", f, "--format", "github", "--max-bubble", "0.5", "--max-memory", "100"], None, False),
        (["simulate", f], None, True),
        (["simulate", f, "--simulator", "pytorch-steps"], None, True),
        (["simulate", f, "--format", "json", "--trace", out + ".trace.json", "--svg", out + ".svg", "--gantt", "40",
          "-o", out + ".sim.json"], out + ".sim.json", False),
        (["simulate", f, "--lower", "runtime", "--blocking-comms", "--views", "summary"], None, True),
        (["run", f, "--backend", "fake", "-w", "0", "-n", "2", "--fake-jitter", "0"], None, True),
    ]


def digest(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def check_mutant(ppsched, n, source, data, top, env):
    """Runs every command on one mutant in a directory of its own; returns (runs, exits, failures)."""
    tmp = os.path.join(top, f"m{n}")
    os.mkdir(tmp)
    ext = os.path.splitext(source)[1]
    f = os.path.join(tmp, f"mutant{n}{ext}")
    open(f, "wb").write(data)
    before = digest(f)
    out = os.path.join(tmp, f"out{n}")
    failures, runs, exits = [], 0, {}
    for argv, target, to_stdout in commands(f, out):
        if target:
            open(target, "w").write("precious\n")
        cmd = [ppsched] + argv
        runs += 1
        try:
            p = subprocess.run(cmd, capture_output=True, timeout=TIME_LIMIT_S, env=env, cwd=tmp)
        except subprocess.TimeoutExpired:
            failures.append((cmd, data, f"still running after {TIME_LIMIT_S} s"))
            continue
        rc = p.returncode
        exits[rc] = exits.get(rc, 0) + 1
        problems = []
        if rc < 0:
            problems.append(f"killed by signal {-rc}")
        elif rc not in (0, 1, 2):
            problems.append(f"exit {rc}")
        if b"internal error" in p.stderr:
            problems.append("'internal error' on stderr")
        if rc != 0 and not p.stdout.strip() and not p.stderr.strip():
            problems.append(f"exit {rc} with no message")
        if rc == 0 and to_stdout and not p.stdout.strip():
            problems.append("exit 0 with an empty report")
        if digest(f) != before:
            problems.append("the input file changed")
        if target:
            kept = open(target).read() == "precious\n"
            if rc == 2 and not kept:
                problems.append("a failed command replaced its -o file")
            if rc == 0 and kept:
                problems.append("a successful command did not write its -o file")
        left = [x for x in os.listdir(tmp) if "ppsched-tmp" in x]
        if left:
            problems.append(f"temporary files left behind: {left}")
            for x in left:
                os.remove(os.path.join(tmp, x))
        if problems:
            failures.append((cmd, data, "; ".join(problems) + "\n" + p.stderr.decode("utf-8", "replace")[-600:]))
    shutil.rmtree(tmp)
    return runs, exits, failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ppsched")
    ap.add_argument("--mutants", type=int, default=int(os.environ.get("PPSCHED_SWEEP_MUTANTS", "200")))
    ap.add_argument("--seed", type=int, default=24)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = ap.parse_args()
    args.ppsched = os.path.abspath(args.ppsched)
    rng = random.Random(args.seed)
    files = corpus_files()
    # The mutants are drawn up front, in order, so the set does not depend on --jobs.
    drawn = []
    for n in range(args.mutants):
        source = rng.choice(files)
        drawn.append((n, source, mutant(source, rng)))
    failures, runs, exits = [], 0, {}
    env = dict(os.environ, NO_COLOR="1")
    with tempfile.TemporaryDirectory() as top:
        # Each mutant runs in its own directory, so concurrent commands cannot see each other's
        # temporary files; the results are gathered in mutant order.
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            results = pool.map(lambda d: check_mutant(args.ppsched, d[0], d[1], d[2], top, env), drawn)
            for r, e, f in results:
                runs += r
                failures += f
                for k, v in e.items():
                    exits[k] = exits.get(k, 0) + v
    print(f"{args.mutants} mutants of {len(files)} files, {runs} runs; exits: "
          + ", ".join(f"{k}: {v}" for k, v in sorted(exits.items())))
    for cmd, data, why in failures[:20]:
        print("\nFAIL:", " ".join(os.path.basename(c) if c.startswith("/") else c for c in cmd))
        print("  why:", why.rstrip())
        print("  mutant:", data[:400])
    if failures:
        print(f"\n{len(failures)} failing runs")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
