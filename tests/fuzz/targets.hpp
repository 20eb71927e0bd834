// The fuzz targets: one entry point per reader, two properties over whole schedules, and one over
// the automatic search. The same functions run under libFuzzer (fuzz_main.cpp, built with
// -DPPSCHED_FUZZ=ON and clang) and in every normal build, where ppsched_fuzz_replay feeds them the
// seed corpora and the regression inputs through ctest. A target returns normally on any input; a
// crash, a sanitizer report, a hang or a failed property (a call to fuzz_fail, which aborts) is a
// finding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace ppsched::fuzz {

struct Target {
  std::string_view name;
  std::string_view summary;
  void (*run)(const std::uint8_t* data, std::size_t size);
};

std::span<const Target> targets();
const Target* find_target(std::string_view name);

/// A property does not hold: prints what and aborts (libFuzzer then saves the input).
[[noreturn]] void fuzz_fail(const char* what);

}  // namespace ppsched::fuzz
