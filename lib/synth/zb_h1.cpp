// ZB-H1 (Zero Bubble paper): 1F1B's memory, a third of its bubble. See zb_handcrafted.hpp.
#include "synth/zb_handcrafted.hpp"

namespace ppsched::synth {

Schedule zb_h1(const SynthParams& p) { return zb_handcrafted(p, false); }

}  // namespace ppsched::synth
