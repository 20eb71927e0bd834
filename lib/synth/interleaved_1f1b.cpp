// Interleaved 1F1B (Megatron-LM's virtual pipeline), PyTorch's flexible variant: rounds of
// min(m, p) microbatches, depth first across a rank's looped stages.
#include "synth/families.hpp"
#include "synth/interleaved_ops.hpp"

namespace ppsched::synth {

Schedule interleaved_1f1b(const SynthParams& p) {
  InterleavedShape shape = interleaved_shape(p.ranks, p.microbatches, p.stages_per_rank, "Interleaved 1F1B");
  Schedule s = make_schedule(p, p.stages_per_rank, PlacementStyle::Loop);
  for (std::uint32_t r = 0; r < p.ranks; ++r) s.ranks[r].actions = interleaved_rank_ops(shape, r, false);
  return s;
}

}  // namespace ppsched::synth
