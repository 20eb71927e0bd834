// The one include of fast-cpp-csv-parser. g++ 12 -O2 warns (-Wstringop-truncation) inside
// csv.h even as a system header, so the warning is silenced around the include only.
// CSV_IO_NO_THREAD: reading happens on the calling thread. ppsched reads many small files in
// one run (validate), and a reader thread per file would cost more than it overlaps.
#pragma once

#define CSV_IO_NO_THREAD
#pragma GCC diagnostic push
#if !defined(__clang__)  // clang (the fuzz build) has no such warning and would warn about the pragma
#pragma GCC diagnostic ignored "-Wstringop-truncation"
#endif
#pragma GCC diagnostic ignored "-Wshadow"
#include <libfccp/csv.h>
#pragma GCC diagnostic pop
