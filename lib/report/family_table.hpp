// The `ppsched list` view: every schedule family with its shape and what it costs.
//
//   family          placement  stages per rank  peak memory  bubble per stage  peak at p=4 m=8
//   GPipe           loop       1                m            (p-1)(T_F+T_B)    8
//   DualPipeV       v          2                p+1          ...               needs m >= 2p ...
//
// The formulas come from the papers (synth/synth.hpp lists the sources). Given a configuration,
// the last column is computed from the synthesized schedule itself: the most microbatches any
// rank holds at once (a forward done, its weight gradient still to come; a chunk of a rank with
// v stages counts 1/v), or why the family cannot run that configuration.
// Text face for people, JSON face for tools.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ir/schedule.hpp"

namespace ppsched {

struct ListConfig {
  std::uint32_t ranks = 0, microbatches = 0, stages_per_rank = 0;  ///< 0 stages: family default
};

/// Peak over ranks of the microbatches held at once, as described above.
double peak_in_flight_microbatches(const Schedule& s);

std::string family_table_text(const std::optional<ListConfig>& config = {});
std::string family_table_json(const std::optional<ListConfig>& config = {});

}  // namespace ppsched
