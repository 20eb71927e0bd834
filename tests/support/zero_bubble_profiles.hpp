// The per-pass profiles the op-level cost model is fitted on (and only these): the Zero Bubble
// paper's (arXiv 2401.10241) A100 SXM 80GB Megatron-LM runs, per middle stage of three blocks (22
// and 46 blocks padded to 24 and 48 over 8 and 16 stages): T_F, T_B (ppsched's I) and T_W, the
// mean over each model's three runs in tests/support/zero_bubble_runs.hpp. The model files are the
// shipped schedules/zb-gpt-*.model.json; the microbatch sizes are the paper's.
//
// One home: the cost-model test (tests/unit/model/op_cost_calibration_test.cpp) and the fit that
// prints it (bench/op_cost_fit.cpp) read it from here.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "diag/diagnostic.hpp"
#include "model/network.hpp"
#include "parse/model_json.hpp"
#include "support/zero_bubble_runs.hpp"

namespace ppsched::zb_profiles {

struct Profile {
  std::string_view model;  ///< as in zb_runs::Run::model
  std::string_view file;   ///< under schedules/
  std::uint32_t microbatch = 0;
  std::uint32_t blocks = 3;  ///< blocks of a middle stage
  double f_ms = 0, i_ms = 0, w_ms = 0;
};

/// Means of the runs of `model` in zb_runs::kRuns.
inline Profile profile(std::string_view model, std::string_view file) {
  Profile p{model, file};
  int n = 0;
  for (const zb_runs::Run& r : zb_runs::kRuns) {
    if (r.model != model) continue;
    p.microbatch = r.b;
    p.f_ms += r.t_f;
    p.i_ms += r.t_b;
    p.w_ms += r.t_w;
    ++n;
  }
  p.f_ms /= n;
  p.i_ms /= n;
  p.w_ms /= n;
  return p;
}

inline std::array<Profile, 2> profiles() {
  return {profile("1.5B", "zb-gpt-1.5b.model.json"), profile("14.6B", "zb-gpt-14.6b.model.json")};
}

/// The shipped model file of `p`, or nullopt (its diagnostics in `sink`).
inline std::optional<NetworkModel> load_model(const Profile& p, DiagnosticSink& sink) {
  return read_model(std::string(PPSCHED_SOURCE_DIR) + "/schedules/" + std::string(p.file), sink);
}

/// A middle stage's F, I and W from the model file alone, in ms, on `gpu`.
struct StageTimes {
  double f_ms = 0, i_ms = 0, w_ms = 0;
};

inline StageTimes predicted(const NetworkModel& m, const Profile& p, const GpuSpec& gpu) {
  const LayerCost c = layer_cost(m, m.layers[1], &gpu, p.microbatch);
  return {c.f_us * p.blocks / 1e3, c.i_us * p.blocks / 1e3, c.w_us * p.blocks / 1e3};
}

/// `r` with its middle-stage F, I and W priced from its model file on the A100 instead of
/// profiled (the op-level cost model with the runtime model: the calibration bench's second table).
inline zb_runs::Run priced(const zb_runs::Run& r) {
  for (const Profile& p : profiles()) {
    if (p.model != r.model) continue;
    DiagnosticSink sink;
    const auto m = load_model(p, sink);
    if (!m) throw std::runtime_error("cannot read schedules/" + std::string(p.file));
    const StageTimes t = predicted(*m, p, *find_gpu("a100"));
    zb_runs::Run out = r;
    out.t_f = t.f_ms;
    out.t_b = t.i_ms;
    out.t_w = t.w_ms;
    return out;
  }
  return r;
}

}  // namespace ppsched::zb_profiles
