#!/usr/bin/env bash
# `validate --format sarif` against the SARIF 2.1.0 JSON schema (OASIS), checked with Debian's
# python3-jsonschema: every negative corpus file (findings with notes, deadlock cycles, parse
# errors), a clean run, several files in one log, and a stage-spec finding; and every way a run
# stops early (a stage spec that fits one file but not the next, an unknown rule, no file, an
# unknown family, an eager threshold with nothing to size the messages): each must still write a
# whole log that says executionSuccessful false with the error as a notification. An empty log
# fails the test. The schema comes
# from scripts/install-deps (.deps/sarif/); without it or without jsonschema the test is skipped
# (exit 77) and says which is missing.
set -u
bin=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
schema=$root/.deps/sarif/sarif-2.1.0-rtm.5.json
python=/usr/bin/python3
if [ ! -f "$schema" ]; then
  echo "skipped: $schema is missing (scripts/install-deps fetches it with npm)"
  exit 77
fi
if ! "$python" -c 'import jsonschema' 2>/dev/null; then
  echo "skipped: Debian's python3-jsonschema is not installed (scripts/install-deps installs it)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$root"
n=0
for f in tests/conformance/pytorch/negative/*.csv; do
  "$bin" validate --format sarif "$f" >"$tmp/$n.sarif" 2>/dev/null
  n=$((n + 1))
done
"$bin" validate --format sarif schedules/zbv-4ranks-8mb.csv --schedule ZBVZeroBubble >"$tmp/clean.sarif" 2>/dev/null
"$bin" validate --format sarif schedules/*.csv >"$tmp/many.sarif" 2>/dev/null
"$bin" validate --format sarif tests/fuzz/seeds/csv_strict/* >"$tmp/seeds.sarif" 2>/dev/null || true
# Runs that stop early: named stopped-*.sarif, each checked for its notification below.
spec_case=tests/cli/cases/validate-sarif-stage-spec-fits-one-schedule-not-the-other
"$bin" validate --format sarif --stage-spec $spec_case/two_stage_spec.json $spec_case/two_stages.csv \
  $spec_case/three_stages.csv >"$tmp/stopped-spec.sarif" 2>/dev/null
"$bin" validate schedules/zbv-4ranks-8mb.csv --format sarif --enable dead-lock >"$tmp/stopped-rule.sarif" 2>/dev/null
"$bin" validate --format sarif >"$tmp/stopped-nofile.sarif" 2>/dev/null
"$bin" validate --format sarif --schedule NoSuchFamily schedules/zbv-4ranks-8mb.csv >"$tmp/stopped-family.sarif" 2>/dev/null
"$bin" validate --format sarif --send-mode eager:1MiB schedules/zbv-4ranks-8mb.csv >"$tmp/stopped-eager.sarif" 2>/dev/null
"$bin" validate --format sarif --pytorch-version two schedules/zbv-4ranks-8mb.csv >"$tmp/stopped-version.sarif" 2>/dev/null
"$python" - "$schema" "$tmp" <<'PY'
import glob, json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
validator = jsonschema.Draft7Validator(schema)
files = sorted(glob.glob(sys.argv[2] + "/*.sarif"))
bad = 0
results = 0
for path in files:
    with open(path) as f:
        text = f.read()
    if not text.strip():
        print(f"{path}: empty: a CI step would upload nothing")
        bad += 1
        continue
    log = json.loads(text)
    if "/stopped-" in path:
        inv = log["runs"][0].get("invocations", [{}])[0]
        notes = inv.get("toolExecutionNotifications", [])
        if inv.get("executionSuccessful") is not False or not notes or notes[0].get("level") != "error":
            print(f"{path}: a run that stopped early must say executionSuccessful false with an error notification")
            bad += 1
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.path))
    for e in errors[:3]:
        print(f"{path}: {'/'.join(map(str, e.path))}: {e.message[:200]}")
    bad += bool(errors)
    results += sum(len(run.get("results", [])) for run in log.get("runs", []))
print(f"{len(files)} SARIF logs, {results} results, {bad} invalid against the SARIF 2.1.0 schema")
sys.exit(1 if bad or results == 0 else 0)
PY
