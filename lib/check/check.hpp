// The schedule linter: rules that find what a GPU run would hit, reported as diagnostics.
//
// A rule is a row of one table (rules()): a stable kebab-case id, a default level, a one-line
// summary, help that says how to fix it, and the function that checks it. The same table feeds
// `validate --list-rules`, SARIF's rules[] and docs/rules.md. Rules read a CheckContext: the
// schedule, where its actions came from, and what it is expected to be (ranks, stages,
// microbatches, placement). The output faces (text, JSON, SARIF, GitHub) are in lib/report.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "diag/diagnostic.hpp"
#include "ir/schedule.hpp"
#include "model/comm.hpp"
#include "model/costs.hpp"
#include "sim/activation_liveness.hpp"
#include "sim/p2p_queues.hpp"
#include "sim/send_mode.hpp"

namespace ppsched {

struct LeafCensus;

namespace check {
class ActionIndex;
struct Simulation;
struct Liveness;
}  // namespace check

/// What the schedule is checked against. Values the caller did not know are inferred by
/// resolve_context (check/expectations.hpp), and a note says so.
struct CheckContext {
  const Schedule* schedule = nullptr;
  const SourceMap* source = nullptr;  ///< may be null (synthesized schedules)
  std::string file;                   ///< for locations when there is no source map
  std::uint32_t ranks = 0;
  std::uint32_t stages = 0;
  std::uint32_t microbatches = 0;
  std::vector<std::uint32_t> stage_to_rank;  ///< indexed by stage
  bool has_comms = false;                    ///< the file has SEND/RECV: a compute_comms schedule
  bool expect_compute_only = false;          ///< --expect compute-only
  bool placement_inferred = true;            ///< stage_to_rank came from the schedule itself
  /// From --stage-spec: per stage, its inputs and whether each requires grad; null: unknown.
  const std::vector<StageSpec>* stage_spec = nullptr;
  /// From --pytorch-version: the release the schedule will run on filters stage inputs that do
  /// not require grad out of stage_backward_input (PyTorch 2.13 and later), so an I on such a stage
  /// runs there. False (unknown or older): the check assumes the failing behaviour.
  bool pytorch_filters_non_grad_inputs = false;
  /// From --send-mode: the send semantics the deadlock rule and the thresholds simulate under
  /// (sim/send_mode.hpp). Rendezvous, the default, is the strict case: a schedule that finishes
  /// under it finishes under any eager threshold. An eager threshold compares it with the stage
  /// spec's message sizes (stage_spec).
  SendMode send_mode;
  /// From --p2p-queues: which SENDs and RECVs of a rank share an in-order communicator queue in
  /// the deadlock rule's simulation (sim/p2p_queues.hpp). Per-rank, the default, is the strict case.
  P2pQueues p2p_queues = P2pQueues::PerRank;
  /// Thresholds for CI (< 0: off): bubble ratio (global, or per stage) and peak memory per rank
  /// (microbatches of activation, or bytes with a stage spec), from a timed simulation with
  /// `costs` (null: unit costs).
  double max_bubble = -1;
  bool bubble_per_stage = false;
  double max_memory = -1;
  const CostModel* costs = nullptr;
  /// From --memory-model pytorch-liveness: max_memory counts PyTorch's activation slots per rank
  /// at this granularity (sim/activation_liveness.hpp), over the file's order, instead of the
  /// simulation's peak. Nullopt: the byte model.
  std::optional<LivenessGranularity> memory_liveness;
  /// Built on first use and shared by the rules.
  mutable std::shared_ptr<const check::ActionIndex> index;
  mutable std::shared_ptr<const check::Simulation> simulation;
  /// What the structure proof saw of every leaf, when it proved the schedule clean: the
  /// simulation reads it instead of the actions (sim/leaf_census.hpp).
  mutable std::shared_ptr<const LeafCensus> census;
  mutable std::shared_ptr<const check::Liveness> liveness;
};

/// A context with what `s` itself says: its row count as the ranks, its stated (else inferred) stage
/// and microbatch counts, whether it has comms, and `stage_to_rank` as a known placement. Callers
/// then set what they know better (a manifest's sizes, --expect, thresholds).
CheckContext context_for(const Schedule& s, std::vector<std::uint32_t> stage_to_rank, std::string file,
                         const SourceMap* source = nullptr);

enum class RuleLevel : std::uint8_t { Off, Note, Warning, Error };

/// The first PyTorch release whose stage_backward_input skips inputs that do not require grad
/// (pytorch/pytorch#182182, opened 2026-05-01, after 2.12's branch cut in April 2026 and before
/// 2.13's in June 2026).
inline constexpr int kPytorchFiltersNonGradInputs[2] = {2, 13};

/// Reads "2.12", "2.13.0" or "2.13.0a0+git1234" as {major, minor}; nullopt when it is not one.
std::optional<std::pair<int, int>> parse_pytorch_version(std::string_view text);

enum class ProvenBy : std::uint8_t { Never, Structure, StructureAndComms };

struct Rule {
  std::string_view id;
  RuleLevel level;
  std::string_view summary;
  std::string_view help;
  void (*check)(const CheckContext&, DiagnosticSink&);
  /// Reads the timed simulation (check::simulation_of), which run_checks computes beside the other rules.
  bool reads_simulation = false;
  /// When the one-pass proof (check::prove_clean) shows that the rule has nothing to say, so that
  /// run_checks skips it and a clean file never builds the rules' index: never; when the structure
  /// holds; when the send/recv pairing and order hold too. Either way only for a schedule with none
  /// of the kinds in proven_unless_kinds (bits 1 << ActionKind).
  ProvenBy proven_by = ProvenBy::Never;
  std::uint32_t proven_unless_kinds = 0;
};

std::span<const Rule> rules();
const Rule* find_rule(std::string_view id);

/// Where action `step` of `rank` is, for a diagnostic.
SourceLoc action_location(const CheckContext& ctx, std::size_t rank, std::size_t step);

/// Runs every rule whose level is not Off; `levels` overrides default levels by rule id.
void run_checks(const CheckContext& ctx, DiagnosticSink& sink,
                const std::vector<std::pair<std::string, RuleLevel>>& levels = {});

/// The ids of the structural rules: those about missing, duplicate or misplaced actions, without
/// which a simulation's answer means nothing (a forward run twice is timed twice, a missing
/// backward is simply never waited for). check.cpp says why the others are left out.
std::span<const std::string_view> structural_rule_ids();

/// Runs only the structural rules, each as an error, into `sink` (validate's per-rule limits,
/// so the count is the one `ppsched validate` reports for the same context); returns how many
/// errors they found, those the sink dropped included. One pass over the schedule builds the
/// index the rules share; on a valid schedule each rule then proves it has nothing to say from
/// the index, or walks the schedule once. A schedule proven clean leaves the proof's census in
/// ctx.census, for a simulation of the same schedule to read.
std::size_t check_structure(const CheckContext& ctx, DiagnosticSink& sink);

}  // namespace ppsched
