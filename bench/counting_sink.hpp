// A ByteSink for the writer benchmarks: it discards what it is given and counts it, so a
// benchmark times the formatting alone and can still report bytes per second.
#pragma once

#include <benchmark/benchmark.h>

#include <cstddef>
#include <string_view>

#include "io/byte_sink.hpp"

class CountingSink final : public ppsched::ByteSink {
 public:
  void write(std::string_view bytes) override {
    benchmark::DoNotOptimize(bytes.data());
    bytes_ += bytes.size();
  }
  std::size_t bytes() const { return bytes_; }

 private:
  std::size_t bytes_ = 0;
};
