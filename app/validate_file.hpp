// `ppsched validate` on one file: read it, settle what it is checked against (what the flags say,
// the rest read off the file), read the stage spec and cost table the flags give, run the rules,
// and return what was found for the faces of report/validate_*.hpp. The flags are bound in
// cmd_validate.cpp, which prints and picks the exit code.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "check/check.hpp"
#include "report/validate_formats.hpp"
#include "report/validate_report.hpp"
#include "sim_inputs.hpp"

namespace ppsched::cli {

/// What `ppsched validate` is asked, as its flags give it.
struct ValidateOptions {
  std::vector<std::string> files;
  std::string expect;  // compute-only | compute-comms | "" (detect)
  std::uint32_t ranks = 0, stages_per_rank = 0, microbatches = 0;
  std::string placement;  // loop | v | comma-separated list
  std::string schedule;   // a family: its placement and stages per rank
  std::string input_format = "auto";
  bool lenient = false;
  std::string dialect = "current";
  std::vector<std::string> enable, disable;
  bool werror = false;
  bool list_rules = false;
  std::string explain;
  std::string format = "text";
  std::string stage_spec;
  double max_bubble = -1, max_memory = -1;
  MemoryModelOptions memory_model;  // pytorch-liveness: --max-memory counts slots
  std::string bubble_definition = "global";
  std::string costs;
  std::string fill = "none";
  std::string pytorch_version;
  std::string send_mode = "rendezvous";
  std::string p2p_queues = "per-rank";
  bool quiet = false;
  std::string docs_url = kDocsBaseUrl;
};

/// What the flags settle once for every file.
struct ValidateRun {
  std::vector<std::pair<std::string, RuleLevel>> levels;  ///< --enable, --disable, in order (run_checks)
  bool pytorch_filters_non_grad_inputs = false;           ///< --pytorch-version 2.13 or later
  SendMode send_mode;
  P2pQueues p2p_queues = P2pQueues::PerRank;
};

/// Checks `file` ("-": stdin) as `opt` and `run` say. A file that cannot be read as a schedule is
/// a FileDiagnostics with `readable` false; nullopt, having said why, when the flags cannot be read
/// or do not hold for it (a placement, the family, the stage spec, the cost table).
std::optional<FileDiagnostics> validate_file(const ValidateOptions& opt, const ValidateRun& run,
                                             const std::string& file);

}  // namespace ppsched::cli
