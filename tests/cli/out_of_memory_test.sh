#!/usr/bin/env bash
# Out of memory is a clean exit (run by ctest): under an address-space limit (ulimit -v, standing
# in for a small machine or a cgroup), a request that passes the size budgets only because they
# were raised must end with exit 4 and one message naming what was being done, never a SIGABRT
# (std::bad_alloc escaping a thread or a noexcept path) or an internal error, and must leave an
# -o file as it was. tune runs its trials on several threads, so it covers the worker threads.
set -u
bin=$1
# ASan reserves terabytes of address space for its shadow memory: a limit stops it at start-up.
if [ "${2:-}" = sanitized ]; then
  echo "out of memory: skipped under the sanitizers (an address-space limit stops ASan at start-up)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
limit_kb=400000
check() {  # check NAME WHAT-IT-WAS-DOING ARGS...
  local name=$1 what=$2
  shift 2
  ( ulimit -v "$limit_kb"; exec "$bin" "$@" ) >/dev/null 2>"$tmp/err"
  local rc=$?
  if [ "$rc" -ne 4 ]; then
    echo "FAIL: $name: exit $rc, expected 4: $(head -c 400 "$tmp/err")"
    fail=1
  elif ! grep -q "^ppsched: error: out of memory while $what (ppsched $1): " "$tmp/err" ||
    [ "$(wc -l <"$tmp/err")" -ne 1 ]; then
    echo "FAIL: $name: not the one message naming '$what': $(cat "$tmp/err")"
    fail=1
  else
    echo "ok: $name"
  fi
}
echo precious >"$tmp/out.csv"
check "compile of 1000 x 100000" "synthesizing 1F1B for 1000 ranks and 100000 microbatches" \
  compile --schedule 1F1B --ranks 1000 --microbatches 100000 --max-schedule-gib 100 -o "$tmp/out.csv"
[ "$(cat "$tmp/out.csv")" = precious ] || { echo "FAIL: compile: -o file changed"; fail=1; }
check "simulate of 1000 x 100000" "synthesizing 1F1B for 1000 ranks and 100000 microbatches" \
  simulate --schedule 1F1B --ranks 1000 --microbatches 100000 --max-schedule-gib 100
check "list of 1000 x 100000" "building every family's schedule for --ranks and --microbatches" \
  list --ranks 1000 --microbatches 100000 --max-schedule-gib 100
check "tune of 300 x 40000, on every core" "running tune's 3 trials" \
  tune --ranks 300 --microbatches 40000 --families 1F1B,ZBH1,GPipe --max-schedule-gib 100 --time-budget 1000
exit $fail
