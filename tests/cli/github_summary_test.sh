#!/usr/bin/env bash
# validate --format github under GitHub Actions: the annotations on stdout, and every finding as a
# Markdown table appended to $GITHUB_STEP_SUMMARY (what was there before is kept).
#   github_summary_test.sh PPSCHED
set -uo pipefail
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if ! "${@:2}"; then echo "FAIL: $1"; fail=1; fi; }
neg=tests/conformance/pytorch/negative
files=("$neg"/1f1b_r2_s1_m3.runtime_order.*.csv schedules/1f1b-4ranks-8mb.csv)
echo "# earlier step output" >"$tmp/summary.md"
GITHUB_STEP_SUMMARY=$tmp/summary.md "$bin" validate --format github "${files[@]}" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "findings exit non-zero (got $rc)" test "$rc" -ne 0
check "the earlier summary is kept" grep -q '^# earlier step output$' "$tmp/summary.md"
check "the table's header" grep -q '^| file | line | column | severity | rule | message |$' "$tmp/summary.md"
annotations=$(grep -c '^::\(error\|warning\|notice\) file=' "$tmp/out")
# The notice says how many follow as plain lines, past GitHub's 10 per kind.
plain=$(sed -n 's/^::notice title=ppsched::\([0-9]*\) more finding(s) follow as plain lines.*/\1/p' "$tmp/out")
rows=$(grep -c '^| tests/' "$tmp/summary.md")
check "one row per finding ($rows rows, $annotations annotations + ${plain:-0} plain)" test "$rows" -eq $((annotations + ${plain:-0}))
check "more than GitHub annotates, so some follow as plain lines" test "${plain:-0}" -gt 0
check "some findings" test "$rows" -gt 0
check "the counts line names ${#files[@]} files" grep -q "^${#files[@]} files checked" "$tmp/summary.md"
# Without the variable nothing is written anywhere else, and stdout is the same.
"$bin" validate --format github "${files[@]}" >"$tmp/out2" 2>/dev/null
check "stdout does not depend on the summary" cmp -s "$tmp/out" "$tmp/out2"
# A summary file that cannot be written is a warning, not a failure of the check.
GITHUB_STEP_SUMMARY=/nonexistent/dir/summary.md "$bin" validate --format github schedules/1f1b-4ranks-8mb.csv >/dev/null 2>"$tmp/err3"
rc=$?
check "an unwritable summary keeps exit 0 (got $rc)" test "$rc" -eq 0
check "and says so" grep -q 'could not append the findings table' "$tmp/err3"
exit $fail
