// A malloc meter for the quadratic-bait test (tests/cli/linear_time_test.sh), loaded with
// LD_PRELOAD into a Release ppsched: it counts the bytes every malloc, calloc and realloc asks
// for and, at exit, writes the total to the file named by PPSCHED_ALLOC_METER_OUT.
//
// Why bytes asked for and not time: a pass that allocates a per-rank array over all stages
// costs ranks x stages bytes that Release clears in a fraction of a second (fresh pages are
// never touched) but that ASan poisons byte by byte, for minutes. The total is exact and the
// same on every machine, so the test can bound it by the input's size.
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstdlib>

namespace {

std::atomic<unsigned long long> asked{0};
using MallocFn = void* (*)(std::size_t);
using CallocFn = void* (*)(std::size_t, std::size_t);
using ReallocFn = void* (*)(void*, std::size_t);

template <typename F>
F next_symbol(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

// dlsym itself may call calloc before the real one is known: serve it from a static buffer.
alignas(16) char bootstrap[4096];
std::size_t bootstrap_used = 0;
thread_local bool resolving = false;

}  // namespace

extern "C" void* malloc(std::size_t n) {
  static MallocFn real = next_symbol<MallocFn>("malloc");
  asked += n;
  return real(n);
}

extern "C" void* calloc(std::size_t count, std::size_t size) {
  static CallocFn real = nullptr;
  if (!real) {
    if (resolving) {  // dlsym's own request, before the real calloc is known
      std::size_t n = (count * size + 15) & ~std::size_t{15};
      if (bootstrap_used + n > sizeof bootstrap) return nullptr;
      void* p = bootstrap + bootstrap_used;
      bootstrap_used += n;
      return p;
    }
    resolving = true;
    real = next_symbol<CallocFn>("calloc");
    resolving = false;
  }
  asked += count * size;
  return real(count, size);
}

extern "C" void* realloc(void* p, std::size_t n) {
  static ReallocFn real = next_symbol<ReallocFn>("realloc");
  asked += n;
  return real(p, n);
}

extern "C" void free(void* p) {
  using FreeFn = void (*)(void*);
  static FreeFn real = next_symbol<FreeFn>("free");
  if (p >= static_cast<void*>(bootstrap) && p < static_cast<void*>(bootstrap + sizeof bootstrap)) return;
  real(p);
}

__attribute__((destructor)) static void write_total() {
  const char* path = std::getenv("PPSCHED_ALLOC_METER_OUT");
  if (!path) return;
  int fd = ::open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return;
  char line[32];
  int k = std::snprintf(line, sizeof line, "%llu\n", asked.load());
  if (k > 0) (void)!::write(fd, line, static_cast<std::size_t>(k));
  ::close(fd);
}
