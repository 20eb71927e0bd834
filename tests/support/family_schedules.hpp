// Every synthesized family at a few sizes, for tests that check a property on all of them.
#pragma once

#include <cstdint>
#include <initializer_list>

#include "synth/synth.hpp"

namespace ppsched::test {

/// Calls f(family, m, schedule) for every family at `ranks` ranks and each microbatch count in
/// `microbatches`, skipping the shapes a family refuses (SynthError: e.g. m not a multiple of p).
template <class F>
void for_each_family_schedule(std::uint32_t ranks, std::initializer_list<std::uint32_t> microbatches, F&& f) {
  for (const Family& family : families()) {
    for (std::uint32_t m : microbatches) {
      SynthParams p;
      p.ranks = ranks;
      p.microbatches = m;
      Schedule s;
      try {
        s = synthesize(family.name, p);
      } catch (const SynthError&) {
        continue;
      }
      f(family, m, s);
    }
  }
}

}  // namespace ppsched::test
