// libFuzzer entry point for one target, chosen at compile time (PPSCHED_FUZZ_TARGET).
#include <cstdio>
#include <cstdlib>
#include <new>

#include <sys/mman.h>

#include "targets.hpp"

// fast-cpp-csv-parser's LineReader allocates a fixed 3 x 16 MiB buffer for every input, however
// small. ASan's allocator maps and poisons all 48 MiB (and its shadow) each time, which held the
// CSV targets to ~90 executions per second. In the fuzz executables only, that one size is
// mapped directly (pages are touched only as far as the input goes) and unmapped when freed;
// every other allocation goes to ASan's checked operator new as before.
namespace {
constexpr std::size_t kLineReaderBuffer = std::size_t{3} << 24;
constexpr int kMaxLive = 8;
void* live[kMaxLive] = {};  // blocks handed out and not yet freed
}  // namespace

void* operator new[](std::size_t n) {
  if (n != kLineReaderBuffer) return ::operator new(n);
  void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  for (void*& slot : live)
    if (!slot) {
      slot = p;
      return p;
    }
  std::abort();  // more than kMaxLive readers at once: not something ppsched does
}
void operator delete[](void* p) noexcept {
  for (void*& slot : live)
    if (p && slot == p) {
      munmap(p, kLineReaderBuffer);
      slot = nullptr;
      return;
    }
  ::operator delete(p);
}
void operator delete[](void* p, std::size_t) noexcept { operator delete[](p); }

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
