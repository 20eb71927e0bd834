#!/usr/bin/env python3
"""The CI-safety rule (docs/ci.md, "What ppsched never prints"), tried as an attacker would.

Runs every subcommand and output format on schedules, stage specs and runtime files whose names
and contents hold GitHub workflow commands ("::add-mask::", "::stop-commands::", "::error
title=x::", "##[group]"), terminal escapes, NUL, CR, C1 and bidi controls, and fails when any
line ppsched writes to stdout or stderr
  - starts (after blanks) with "::", unless it is an annotation ppsched built itself
    (validate --format github's stdout: ::error|warning|notice file=...,title=ppsched ...::),
  - holds "##[" (a legacy workflow command, taken anywhere in a line),
  - holds a control byte other than tab, or CR that does not end a CRLF line, or C1 (U+0080-9F),
and when a torchtitan.toml that tune --emit-best writes is not valid TOML (python3 tomllib).

  ci_safety_test.py PPSCHED
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

BIN = os.path.abspath(sys.argv[1])
OWN_ANNOTATION = re.compile(
    rb"^::(error|warning|notice) (file=[^:,\r\n]*(,line=[0-9]+(,col=[0-9]+,endColumn=[0-9]+)?)?,)?"
    rb"title=ppsched( [a-z0-9-]+)?::")
failures = []
runs = 0


def check_stream(label, data, annotations_allowed):
    for n, line in enumerate(data.split(b"\n"), 1):
        body = line[:-1] if line.endswith(b"\r") else line
        where = f"{label}, line {n}: {body[:120]!r}"
        if body.lstrip(b" \t").startswith(b"::"):
            if not (annotations_allowed and OWN_ANNOTATION.match(body)):
                failures.append(f"starts a workflow command: {where}")
        if b"##[" in body:
            failures.append(f"holds '##[': {where}")
        if any((c < 0x20 and c != 0x09) or c == 0x7F for c in body):
            failures.append(f"holds a control byte: {where}")
        if re.search(rb"\xc2[\x80-\x9f]", body):
            failures.append(f"holds a C1 control: {where}")


def run(args, cwd, env=None):
    global runs
    runs += 1
    e = dict(os.environ, NO_COLOR="1")
    e.pop("GITHUB_STEP_SUMMARY", None)
    if env:
        e.update(env)
    p = subprocess.run([BIN] + args, cwd=cwd, capture_output=True, env=e, timeout=120)
    label = "ppsched " + " ".join(repr(a) for a in args)
    github = "--format" in args and args[args.index("--format") + 1] == "github"
    check_stream(label + " (stdout)", p.stdout, github)
    check_stream(label + " (stderr)", p.stderr, False)
    return p


HOSTILE = ["::add-mask::x", "::stop-commands::tok", "::error title=x::forged", "  ::warning::y",
           "##[group]g", "\x1b]0;title\x07", "\x1b[2J", "a\x00b", "cr\rx", "\xc2\x9b31m", "\u202e"]

with tempfile.TemporaryDirectory() as d:
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    good = open(os.path.join(root, "schedules", "1f1b-4ranks-8mb.csv"), "rb").read()
    names = ["::add-mask::s.csv", "::stop-commands::t.csv", "::error title=x::e.csv", " ::notice::n.csv",
             "##[group]g.csv", "a b#c.csv"]
    files = []
    for i, name in enumerate(names):
        open(os.path.join(d, name), "wb").write(good)  # a valid schedule under a hostile name
        files.append(name)
    for i, cell in enumerate(HOSTILE):  # hostile cells, each at a line's start and inside one
        name = f"cells{i}.csv"
        open(os.path.join(d, name), "wb").write(("%s\n0F0,%s,0B0\n" % (cell, cell)).encode("utf-8", "surrogateescape"))
        files.append(name)
    open(os.path.join(d, "::add-mask::empty.csv"), "wb").write(b"")
    files.append("::add-mask::empty.csv")
    # JSON schedule and stage spec with hostile keys and names.
    open(os.path.join(d, "::add-mask::j.json"), "w").write(
        '{"schema_version": 1, "::add-mask::key\\u001b[2J": 1, "programs": [["0F0", "::error title=x::c"]]}')
    files.append("::add-mask::j.json")
    spec = os.path.join(d, "::add-mask::spec.json")
    open(spec, "w").write(
        '{"schema_version": 1, "::stop-commands::k": 1, "stages": [' +
        ", ".join('{"activation_bytes": 1, "inputs": [{"name": "::add-mask::in\\u001b[31m", "requires_grad": true}]}'
                  for _ in range(4)) + "]}")
    params = os.path.join(d, "::add-mask::params.json")
    open(params, "w").write('{"schema_version": 1, "runtime": "megatron", "hardware": '
                            '"A100\\n::add-mask::x\\n[evil]\\nkey = 1\\u001b[2J\\u0000 \\"q\\" \\\\ ##[group]", '
                            '"p2p_call_overhead_us": 900}')

    for fmt in ["text", "json", "sarif", "github"]:
        run(["validate", "--format", fmt] + files, d)
        run(["validate", "--format", fmt, "--schedule", "1F1B", "--stage-spec", spec] + files[:2], d)
    run(["validate", "-q"] + files, d)
    run(["validate", "--format", "github"] + files * 3, d)  # past 10 per kind: plain lines
    summary = os.path.join(d, "summary.md")
    run(["validate", "--format", "github"] + files, d, env={"GITHUB_STEP_SUMMARY": summary})
    text = open(summary, "rb").read()
    if re.search(rb"<(?!br>)", text):
        failures.append("the step summary holds raw HTML")
    for name in files:
        for args in (["simulate", name], ["simulate", name, "--format", "json"], ["compile", name],
                     ["compile", name, "--format", "text"], ["compile", name, "--format", "json"]):
            run(args, d)
    run(["simulate", files[0], "--stage-spec", spec], d)
    run(["simulate", files[0], "--runtime", "megatron", "--runtime-params", params, "--cost", "F=1000,B=2000,W=1000"],
        d)
    out = os.path.join(d, "::add-mask::best")
    tune = ["tune", "--ranks", "4", "--global-batch", "8", "--runtime", "megatron", "--runtime-params", params,
            "--cost", "F=1000,B=2000,W=1000", "--top", "3"]
    for fmt in ["text", "json", "csv"]:
        run(tune + ["--format", fmt], d)
    p = run(tune + ["--emit-best", out], d)
    toml = os.path.join(out, "torchtitan.toml")
    if p.returncode != 0 or not os.path.exists(toml):
        failures.append(f"tune --emit-best failed: {p.stderr[-300:]!r}")
    else:
        text = open(toml, "rb").read()
        check_stream("torchtitan.toml", text, False)
        try:
            import tomllib
        except ImportError:
            tomllib = None
        if tomllib:
            try:
                parsed = tomllib.loads(text.decode("utf-8"))
                if set(parsed) != {"parallelism", "training"}:
                    failures.append(f"torchtitan.toml has tables {sorted(parsed)}: injected")
            except Exception as e:  # noqa: BLE001
                failures.append(f"torchtitan.toml is not valid TOML: {e}")
    bad_dir = os.path.join(d, "dir\udcff").encode("utf-8", "surrogateescape")
    p = subprocess.run([BIN.encode()] + [a.encode() for a in tune] + [b"--emit-best", bad_dir], cwd=d,
                       capture_output=True, timeout=120)
    check_stream("tune --emit-best (non-UTF-8 dir) stderr", p.stderr, False)
    if p.returncode != 2 or os.path.exists(os.path.join(bad_dir, b"schedule.csv")):
        failures.append(f"a non-UTF-8 --emit-best directory is not refused with exit 2 and no files: {p.returncode}")
    run(["list"], d)
    for cell in (c for c in HOSTILE if "\x00" not in c):  # an argument cannot hold NUL
        run([cell], d)  # unknown command
        run(["validate", "--expect", cell, files[0]], d)  # a bad value
        run(["validate", "--" + cell.strip(), files[0]], d)  # an unknown option
        run(["validate", "--docs-url", "https://x.org/" + cell + "/", "--format", "sarif", files[0]], d)
        run(["simulate", "--schedule", cell, "--ranks", "2", "--microbatches", "2"], d)  # did you mean
        run(["simulate", files[0], "--cost", cell], d)
    run(["run", "--schedule", "1F1B", "--ranks", "2", "--microbatches", "2", "--backend", "fake", "--format", "json",
         "--runtime-params", params], d)

if failures:
    for f in failures[:60]:
        print("FAILED:", f)
    print(f"{len(failures)} failure(s) in {runs} runs")
    sys.exit(1)
print(f"ok: {runs} runs, no line starts a workflow command or carries a control byte")
