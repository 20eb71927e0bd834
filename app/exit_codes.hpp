// The exit codes of every ppsched command (docs/manual.md, "Exit codes").
#pragma once

namespace ppsched::cli {

enum ExitCode : int {
  kExitOk = 0,
  kExitFindings = 1,     ///< the input was read, and checks found errors
  kExitUsage = 2,        ///< bad flags, unreadable or malformed input, unwritable output
  kExitInternal = 3,     ///< a bug in ppsched
  kExitOutOfMemory = 4,  ///< the request needs more memory than the process may have
  kExitNoGpu = 77,       ///< `run` found no usable GPU (ctest's skip code)
  kExitInterrupted = 130,
};

}  // namespace ppsched::cli
