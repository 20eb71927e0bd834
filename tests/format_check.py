#!/usr/bin/env python3
"""Checks that every C and C++ file of the tree follows .clang-format (run by ctest).

The layout is Debian clang-format 14's reading of .clang-format: other major versions break
lines differently, so with no clang-format 14 the check says so and is skipped (exit 77), as it
is where clang-format is absent; scripts/install-deps installs it. A file that differs is named
with the first lines clang-format would change; `clang-format -i FILE` fixes it.

  format_check.py [REPO_ROOT]
"""
import os
import re
import shutil
import subprocess
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FOLDERS = ("app", "lib", "tests", "bench")
SUFFIXES = (".cpp", ".hpp", ".h", ".cc", ".c", ".cu", ".cuh")
SKIP = 77
WANTED_MAJOR = 14


def find_clang_format():
    """The path of a clang-format 14, or None with the reason."""
    why = "no clang-format on PATH"
    for name in (f"clang-format-{WANTED_MAJOR}", "clang-format"):
        path = shutil.which(name)
        if not path:
            continue
        out = subprocess.run([path, "--version"], capture_output=True, text=True).stdout
        m = re.search(r"version (\d+)\.", out)
        if m and int(m.group(1)) == WANTED_MAJOR:
            return path, None
        why = f"{path} is {out.strip() or 'of an unknown version'}"
    return None, why


def sources():
    """Every C/C++ file under the checked folders, build trees left out, sorted."""
    found = []
    for folder in FOLDERS:
        for dirpath, dirnames, files in os.walk(os.path.join(ROOT, folder)):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(("build", ".")))
            found += [os.path.join(dirpath, f) for f in files if f.endswith(SUFFIXES)]
    return sorted(found)


def main():
    tool, why = find_clang_format()
    if tool is None:
        print(f"format check skipped: needs clang-format {WANTED_MAJOR} ({why}); scripts/install-deps installs it")
        return SKIP
    files = sources()
    if not files:
        print(f"format check: no C/C++ file under {', '.join(FOLDERS)} of {ROOT}", file=sys.stderr)
        return 1
    # One clang-format per batch of files: it names each file it would change in its warnings
    # (FILE:LINE:COL: error: code should be clang-formatted).
    differing = {}
    for start in range(0, len(files), 64):
        batch = files[start:start + 64]
        run = subprocess.run([tool, "--dry-run", "--Werror", "--style=file", *batch], capture_output=True, text=True)
        for line in run.stderr.splitlines():
            m = re.match(r"(.+?):\d+:\d+: (?:error|warning):", line)
            if m and m.group(1) in batch:
                differing.setdefault(os.path.relpath(m.group(1), ROOT), []).append(line)
        named = {os.path.relpath(f, ROOT) for f in batch} & differing.keys()
        if run.returncode != 0 and not named:
            print(f"format check: clang-format failed on {batch[0]} and after:\n{run.stderr}", file=sys.stderr)
            return 1
    differing = sorted((rel, lines[:3]) for rel, lines in differing.items())
    for rel, lines in differing:
        print(f"{rel}: differs from .clang-format", file=sys.stderr)
        for line in lines:
            print(f"    {line}", file=sys.stderr)
    if differing:
        print(f"format check: {len(differing)} of {len(files)} files differ; run clang-format -i on them", file=sys.stderr)
        return 1
    print(f"format check: {len(files)} files follow .clang-format ({tool})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
