// The faces of `ppsched tune`'s result (tune/tune.hpp): a ranked table, and the same as JSON.
//
//   # ppsched tune: 4 ranks, 8 microbatches, memory cap 4 (microbatches of activation per rank), costs F=1,...
//   # iteration time from the timed simulator; bubble = 1 - busy / (ranks x time); peak = activation memory
//   rank  schedule               shape         iteration  bubble      peak  verdict
//      1  auto                   v=1 m=8              27    11.1%         4  best
//      2  ZBH1                   v=1 m=8              27    11.1%         4  ties the best; peak 4 vs 4
//      -  ZBH2                   v=1 m=8              24     0.0%         7  over the cap: peak 7 > 4
//
// A rank is given only to the trials that fit; the verdict compares each with the best.
#pragma once

#include <string>

#include "tune/tune.hpp"

namespace ppsched {

/// Where the costs and sizes came from, as the report's header states them.
struct TuneSources {
  std::string cost;        ///< the per-rank shorthand in use ("F=1,I=1,W=1,B=2 (unit)" by default)
  std::string costs_file;  ///< empty: none
  std::string topology;
  std::string stage_spec;
};

std::string tune_text(const TuneRequest& request, const TuneSources& sources, const TuneResult& result);
std::string tune_json(const TuneRequest& request, const TuneSources& sources, const TuneResult& result);

}  // namespace ppsched
