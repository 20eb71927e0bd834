#!/usr/bin/env bash
# Output files are never lost or half-written (run by ctest):
#  - /dev/stdout redirected to a log file is appended to, not renamed over;
#  - -o naming the input file works (the input is read whole first);
#  - a write that hits a file-size limit (a stand-in for a full disk) leaves the old file and
#    no temporary file behind, and with SIGXFSZ ignored says so (EFBIG) with exit 2; /dev/full
#    (ENOSPC) gives exit 2 with the path;
#  - a FIFO is written in place;
#  - SIGTERM or SIGINT during a long compile exits 143 or 130 and leaves the old file and no
#    temporary file behind; SIGHUP ignored by the parent (nohup) stays ignored;
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

# The same with SIGXFSZ ignored by the parent, as a CI runner or a service manager may start it:
# the handler must not replace the inherited SIG_IGN (that made exit 153 with no message); the
# write fails with EFBIG, reported with the path, exit 2, the old file kept.
( ulimit -f 1024; trap '' XFSZ; exec "$bin" compile "$tmp/big.csv" -o "$tmp/out.csv" ) 2>"$tmp/err"
rc=$?
[ "$rc" -eq 2 ] || fail "file-size limit, SIGXFSZ ignored: exit $rc, expected 2"
grep -q "^ppsched: error: $tmp/out.csv: cannot write: File too large" "$tmp/err" ||
  fail "file-size limit, SIGXFSZ ignored: no message naming the path: $(cat "$tmp/err")"
[ "$(cat "$tmp/out.csv")" = precious ] || fail "file-size limit, SIGXFSZ ignored: old file clobbered"
leftover=$(find "$tmp" -name '.*ppsched-tmp*' | wc -l)
[ "$leftover" -eq 0 ] || fail "file-size limit, SIGXFSZ ignored: temporary file left behind"

# A full device (ENOSPC), as -o and as standard output: exit 2 naming what could not be written.
"$bin" compile "$tmp/big.csv" -o /dev/full 2>"$tmp/err"
rc=$?
[ "$rc" -eq 2 ] || fail "/dev/full: exit $rc, expected 2"
grep -q "^ppsched: error: /dev/full: cannot write: No space left on device" "$tmp/err" || fail "/dev/full: $(cat "$tmp/err")"
"$bin" compile "$tmp/big.csv" >/dev/full 2>"$tmp/err"
rc=$?
[ "$rc" -eq 2 ] || fail "stdout on /dev/full: exit $rc, expected 2"
grep -q "^ppsched: error: standard output: cannot write: No space left on device" "$tmp/err" ||
  fail "stdout on /dev/full: $(cat "$tmp/err")"

mkfifo "$tmp/fifo"
cat "$tmp/fifo" >"$tmp/from-fifo" &
"$bin" compile "$example" -o "$tmp/fifo" || fail "fifo: exit $?"
wait
[ -p "$tmp/fifo" ] || fail "fifo: replaced by a regular file"
cmp -s "$tmp/from-fifo" "$example" || fail "fifo: content differs"
# A compile of ~170 MB of CSV, stopped by a signal while it synthesizes or writes. Job control
# on: a non-interactive shell starts a background job with SIGINT ignored, and ppsched keeps a
# signal its parent ignores (below).
set -m
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

# A signal the parent ignores stays ignored (nohup): SIGHUP during the same compile is no stop.
echo "precious" >"$tmp/hup.csv"
( trap '' HUP; exec "$bin" compile --schedule ZBH1 --ranks 64 --microbatches 300000 -o "$tmp/hup.csv" ) 2>"$tmp/err" &
pid=$!
sleep 0.3
kill -s HUP "$pid" || fail "SIGHUP ignored: the compile ended before the signal; make it longer"
wait "$pid"
rc=$?
[ "$rc" -eq 0 ] || fail "SIGHUP ignored by the parent: exit $rc, expected 0"
[ "$(head -c 8 "$tmp/hup.csv")" != precious ] || fail "SIGHUP ignored by the parent: the file was not written"
set +m

# The reader of stdout goes away after one line: no message, no core dump, no error status.
"$bin" compile --schedule 1F1B --ranks 64 --microbatches 20000 2>"$tmp/pipe-err" | head -1 >/dev/null
rc=${PIPESTATUS[0]}
[ ! -s "$tmp/pipe-err" ] || fail "closed pipe: printed $(cat "$tmp/pipe-err")"
[ "$rc" -eq 0 ] || [ "$rc" -eq 141 ] || fail "closed pipe: exit $rc"
echo "output files: all checks passed"
