#!/usr/bin/env bash
# The GitHub problem matcher shipped in docs/github reads ppsched's text diagnostics: every
# error line of a real validate run matches it, with the file, line, column and rule id, and no
# caret or source line does. Run by ctest.
set -u
bin=$1
# The "regexp" value, its JSON escapes (\\) undone; sed only, so a fresh machine needs nothing more.
regexp=$(sed -n 's/^ *"regexp": "\(.*\)",$/\1/p' docs/github/ppsched-matcher.json | sed 's/\\\\/\\/g')
out=$(NO_COLOR=1 "$bin" validate tests/conformance/pytorch/negative/1f1b_r2_s1_m3.runtime_order.w_before_i.compute_only.csv)
matched=$(printf '%s\n' "$out" | grep -cP "$regexp")
errors=$(printf '%s\n' "$out" | grep -c ': error: ')
[ "$errors" -ge 2 ] || { echo "FAIL: expected at least 2 error lines"; exit 1; }
[ "$matched" -eq "$errors" ] || { echo "FAIL: $matched of $errors error lines match the matcher"; exit 1; }
printf '%s\n' "$out" | grep -P "$regexp" | grep -q '\[weight-before-input-grad\]$' || { echo "FAIL: rule id"; exit 1; }
echo "matcher: $matched/$errors error lines match"
