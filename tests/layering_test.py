#!/usr/bin/env python3
"""Keeps the include layering that one shared include path (lib/) cannot (run by ctest).

Every library under lib/ names what it depends on in its CMakeLists.txt (target_link_libraries).
This check reads those edges and fails when:
  - a file of lib/<area> includes "<other>/..." where <other>'s library is not among the
    libraries its own library links, directly or through them;
  - it includes <nlohmann/json.hpp> or <CLI/...> without linking nlohmann_json or CLI11;
  - the libraries' link edges form a cycle (static libraries would still link);
  - ppsched_sim links a reader: ppsched_parse, nlohmann_json or the CSV parser (the simulator
    takes its inputs as plain model types; docs/design.md);
  - a file of app/ or of lib/ outside lib/auto includes a header of lib/auto other than
    auto/auto_schedule.hpp (the search's policy, rounds and greedy are internal; tests/ and
    bench/ may include them).

  layering_test.py [REPO_ROOT]
"""
import os
import re
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIB = os.path.join(ROOT, "lib")
# Headers a library may include without linking their library, each with its reason.
SEAMS = {
    # The CUDA backend is a module that ppsched_run loads at run time: it implements the device
    # interface that header declares (header only) and must not link the runner that loads it.
    ("ppsched_cuda", "run/device.hpp"),
    # The MPI module, likewise: it implements ProcessGroup and defines the entry point the loader
    # in ppsched_run looks up, both header only.
    ("ppsched_mpi", "run/process_group.hpp"),
    ("ppsched_mpi", "run/mpi_module.hpp"),
    # Pure helpers of the multi-process CUDA device, header only so that the module can use them
    # and unit tests can check them without a GPU.
    ("ppsched_cuda", "run/overdue.hpp"),
    ("ppsched_cuda", "run/ping_pong.hpp"),
}
# The one header of lib/auto that app/ and the other libraries may include; the rest is internal.
AUTO_PUBLIC = "auto/auto_schedule.hpp"


def libraries():
    """{target: (folder relative to lib/, set of linked names)} from every lib/**/CMakeLists.txt."""
    found = {}
    for dirpath, _, files in os.walk(LIB):
        if "CMakeLists.txt" not in files or dirpath == LIB:
            continue
        text = open(os.path.join(dirpath, "CMakeLists.txt")).read()
        text = re.sub(r"#[^\n]*", "", text)
        for m in re.finditer(r"(?:ppsched_library|add_library)\(\s*(ppsched_\w+)", text):
            found[m.group(1)] = (os.path.relpath(dirpath, LIB), set())
        for m in re.finditer(r"target_link_libraries\(\s*(ppsched_\w+)([^)]*)\)", text):
            if m.group(1) in found:
                found[m.group(1)][1].update(w for w in m.group(2).split() if w not in ("PUBLIC", "PRIVATE", "INTERFACE"))
    return found


def closure(target, libs, seen=None):
    seen = set() if seen is None else seen
    for dep in libs.get(target, ("", set()))[1]:
        if dep not in seen:
            seen.add(dep)
            closure(dep, libs, seen)
    return seen


def cycle(libs):
    state = {}

    def visit(t, path):
        state[t] = 1
        for d in libs[t][1]:
            if d not in libs:
                continue
            if state.get(d) == 1:
                return path + [t, d]
            if d not in state:
                found = visit(d, path + [t])
                if found:
                    return found
        state[t] = 2
        return None

    for t in libs:
        if t not in state:
            found = visit(t, [])
            if found:
                return found
    return None


def auto_internals_outside(libs):
    """Includes of lib/auto's internal headers from app/ or from lib/ outside lib/auto."""
    auto_folder = next((f for t, (f, _) in libs.items() if t == "ppsched_auto"), None)
    if auto_folder is None:
        return ["no ppsched_auto library under lib/"]
    found = []
    for top in ("lib", "app"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            rel_dir = os.path.relpath(dirpath, ROOT)
            if rel_dir == os.path.join("lib", auto_folder) or rel_dir.startswith(os.path.join("lib", auto_folder) + os.sep):
                continue
            for name in sorted(files):
                if not name.endswith((".hpp", ".cpp", ".cu", ".h")):
                    continue
                path = os.path.join(dirpath, name)
                for n, line in enumerate(open(path, encoding="utf-8", errors="replace"), 1):
                    m = re.match(r'\s*#\s*include\s*"([^"]+)"', line)
                    if m and m.group(1).startswith(auto_folder + "/") and m.group(1) != AUTO_PUBLIC:
                        found.append(f'{os.path.join(rel_dir, name)}:{n}: includes "{m.group(1)}", internal to '
                                     f'lib/{auto_folder}: outside it only "{AUTO_PUBLIC}" is public')
    return found


def main():
    libs = libraries()
    folder_of = {t: f for t, (f, _) in libs.items()}
    # A file belongs to the library of the deepest folder that has one (lib/run/cuda before lib/run).
    folders = sorted(folder_of.items(), key=lambda kv: -len(kv[1]))
    problems = []
    c = cycle(libs)
    if c:
        problems.append("link cycle: " + " -> ".join(c))
    readers = {"ppsched_parse", "nlohmann_json::nlohmann_json", "ppsched_fccp"} & closure("ppsched_sim", libs)
    if readers:
        problems.append("ppsched_sim links a reader: " + ", ".join(sorted(readers)))
    checked = 0
    for dirpath, _, files in os.walk(LIB):
        for name in sorted(files):
            if not name.endswith((".hpp", ".cpp", ".cu")):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, LIB)
            owner = next((t for t, f in folders if rel.startswith(f + os.sep)), None)
            if owner is None:
                continue
            allowed = {owner} | closure(owner, libs)
            allowed_folders = {folder_of[t] for t in allowed if t in folder_of}
            for n, line in enumerate(open(path, encoding="utf-8", errors="replace"), 1):
                m = re.match(r'\s*#\s*include\s*([<"])([^>"]+)[>"]', line)
                if not m:
                    continue
                checked += 1
                header = m.group(2)
                where = f"lib/{rel}:{n}"
                if m.group(1) == "<":
                    if header.startswith("nlohmann/") and "nlohmann_json::nlohmann_json" not in allowed:
                        problems.append(f"{where}: includes <{header}> but {owner} does not link nlohmann_json")
                    if header.startswith("CLI/"):
                        problems.append(f"{where}: includes <{header}>: the command line is app/'s")
                    continue
                target_folder = os.path.dirname(header)
                if not target_folder or target_folder not in folder_of.values():
                    continue  # a header beside the file, or not a library's
                if target_folder not in allowed_folders and (owner, header) not in SEAMS:
                    lib = next(t for t, f in folder_of.items() if f == target_folder)
                    problems.append(f'{where}: includes "{header}" but {owner} does not link {lib}')
    problems += auto_internals_outside(libs)
    for p in problems:
        print(p)
    print(f"{len(libs)} libraries, {checked} includes checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
