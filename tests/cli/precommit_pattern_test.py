"""The pre-commit hook's file pattern (.pre-commit-hooks.yaml) against the paths users keep.

pre-commit selects a file when re.search(files, path) matches and re.search(exclude, path) does
not; this test applies the same two searches to paths that must and must not be selected.
Usage: precommit_pattern_test.py REPO_ROOT
"""
import re
import sys

root = sys.argv[1]
patterns = {}
for line in open(f"{root}/.pre-commit-hooks.yaml"):
    m = re.match(r"\s*(files|exclude):\s*'(.*)'\s*$", line)
    if m:
        patterns[m.group(1)] = m.group(2)
files, exclude = re.compile(patterns["files"]), re.compile(patterns["exclude"])


def selected(path):
    return bool(files.search(path)) and not exclude.search(path)


must = [
    "tests/assets/custom_schedule.csv",  # where torchtitan keeps its test schedule
    "custom_schedule.csv",
    "schedules/1f1b-4ranks-8mb.csv",
    "schedules/zbv-4ranks-8mb.json",
    "schedules/llama/zbv.csv",
    "configs/schedule/llama_zbv.csv",
    "pp/my_schedule_v2.csv",
    "runs/70b.schedule.json",
]
must_not = [
    "schedules/stage_spec.json",
    "schedules/llama.stage-spec.json",
    "schedules/stagespec.json",
    "schedules/topology.json",
    "schedules/cluster.topology.json",
    "schedules/costs.csv",
    "schedules/measured.costs.csv",
    "schedules/cost_table.csv",
    "schedules/llama3-70b.model.json",
    "schedules/megatron-a100.runtime.json",
    "schedules/README.md",
    "data/train.csv",
    "schedules/sub/deeper.csv.bak",
    "results/schedule_times.json",
]
failures = [p for p in must if not selected(p)] + [p for p in must_not if selected(p)]
for p in failures:
    print(f"FAIL: {p} is {'not ' if p in must else ''}selected")
sys.exit(1 if failures else 0)
