// An input that cannot be read becomes an ordinary diagnostic: "<path>: error: <reason> [io-error]".
#pragma once

#include "diag/diagnostic.hpp"
#include "io/byte_sink.hpp"

namespace ppsched {

inline Diagnostic io_diagnostic(const IoError& e) {
  Diagnostic d;
  d.rule = "io-error";
  d.loc.file = e.path();
  d.message = e.reason();
  return d;
}

}  // namespace ppsched
