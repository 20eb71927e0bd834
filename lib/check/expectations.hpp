// What a schedule is checked against, resolved: the ranks, stages, microbatches and placement the
// caller expects (validate's --ranks, --stages-per-rank, --microbatches, --placement, --schedule),
// and for what the caller left open, what the schedule itself says, with a note on each guess so
// the report can name the flag that would pin it.
//
// Not here: looking up a family (synth/synth.hpp: the caller turns --schedule into a style and a
// stage count) and printing the notes (report/validate_text.hpp, report/validate_json.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "check/check.hpp"
#include "ir/placement.hpp"
#include "ir/schedule.hpp"

namespace ppsched {

/// What the caller expects a schedule to be. A count left at 0 and a placement left unspecified
/// are taken from the schedule (its stated value, else inferred from the actions).
struct Expectations {
  std::uint32_t ranks = 0;
  std::uint32_t stages_per_rank = 0;
  std::uint32_t microbatches = 0;
  PlacementStyle style = PlacementStyle::Unspecified;  ///< loop or v, from --placement or a family
  std::vector<std::uint32_t> stage_to_rank{};          ///< an explicit placement: wins over `style`
  bool expect_compute_only = false;                    ///< --expect compute-only
};

/// Reads a placement as --placement gives it into `want`: "loop" or "v" as the style, else the
/// rank of each stage ("0,1,1,0") as an explicit list; "" leaves `want` as it is. Throws
/// UserError naming the first item that is not a rank.
void parse_placement(const std::string& text, Expectations& want);

/// One value the context took from the schedule's actions because neither the caller nor the
/// schedule stated it.
struct Inference {
  std::string what;                     ///< "4 ranks (the row count)"
  std::vector<std::string_view> flags;  ///< the flags that would have stated it: {"--ranks"}
};

struct ResolvedContext {
  CheckContext context;
  std::vector<Inference> inferred;  ///< in the order ranks, stages, microbatches, placement
};

/// The context for checking `s` (read from `file`; `source` may be null) against `want`.
/// Throws UserError when `want` cannot hold: a v placement of a stage count that is
/// not a multiple of the ranks. The context points at `s` and `source`, which must outlive it.
/// `known`: infer_shape(s), where the caller has it (the reader gathers it), saving a pass.
ResolvedContext resolve_context(const Schedule& s, const SourceMap* source, std::string file, const Expectations& want,
                                const std::optional<InferredShape>& known = std::nullopt);

}  // namespace ppsched
