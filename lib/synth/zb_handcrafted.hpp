// The Zero Bubble paper's handcrafted single-chunk schedules share one shape (Qi et al., ICLR
// 2024, section 3): rank r runs `warmup_r` forwards, then for each microbatch k an I_k, the next
// forward, and the W that lags `lag_r` microbatches behind; the lagging Ws close the schedule.
//
//   ZB-H1: warmup = p-r, lag = r     -> at most p forwards whose W is pending (1F1B's peak), and
//          the r deferred Ws fill rank r's cool-down bubble: bubble (p-1)(T_F+T_I-T_W).
//   ZB-H2: warmup = 2(p-r)-1, lag = 2r -> at most 2p-1 pending; the extra warm-up forwards fill
//          the start and the Ws the end: no bubble in steady state, (p-1)(T_F+T_I-2T_W).
//          With fewer than 2p-2 microbatches it takes ZB-H1's shape, which already reaches the
//          lower bound 3m+p-1 (unit costs) there; the extra memory would buy nothing.
#pragma once

#include "synth/families.hpp"

namespace ppsched::synth {

Schedule zb_handcrafted(const SynthParams& p, bool h2);

}  // namespace ppsched::synth
