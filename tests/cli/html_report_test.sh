#!/usr/bin/env bash
# simulate --html in a real browser: headless Chromium loads the report (its script runs), and
# the DOM it dumps must hold what the page draws: every action of the timeline, a memory line
# per rank and the cap, the idle-time table, the zoom asked for in the link. Saves a screenshot
# (SCREENSHOT, default build/html-report.png) to look at. Exit 77 (skipped) without Chromium.
#   html_report_test.sh PPSCHED [SCREENSHOT]
set -uo pipefail
bin=$1
shot=${2:-build/html-report.png}
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$browser" ]; then
  echo "skipped: no Chromium (scripts/install-deps installs Debian's chromium)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if ! "${@:2}"; then echo "FAIL: $1"; fail=1; fi; }
"$bin" simulate --schedule ZBVZeroBubble --ranks 4 --microbatches 8 --memory-cap 5 --views summary -o /dev/null \
  --html "$tmp/report.html" || { echo "FAIL: simulate --html exited $?"; exit 1; }
# Self-contained: nothing is fetched at view time.
check "no script, style or image from elsewhere" bash -c "! grep -Eq '(src|href)=\"(https?:)?//' '$tmp/report.html'"
run_browser() {
  timeout 90 "$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars \
    --virtual-time-budget=3000 "$@" 2>"$tmp/browser.err"
}
# A browser that cannot start here (no display libraries, a container's limits) is not the
# report's fault: a trivial page tells the two apart.
echo '<p id="probe">ok</p>' >"$tmp/probe.html"
if ! run_browser --dump-dom "file://$tmp/probe.html" | grep -q 'id="probe"'; then
  echo "skipped: $browser cannot load a page here:"
  tail -5 "$tmp/browser.err"
  exit 77
fi
run_browser --dump-dom "file://$tmp/report.html#zoom=4" >"$tmp/dom.html"
check "the browser dumped the page" grep -q "<section id=\"timeline\">" "$tmp/dom.html"
check "the page's script ran" grep -q 'data-ready="1"' "$tmp/dom.html"
check "the link's zoom was applied" grep -q 'data-zoom="4"' "$tmp/dom.html"
# ZBV on 4 ranks x 8 microbatches: 4 x 8 x 2 stages x (F, I, W) = 192 compute actions, each a box.
boxes=$(grep -o '<rect class="k[FBIW][^"]*"' "$tmp/dom.html" | wc -l)
check "192 compute boxes (got $boxes)" test "$boxes" -ge 192
check "transfer arrows between the rows" test "$(grep -o 'class="xfer"' "$tmp/dom.html" | wc -l)" -gt 0
check "idle stretches tinted by cause" grep -q '<g class="idle">' "$tmp/dom.html"
check "one memory line per rank" test "$(grep -o '<polyline class="rank"' "$tmp/dom.html" | wc -l)" -eq 4
check "the cap is drawn" grep -q 'id="cap"' "$tmp/dom.html"
check "an idle-time row per rank, and the total" test "$(grep -o '<tr><td>[0-9a]' "$tmp/dom.html" | wc -l)" -ge 5
check "the summary says the iteration time" grep -q 'iteration time' "$tmp/dom.html"
# tune --html: a dot per candidate that ran, the cap, the pick ringed and named.
"$bin" tune --ranks 4 --microbatches 8 --memory-cap 4 --html "$tmp/tune.html" >"$tmp/tune.txt" ||
  { echo "FAIL: tune --html exited $?"; exit 1; }
run_browser --dump-dom "file://$tmp/tune.html" >"$tmp/tune-dom.html"
check "the tune page's script ran" grep -q 'data-ready="1"' "$tmp/tune-dom.html"
ran=$(grep -c "" <(grep -o '<circle class="candidate' "$tmp/tune-dom.html"))
check "a dot per candidate that ran ($ran)" test "$ran" -ge 5
check "one pick, ringed" test "$(grep -o 'class="candidate winner"' "$tmp/tune-dom.html" | wc -l)" -eq 1
check "the tune page draws the cap" grep -q 'id="cap"' "$tmp/tune-dom.html"
best=$(sed -n 's/^ *1  *\([A-Za-z0-9]*\) .*/\1/p' "$tmp/tune.txt" | head -1)
check "the page names the table's pick ($best)" grep -q "<p id=\"winner\">best: $best " "$tmp/tune-dom.html"
mkdir -p "$(dirname "$shot")"
run_browser --screenshot="$shot" --window-size=1100,1100 "file://$tmp/report.html" >/dev/null
check "a screenshot was saved to $shot" test -s "$shot"
[ $fail = 0 ] && echo "ok: the HTML report in $("$browser" --version 2>/dev/null)"
exit $fail
