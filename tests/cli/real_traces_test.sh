#!/usr/bin/env bash
# ppsched trace on real PyTorch profiler traces (tests/data/hta, from HolisticTraceAnalysis; run by
# ctest): none holds a pipeline's PP: ranges, so each is refused with exit 2 and a message that
# says so and how to record them; never a crash, whatever else the trace holds.
set -u
bin=$1
dir=$2
status=0
for f in "$dir"/*/*.json.gz; do
  out=$("$bin" trace "$f" 2>&1)
  rc=$?
  if [ $rc -ne 2 ] || ! grep -q "no PP: ranges" <<<"$out" || ! grep -q "record_function" <<<"$out"; then
    echo "FAIL: $f: exit $rc: $out"
    status=1
  fi
done
exit $status
