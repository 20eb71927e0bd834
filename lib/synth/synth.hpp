// Schedule synthesis: every PyTorch schedule family, byte for byte, plus the Zero Bubble
// authors' handcrafted ZB-H1 and ZB-H2 and their V-Half and V-Min patterns. One file per family;
// the registry (Family, registry.cpp) ties them together.
//
// A synthesizer returns the compute-only order that the family runs (PyTorch's
// `pipeline_order`), with the schedule's sizes and placement stated. Lowering to a schedule
// with communication is a separate pass (passes/passes.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ir/schedule.hpp"
#include "ir/user_error.hpp"

namespace ppsched {

/// Bad synthesis parameters (PyTorch's constructor rules, plus ppsched's limits): a user's error.
class SynthError : public UserError {
 public:
  using UserError::UserError;
};

struct SynthParams {
  std::uint32_t ranks = 0;
  std::uint32_t microbatches = 0;
  std::uint32_t stages_per_rank = 0;  ///< 0: the family's default
  /// Reproduce PyTorch's output where it is wrong (1F1B's invalid pipeline_order).
  bool pytorch_compat = false;
};

/// A schedule family: its names, shape, what the literature says it costs, how it is built, and
/// which commands use it by default. One row of the registry (registry.cpp) per family: a family
/// is added, or joins tune's defaults or the automatic search, by its row alone.
struct Family {
  std::string_view name;     ///< as PyTorch's get_schedule_class spells it ("ZBVZeroBubble")
  std::string_view aliases;  ///< other accepted names, space-separated
  std::string_view summary;
  PlacementStyle placement;
  std::uint32_t default_stages_per_rank;
  bool fixed_stages_per_rank;    ///< true: only default_stages_per_rank is allowed
  std::string_view peak_memory;  ///< peak activation memory per rank, in microbatches
  std::string_view bubble;       ///< idle time per stage, unit of the costs T_F, T_B (=T_I+T_W), T_I, T_W
  std::string_view source;       ///< where the schedule comes from
  std::string_view requires_;    ///< constraints on ranks/microbatches beyond ranks, m >= 1
  Schedule (*build)(const SynthParams&);
  /// The start of the schedule: every rank's program cut after its first `slots` slots, an exact
  /// prefix of build's; `complete` says whether nothing was cut. Null: the family is built whole
  /// (synthesize_prefix then calls build).
  Schedule (*build_prefix)(const SynthParams&, std::uint64_t slots, bool& complete);
  bool tune_default;  ///< in `ppsched tune`'s default set (tune_default_families)
  /// Whether the automatic search (lib/auto) uses it: 0 not; else its place, 1 first, among the
  /// families of its shape (one stage per rank in loop placement, or two in V) that the search
  /// measures as candidates; with two stages per rank it also squeezes them as patterns. The
  /// likely best goes first: it sets the mark that lets the others give up early.
  std::uint8_t auto_search_order;
};

std::span<const Family> families();

/// Case-insensitive lookup by name or alias; nullptr when unknown.
const Family* find_family(std::string_view name);

/// The names of the families in `ppsched tune`'s default set (Family::tune_default), in registry
/// order. The automatic schedule, not a family, is not among them.
std::vector<std::string_view> tune_default_families();

/// Whether `name` asks for the automatic schedule (lib/auto) rather than a family: "auto", in
/// any case. The one test for it, wherever a schedule name may be "auto".
bool is_auto_schedule(std::string_view name);

/// PyTorch's runtime classes that torchtitan names for a schedule file: PipelineScheduleSingle
/// (one stage per rank) and PipelineScheduleMulti (or _PipelineScheduleRuntime: any number, the
/// placement read from the file). They name no family.
enum class RuntimeClass { Single, Multi };
std::optional<RuntimeClass> runtime_class(std::string_view name);

/// Why `name` names no family: a runtime class, or an unknown name with the closest one.
std::string unknown_schedule_message(std::string_view name);

/// Builds a schedule. Throws SynthError for an unknown family ("did you mean ...?") or for
/// parameters the family does not accept, with PyTorch's wording where PyTorch has a rule.
Schedule synthesize(std::string_view family, SynthParams params);

/// The start of a family's schedule, for a caller that may read only that (the automatic
/// search's replays of V-Half and V-Min usually give up within the warm-up): a family with a
/// prefix builder (Family::build_prefix; V-Half and V-Min, which place one action or weight
/// gradient per slot) is cut after the first `slots` slots of every rank, each program an exact
/// prefix of synthesize's; `complete` says whether nothing was cut. Any other family is built
/// whole (complete = true). Same checks and errors as synthesize.
Schedule synthesize_prefix(std::string_view family, SynthParams params, std::uint64_t slots, bool& complete);

}  // namespace ppsched
