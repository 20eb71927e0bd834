#!/usr/bin/env bash
# Runs one CLI golden case against the real binary and compares with its expectations.
#
#   run_case.sh PPSCHED CASE_DIR
#
# CASE_DIR/args holds the arguments, one per line (paths relative to the repository root,
# where ctest runs this); CASE_DIR/stdin, if present, is fed to standard input. The case
# passes when stdout, stderr and the exit code equal expected_stdout, expected_stderr and
# expected_exit. tests/cli/regen rewrites the expectations; review them as a diff.
set -u
bin=$1
case_dir=$2
mapfile -t args <"$case_dir/args"
stdin=/dev/null
[ -f "$case_dir/stdin" ] && stdin="$case_dir/stdin"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
NO_COLOR=1 "$bin" "${args[@]}" <"$stdin" >"$out/stdout" 2>"$out/stderr"
echo $? >"$out/exit"
if [ "${REGEN:-0}" = 1 ]; then
  for f in stdout stderr exit; do cp "$out/$f" "$case_dir/expected_$f"; done
  exit 0
fi
status=0
for f in stdout stderr exit; do
  if ! cmp -s "$case_dir/expected_$f" "$out/$f"; then
    echo "$(basename "$case_dir"): $f differs from expected_$f:"
    diff -u "$case_dir/expected_$f" "$out/$f" | head -40
    status=1
  fi
done
exit $status
