// ZB-H2 (Zero Bubble paper): 2p-1 microbatches of memory, no bubble in steady state.
// See zb_handcrafted.hpp.
#include "synth/zb_handcrafted.hpp"

namespace ppsched::synth {

Schedule zb_h2(const SynthParams& p) { return zb_handcrafted(p, true); }

}  // namespace ppsched::synth
