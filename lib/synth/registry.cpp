// The family registry (synth.hpp): one row per family, and the lookups and builders over it.
#include <array>
#include <limits>
#include <vector>

#include "diag/suggest.hpp"
#include "synth/families.hpp"

namespace ppsched {

namespace {

// Bubble formulas are per stage, from the papers that introduced each schedule; T_B is a full
// backward (T_I + T_W), v the stages per rank. The last three columns: the prefix builder (null:
// built whole), whether `ppsched tune` tries it by default, and its place in the automatic
// search's order (0: not used; the one-chunk families ZB-H1, ZB-H2, 1F1B, GPipe, the two-chunk
// ZBV, V-Half, V-Min).
constexpr std::array<Family, 13> kFamilies = {{
    {"GPipe", "ScheduleGPipe", "all forwards, then all backwards", PlacementStyle::Loop, 1, true, "m", "(p-1)(T_F+T_B)",
     "Huang et al. 2019; PyTorch ScheduleGPipe", "", &synth::gpipe, nullptr, true, 4},
    {"1F1B", "OneFOneB Schedule1F1B", "one forward, one backward in steady state", PlacementStyle::Loop, 1, true, "p",
     "(p-1)(T_F+T_B)", "Narayanan et al. 2021 (PipeDream-Flush); PyTorch Schedule1F1B", "m >= p", &synth::one_f_one_b,
     nullptr, true, 3},
    {"Interleaved1F1B", "ScheduleInterleaved1F1B", "1F1B over v looped stages per rank, depth first",
     PlacementStyle::Loop, 2, false, "p + (p-1)/v when p divides m", "(p-1)(T_F+T_B)/v",
     "Narayanan et al. 2021 (Megatron-LM); PyTorch ScheduleInterleaved1F1B", "m a multiple of max(1, m div p)",
     &synth::interleaved_1f1b, nullptr, true, 0},
    {"LoopedBFS", "ScheduleLoopedBFS", "every microbatch of a stage before the next stage (breadth first)",
     PlacementStyle::Loop, 2, false, "m", "(p-1)(T_F+T_B)/v",
     "Lamy-Poirier 2023 (Breadth-First PP); PyTorch ScheduleLoopedBFS", "", &synth::looped_bfs, nullptr, false, 0},
    {"InterleavedZeroBubble", "InterleavedZB ZB1P ScheduleInterleavedZeroBubble",
     "interleaved 1F1B with I/W split, W filling bubbles", PlacementStyle::Loop, 2, false, "p when p divides m",
     "(p-1)(T_F+T_I-T_W)/v", "Qi et al. 2024 (ZB1P); PyTorch ScheduleInterleavedZeroBubble",
     "m a multiple of max(1, m div p)", &synth::interleaved_zero_bubble, nullptr, true, 0},
    {"ZBVZeroBubble", "ZBV ZB-V ScheduleZBVZeroBubble", "V-shaped zero bubble, two chunks per rank", PlacementStyle::V,
     2, true, "p", "(p-1)(T_F+T_I-2T_W)/2 when T_F=T_I=T_W", "Qi et al. 2024, section 6; PyTorch ScheduleZBVZeroBubble",
     "", &synth::zbv_zero_bubble, nullptr, true, 1},
    {"DualPipeV", "ScheduleDualPipeV", "DeepSeek's DualPipe folded into a V, overlapping F and B", PlacementStyle::V, 2,
     true, "p+1/2", "(p/2-1)(T_F&B+T_B-3T_W)", "DeepSeek-V3 report 2024; PyTorch ScheduleDualPipeV", "m >= 2p",
     &synth::dualpipev, nullptr, true, 0},
    {"ZBH1", "ZB-H1", "1F1B with I/W split; W deferred by r to fill the cool-down", PlacementStyle::Loop, 1, true, "p",
     "(p-1)(T_F+T_I-T_W)", "Qi et al. 2024 (ZB-H1), handcrafted", "", &synth::zb_h1, nullptr, true, 1},
    {"ZBH2", "ZB-H2", "ZB-H1 with 2(p-r)-1 warm-up forwards: no bubble in steady state", PlacementStyle::Loop, 1, true,
     "2p-1", "(p-1)(T_F+T_I-2T_W)", "Qi et al. 2024 (ZB-H2), handcrafted", "", &synth::zb_h2, nullptr, true, 2},
    {"VHalf", "V-Half", "V-shaped building block at about half of 1F1B's activation memory", PlacementStyle::V, 2, true,
     "about p/2+1", "no closed form (pattern)",
     "Qi et al. 2024, Pipeline Parallelism with Controllable Memory (V-Half pattern)", "", &synth::v_half,
     &synth::v_half_prefix, true, 2},
    {"VMin", "V-Min", "V-shaped building block at about a third of 1F1B's activation memory", PlacementStyle::V, 2,
     true, "about p/3+1", "no closed form (pattern)",
     "Qi et al. 2024, Pipeline Parallelism with Controllable Memory (V-Min pattern)", "", &synth::v_min,
     &synth::v_min_prefix, true, 3},
    {"VHalfReordered", "V-Half-Reordered",
     "V-Half repeated, squeezed and reordered by the controllable-memory framework", PlacementStyle::V, 2, true,
     "at most V-Half's", "no closed form (reordered pattern)",
     "Qi et al. 2024, Pipeline Parallelism with Controllable Memory (framework over the V-Half block)", "p >= 2",
     &synth::v_half_reordered, nullptr, false, 0},
    {"VMinReordered", "V-Min-Reordered", "V-Min repeated, squeezed and reordered by the controllable-memory framework",
     PlacementStyle::V, 2, true, "at most V-Min's", "no closed form (reordered pattern)",
     "Qi et al. 2024, Pipeline Parallelism with Controllable Memory (framework over the V-Min block)", "p >= 2",
     &synth::v_min_reordered, nullptr, false, 0},
}};

bool same_name(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    auto lower = [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

}  // namespace

std::span<const Family> families() { return kFamilies; }

std::vector<std::string_view> tune_default_families() {
  std::vector<std::string_view> names;
  for (const Family& f : kFamilies)
    if (f.tune_default) names.push_back(f.name);
  return names;
}

bool is_auto_schedule(std::string_view name) { return same_name(name, "auto"); }

std::optional<RuntimeClass> runtime_class(std::string_view name) {
  if (same_name(name, "PipelineScheduleSingle")) return RuntimeClass::Single;
  if (same_name(name, "PipelineScheduleMulti") || same_name(name, "_PipelineScheduleRuntime"))
    return RuntimeClass::Multi;
  return std::nullopt;
}

std::string unknown_schedule_message(std::string_view name) {
  if (runtime_class(name)) {
    // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on the chain of operator+ here.
    std::string msg = "'";
    msg.append(name);
    msg.append(
        "' is the class PyTorch runs a schedule file with, not a schedule: it names no actions to synthesize; "
        "give a family (see `ppsched list`), or the schedule file itself");
    return msg;
  }
  std::vector<std::string_view> names;
  for (const Family& f : kFamilies) {
    names.push_back(f.name);
    for (std::string_view a = f.aliases; !a.empty();) {
      auto space = a.find(' ');
      names.push_back(a.substr(0, space));
      a = space == std::string_view::npos ? std::string_view() : a.substr(space + 1);
    }
  }
  std::string msg = "unknown schedule '" + std::string(name) + "'";
  if (auto near = closest_match(name, names)) msg += "; did you mean '" + *near + "'?";
  return msg + " (see `ppsched list`)";
}

const Family* find_family(std::string_view name) {
  for (const Family& f : kFamilies) {
    if (same_name(f.name, name)) return &f;
    std::string_view aliases = f.aliases;
    while (!aliases.empty()) {
      auto space = aliases.find(' ');
      if (same_name(aliases.substr(0, space), name)) return &f;
      if (space == std::string_view::npos) break;
      aliases.remove_prefix(space + 1);
    }
  }
  return nullptr;
}

namespace synth {

Schedule make_schedule(const SynthParams& p, std::uint32_t stages_per_rank, PlacementStyle style) {
  Schedule s;
  s.ranks.resize(p.ranks);
  s.num_stages = p.ranks * stages_per_rank;
  s.num_microbatches = p.microbatches;
  s.placement = Placement::for_shape(style, p.ranks, stages_per_rank);
  return s;
}

}  // namespace synth

namespace {

// The family named, with params checked and its stages per rank filled in; throws SynthError.
const Family& checked_family(std::string_view name, SynthParams& params) {
  const Family* family = find_family(name);
  if (!family) throw SynthError(unknown_schedule_message(name));
  if (params.ranks == 0) throw SynthError("--ranks must be at least 1");
  if (params.microbatches == 0) throw SynthError("--microbatches must be at least 1");
  if (params.stages_per_rank == 0) params.stages_per_rank = family->default_stages_per_rank;
  if (family->fixed_stages_per_rank && params.stages_per_rank != family->default_stages_per_rank) {
    std::uint32_t need = family->default_stages_per_rank;
    throw SynthError(std::string(family->name) + " requires exactly " + std::to_string(need) +
                     (need == 1 ? " stage" : " stages") + " per rank, but got " +
                     std::to_string(params.stages_per_rank) + ".");
  }
  std::uint64_t stages = std::uint64_t{params.ranks} * params.stages_per_rank;
  if (stages > Action::kMaxStage + 1u)
    throw SynthError("ranks x stages per rank = " + std::to_string(stages) + " stages, beyond ppsched's limit of " +
                     std::to_string(Action::kMaxStage + 1u));
  if (params.microbatches > Action::kMaxMicrobatch)
    throw SynthError("--microbatches beyond ppsched's limit of " + std::to_string(Action::kMaxMicrobatch));
  return *family;
}

}  // namespace

Schedule synthesize(std::string_view name, SynthParams params) { return checked_family(name, params).build(params); }

Schedule synthesize_prefix(std::string_view name, SynthParams params, std::uint64_t slots, bool& complete) {
  const Family& family = checked_family(name, params);
  complete = true;
  if (family.build_prefix) return family.build_prefix(params, slots, complete);
  return family.build(params);
}

}  // namespace ppsched
