#!/usr/bin/env bash
# Output files are never lost or half-written (run by ctest):
#  - /dev/stdout redirected to a log file is appended to, not renamed over;
#  - -o naming the input file works (the input is read whole first);
#  - a write that hits a file-size limit (a stand-in for a full disk) leaves the old file and
#    no temporary file behind;
#  - a FIFO is written in place;
#  - SIGTERM or SIGINT during a long compile exits 143 or 130 and leaves the old file and no
#    temporary file behind;
#  - writing into a pipe whose reader has gone (| head -1) ends quietly.
set -u
bin=$1
example=schedules/zbv-4ranks-8mb.csv
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

{ echo before; "$bin" compile "$example" -o /dev/stdout; echo after; } >"$tmp/log"
head -1 "$tmp/log" | grep -qx before || fail "/dev/stdout: the text written before was lost"
tail -1 "$tmp/log" | grep -qx after || fail "/dev/stdout: the text written after was lost"
[ "$(wc -l <"$tmp/log")" -eq $((2 + $(wc -l <"$example"))) ] || fail "/dev/stdout: wrong line count"

cp "$example" "$tmp/same.csv"
"$bin" compile "$tmp/same.csv" --format json -o "$tmp/same.csv" || fail "-o = input: exit $?"
grep -q '"schema_version": 1' "$tmp/same.csv" || fail "-o = input: not replaced by JSON"

# A 4 MB schedule written under a 1 MB file-size limit must fail and leave the old file.
awk 'BEGIN { for (r = 0; r < 4; r++) { for (m = 0; m < 60000; m++) printf "%s%dF%d", (m ? "," : ""), r, m; printf "\n" } }' >"$tmp/big.csv"
echo "precious" >"$tmp/out.csv"
( ulimit -f 1024; exec "$bin" compile "$tmp/big.csv" -o "$tmp/out.csv" ) 2>"$tmp/err"
rc=$?
[ "$rc" -ne 0 ] || fail "file-size limit: exit 0"
[ "$(cat "$tmp/out.csv")" = precious ] || fail "file-size limit: old file clobbered"
leftover=$(find "$tmp" -name '.*ppsched-tmp*' | wc -l)
[ "$leftover" -eq 0 ] || fail "file-size limit: temporary file left behind"

mkfifo "$tmp/fifo"
cat "$tmp/fifo" >"$tmp/from-fifo" &
"$bin" compile "$example" -o "$tmp/fifo" || fail "fifo: exit $?"
wait
[ -p "$tmp/fifo" ] || fail "fifo: replaced by a regular file"
cmp -s "$tmp/from-fifo" "$example" || fail "fifo: content differs"
# A compile of ~170 MB of CSV, stopped by a signal while it synthesizes or writes.
for sig in TERM INT; do
  echo "precious" >"$tmp/sig.csv"
  "$bin" compile --schedule ZBH1 --ranks 64 --microbatches 300000 -o "$tmp/sig.csv" 2>"$tmp/err" &
  pid=$!
  sleep 0.7
  kill -s "$sig" "$pid"
  wait "$pid"
  rc=$?
  want=$([ "$sig" = TERM ] && echo 143 || echo 130)
  [ "$rc" -eq "$want" ] || fail "SIG$sig: exit $rc, expected $want"
  [ "$(cat "$tmp/sig.csv")" = precious ] || fail "SIG$sig: old file clobbered"
  leftover=$(find "$tmp" -name '.*ppsched-tmp*' | wc -l)
  [ "$leftover" -eq 0 ] || fail "SIG$sig: temporary file left behind"
done

# The reader of stdout goes away after one line: no message, no core dump, no error status.
"$bin" compile --schedule 1F1B --ranks 64 --microbatches 20000 2>"$tmp/pipe-err" | head -1 >/dev/null
rc=${PIPESTATUS[0]}
[ ! -s "$tmp/pipe-err" ] || fail "closed pipe: printed $(cat "$tmp/pipe-err")"
[ "$rc" -eq 0 ] || [ "$rc" -eq 141 ] || fail "closed pipe: exit $rc"
echo "output files: all checks passed"
