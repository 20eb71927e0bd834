// Replays files through a fuzz target in a normal build (no fuzzer, no sanitizer needed):
//   ppsched_fuzz_replay TARGET PATH...     (a directory is walked recursively)
// ctest runs it over each target's seed corpora and regression inputs, so every machine checks
// them. Exit 0 when every file ran; a finding aborts, as under the fuzzer.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "targets.hpp"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s TARGET PATH...\ntargets:\n", argv[0]);
    for (const auto& t : ppsched::fuzz::targets())
      std::fprintf(stderr, "  %-14.*s %.*s\n", int(t.name.size()), t.name.data(), int(t.summary.size()),
                   t.summary.data());
    return 2;
  }
  const auto* target = ppsched::fuzz::find_target(argv[1]);
  if (!target) {
    std::fprintf(stderr, "unknown target '%s'\n", argv[1]);
    return 2;
  }
  std::vector<std::filesystem::path> files;
  for (int i = 2; i < argc; ++i) {
    std::filesystem::path p = argv[i];
    if (std::filesystem::is_directory(p)) {
      for (const auto& e : std::filesystem::recursive_directory_iterator(p))
        if (e.is_regular_file()) files.push_back(e.path());
    } else if (std::filesystem::exists(p)) {
      files.push_back(p);
    }
  }
  std::sort(files.begin(), files.end());
  const bool verbose = std::getenv("PPSCHED_FUZZ_VERBOSE") != nullptr;
  for (const auto& f : files) {
    if (verbose) std::fprintf(stderr, "%s\n", f.c_str());
    std::ifstream in(f, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    target->run(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  }
  std::printf("fuzz replay: %s ran %zu inputs\n", argv[1], files.size());
  return 0;
}
