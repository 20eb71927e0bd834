#!/usr/bin/env python3
"""ppsched trace end to end on generated traces (run by ctest; stdlib only).

For each family, ppsched compile writes the schedule; tests/trace/gen_kineto_trace.py (its own event
model, not ppsched's) writes one Kineto trace per rank as PyTorch's runtime runs it lowered, with 5%
jitter, three profiled steps, per-rank clock offsets and one rank gzipped, and truth.json: once with an
NCCL stream per rank pair, once with one per rank, and once (one family) with a host that waits for
its GPU. Then
ppsched trace must give back, against the truth:
  the order         --schedule-out equals each rank's executed order, action for action
  the costs         each (stage, kind)'s median within 1% of the truth's median of its actions
  the clocks        each rank's offset within 1 us
  the time          each step's iteration time within 0.5%
  the re-simulation the order as run, with the measured costs, in the communicator queues the NCCL
                    kernels' streams show, within 3% of the measured time
and a trace without PP annotations must be refused saying so.

  trace_test.py PPSCHED GENERATOR
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

PPSCHED, GEN = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
FAMILIES = [("1F1B", 1), ("GPipe", 1), ("ZBH1", 1), ("Interleaved1F1B", 2), ("LoopedBFS", 2),
            ("InterleavedZeroBubble", 2), ("ZBVZeroBubble", 2), ("DualPipeV", 2)]
OFFSETS = {1: 1500.0, 2: -800.0, 3: 12345.0}
failures = []


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, **kw)


def check_family(family, v, root, streams="per-pair", host_sync=False):
    case = f"{family} ({streams} NCCL streams{', host synchronized' if host_sync else ''})"
    out = os.path.join(root, f"{family}-{streams}{'-sync' if host_sync else ''}")
    os.makedirs(out)
    csv = os.path.join(out, "schedule.csv")
    p = run([PPSCHED, "compile", "--schedule", family, "--ranks", "4", "--microbatches", "8", "--stages-per-rank",
             str(v), "-o", csv])
    if p.returncode != 0:
        failures.append(f"{case}: compile: {p.stderr[-300:]}")
        return
    # The compute-only order (GPipe's CSV also holds REDUCE_GRAD): the generator lowers it as
    # PyTorch's runtime does.
    with open(csv, newline="") as f:
        lines = [",".join(c for c in line.rstrip("\r\n").split(",") if "REDUCE_GRAD" not in c) for line in f]
    with open(csv, "w", newline="") as f:
        f.write("\n".join(lines) + "\n")
    traces = os.path.join(out, "traces")
    offsets = ",".join(f"{r}:{o}" for r, o in OFFSETS.items())
    p = run([sys.executable, GEN, "--schedule", csv, "--lower", "--steps", "3", "--jitter", "0.05", "--seed", "7",
             "--clock-offset-us", offsets, "--gzip-ranks", "2", "--out", traces, "--p2p-streams", streams,
             *(["--host-sync"] if host_sync else []), "--costs", '{"F": 1000, "I": 1100, "W": 900, "B": 2000}'])
    if p.returncode != 0:
        failures.append(f"{case}: generator: {p.stderr[-300:]}")
        return
    with open(os.path.join(traces, "truth.json")) as f:
        truth = json.load(f)
    files = sorted(os.path.join(traces, n) for n in os.listdir(traces) if n.startswith("rank"))
    order_csv, costs_csv = os.path.join(out, "order.csv"), os.path.join(out, "costs.csv")
    merged, html = os.path.join(out, "merged.json"), os.path.join(out, "run.html")
    p = run([PPSCHED, "trace", *files, "--format", "json", "--schedule-out", order_csv, "--costs-out", costs_csv,
             "--trace-out", merged, "--html", html])
    if p.returncode != 0:
        failures.append(f"{case}: ppsched trace: exit {p.returncode}: {p.stderr[-400:]}")
        return
    report = json.loads(p.stdout)
    # The order: each rank's row of the first step, action for action.
    with open(order_csv, newline="") as f:
        rows = [line.rstrip("\r\n").split(",") for line in f if line.strip()]
    first = truth["steps"][0]["ranks"]
    for r in range(4):
        want = first[str(r)]["actions"]
        got = [c for c in rows[r] if c]
        if got != want:
            failures.append(f"{case}: rank {r}'s order differs from the truth at "
                            f"{next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))}")
    # The costs: the median of the truth's own actions per (stage, kind).
    samples = {}
    for a in truth["actions"]:
        if a["kind"] in ("F", "B", "I", "W") and a.get("container") is None:
            samples.setdefault((a["stage"], a["kind"]), []).append(a["gpu_time_us"])
    measured = {(c["stage"], c["kind"]): c["median_us"] for c in report["costs"]}
    for key, values in samples.items():
        want = statistics.median(values)
        got = measured.get(key)
        if got is None or abs(got / want - 1) > 0.01:
            failures.append(f"{case}: the cost of stage {key[0]} {key[1]} is {got}, the truth's median {want:.3f}")
    # The clocks and the time.
    for r, o in OFFSETS.items():
        if abs(report["clock_offset_us"][r] - o) > 1.0:
            failures.append(f"{case}: rank {r}'s clock offset is {report['clock_offset_us'][r]}, not {o}")
    for got, step in zip(report["iteration_us_per_step"], truth["steps"]):
        want = step["iteration_time_us"]
        if abs(got / want - 1) > 0.005:
            failures.append(f"{case}: {step['profiler_step']} took {got:.1f} us, the truth {want:.1f}")
    # The re-simulation: the order as run with the measured costs, in the communicator queues the NCCL
    # streams show, lands within 3% of the measured time when the host keeps ahead of its GPU; a host
    # that waits for its GPU loses launch gaps the simulator does not model, and the report shows them.
    if report["p2p_queues"]["queues"] != streams or not report["p2p_queues"]["basis"].startswith("as measured"):
        failures.append(f"{case}: the communicator queues read from the streams are {report['p2p_queues']}")
    error = report["simulated_iteration_us"] / report["measured_iteration_us"] - 1
    gaps = sum(r["launch_gap_us"] for r in report["ranks"])
    if not host_sync and abs(error) > 0.03:
        failures.append(f"{case}: the re-simulation is {100 * error:+.2f}% off the measured time")
    if host_sync and not (error < 0 and gaps > 0.01 * report["measured_iteration_us"]):
        failures.append(f"{case}: with host launch gaps the report says {100 * error:+.2f}% and {gaps:.0f} us of gaps")
    # The merged trace: a process per rank, an arrow per SEND/RECV pair; the page draws the run.
    with open(merged) as f:
        events = json.load(f)["traceEvents"]
    if {e["pid"] for e in events if e.get("ph") == "X"} != {0, 1, 2, 3}:
        failures.append(f"{case}: the merged trace does not hold every rank")
    if sum(1 for e in events if e.get("ph") == "s") != report["aligning_pairs"]:
        failures.append(f"{case}: the merged trace's arrows are not the SEND/RECV pairs")
    with open(html, encoding="utf-8") as f:
        page = f.read()
    if "<svg" not in page or "the simulator gives" not in page:
        failures.append(f"{case}: the HTML page has no chart or no simulated figure")
    # The measured costs are a cost table simulate reads, for the order as run.
    p = run([PPSCHED, "simulate", order_csv, "--costs", costs_csv, "--fill", "unit", "--views", "summary"])
    if p.returncode not in (0, 1):
        failures.append(f"{case}: simulate does not read the order and costs: {p.stderr[-300:]}")


with tempfile.TemporaryDirectory() as root:
    for family, v in FAMILIES:
        check_family(family, v, root)
        check_family(family, v, root, streams="per-rank")
    check_family("Interleaved1F1B", 2, root, host_sync=True)
    # Without PP annotations: refused, saying so.
    bare = os.path.join(root, "bare")
    run([sys.executable, GEN, "--synth-1f1b", "2,4", "--no-pp-annotations", "--out", bare])
    files = [os.path.join(bare, n) for n in os.listdir(bare) if n.startswith("rank")]
    p = run([PPSCHED, "trace", *files])
    if p.returncode != 2 or "no PP: ranges" not in p.stderr:
        failures.append(f"a trace without PP ranges: exit {p.returncode}: {p.stderr[-300:]}")

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
