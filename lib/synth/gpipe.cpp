// GPipe: every forward, then every backward. PyTorch's pipeline_order for this single-stage
// class has already been through _add_reduce_grad, which drops the idle padding and ends each
// rank with REDUCE_GRAD; that is what is returned here too.
#include "passes/passes.hpp"
#include "synth/families.hpp"

namespace ppsched::synth {

Schedule gpipe(const SynthParams& p) {
  Schedule s = make_schedule(p, 1, PlacementStyle::Loop);
  for (std::uint32_t r = 0; r < p.ranks; ++r) {
    auto& ops = s.ranks[r].actions;
    for (std::uint32_t m = 0; m < p.microbatches; ++m) ops.push_back(F(r, m));
    for (std::uint32_t m = 0; m < p.microbatches; ++m) ops.push_back(B(r, m));
  }
  return add_reduce_grad(s, p.microbatches);
}

}  // namespace ppsched::synth
