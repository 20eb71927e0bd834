// libFuzzer entry point for one target, chosen at compile time (PPSCHED_FUZZ_TARGET).
#include <cstdio>
#include <cstdlib>

#include "targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const ppsched::fuzz::Target* target = [] {
    const auto* t = ppsched::fuzz::find_target(PPSCHED_FUZZ_TARGET);
    if (!t) {
      std::fprintf(stderr, "unknown fuzz target %s\n", PPSCHED_FUZZ_TARGET);
      std::abort();
    }
    return t;
  }();
  target->run(data, size);
  return 0;
}
