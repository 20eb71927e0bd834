// A proof, in one pass and a few bytes per (stage, microbatch), that rules have nothing to say:
// the structural ones (simulate runs them on every schedule, synthesized ones of millions of
// actions included) and those of send/recv pairing and order (validate runs them too). The index
// those rules share (ActionIndex: an ordinal and a count per kind, stage and microbatch) is 42 MB
// and two thirds of validate's rule time on a 6M-action file; a proven schedule never builds it.
// The proof produces no diagnostic: when it cannot prove a schedule clean, the rules run and say
// what is wrong (or, for an order it could not follow, that nothing is). So it may be stricter
// than the rules, never looser; the check tests hold it to that on every family, the corpus and
// its negatives.
#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "check/check_support.hpp"
#include "check/rules_impl.hpp"
#include "ir/rank_halves.hpp"
#include "passes/key_table.hpp"

namespace ppsched::check {

namespace {

// One bit per kind that carries a microbatch, as ActionIndex indexes them; 0 for the others.
constexpr std::uint8_t kF = 1, kB = 2, kI = 4, kW = 8, kSendF = 16, kRecvF = 32, kSendB = 64, kRecvB = 128;
constexpr std::uint8_t kComms = kSendF | kRecvF | kSendB | kRecvB;
static_assert(kF == LeafCensus::kF && kB == LeafCensus::kB && kI == LeafCensus::kI && kW == LeafCensus::kW &&
              kSendF == LeafCensus::kSendF && kRecvF == LeafCensus::kRecvF && kSendB == LeafCensus::kSendB &&
              kRecvB == LeafCensus::kRecvB);
// The kinds of CleanProof::kinds that are SENDs and RECVs.
constexpr std::uint32_t kCommKinds =
    (1u << static_cast<unsigned>(ActionKind::SendF)) | (1u << static_cast<unsigned>(ActionKind::RecvF)) |
    (1u << static_cast<unsigned>(ActionKind::SendB)) | (1u << static_cast<unsigned>(ActionKind::RecvB));
constexpr std::array<std::uint8_t, kActionKindCount> kBit = [] {
  std::array<std::uint8_t, kActionKindCount> t{};
  const ActionKind order[] = {ActionKind::F,     ActionKind::B,     ActionKind::I,     ActionKind::W,
                              ActionKind::SendF, ActionKind::RecvF, ActionKind::SendB, ActionKind::RecvB};
  for (unsigned i = 0; i < 8; ++i) t[static_cast<std::size_t>(order[i])] = static_cast<std::uint8_t>(1u << i);
  return t;
}();

// Per kind: what must be in its cell before it (B and I need their F, W its I), and for a SEND the
// compute that must come before it on its rank (send-before-compute): Proof::visit's rules.
constexpr std::array<std::uint8_t, kActionKindCount> kNeeds = [] {
  std::array<std::uint8_t, kActionKindCount> t{};
  t[static_cast<std::size_t>(ActionKind::B)] = t[static_cast<std::size_t>(ActionKind::I)] = kF;
  t[static_cast<std::size_t>(ActionKind::W)] = kI;
  return t;
}();
constexpr std::array<std::uint8_t, kActionKindCount> kSentAfter = [] {
  std::array<std::uint8_t, kActionKindCount> t{};
  t[static_cast<std::size_t>(ActionKind::SendF)] = kF;
  t[static_cast<std::size_t>(ActionKind::SendB)] = kI | kB;
  return t;
}();

// What a leaf does to the proof, as bits: nothing, breaks a send/recv rule only, breaks the
// structure; and whether it names a microbatch the grid does not record (no census then).
enum Verdict : std::uint8_t { kClean = 0, kCommFault = 1, kBroken = 2, kUncounted = 4 };

struct Proof {
  const CheckContext& ctx;
  std::vector<std::uint8_t> seen;         // per (stage, microbatch), stage-major: the kinds seen so far
  std::vector<std::uint32_t> stage_rank;  // per stage: its rank (the placement's, when one is given)
  std::vector<std::uint8_t> misplaced;    // per stage: the comm kinds (bits) that join it to a stage on its rank

  // comm-between-colocated-stages, stage by stage: a SEND_F or RECV_B goes to the next stage, a
  // RECV_F or SEND_B to the one before; misplaced when both are on one rank.
  void place_comms() {
    misplaced.assign(ctx.stages, 0);
    const std::size_t placed = ctx.stage_to_rank.size();
    for (std::size_t st = 0; st < ctx.stages && st < placed; ++st) {
      if (st + 1 < placed && ctx.stage_to_rank[st] == ctx.stage_to_rank[st + 1]) misplaced[st] |= kSendF | kRecvB;
      if (st > 0 && ctx.stage_to_rank[st] == ctx.stage_to_rank[st - 1]) misplaced[st] |= kRecvF | kSendB;
    }
  }

  // What leaf `a` of rank `r` does to the proof, given what came before it on its rank.
  Verdict visit(std::uint32_t r, const Action& a) {
    const std::uint8_t bit = kBit[static_cast<std::size_t>(a.kind)];
    // A SEND or RECV that names a microbatch must name a stage (else send-without-recv or
    // recv-without-send has its say) on a rank other than its peer's.
    std::uint8_t comm_fault = 0;
    if (a.has_stage()) {
      if (a.stage >= ctx.stages) return kBroken;     // stage-out-of-range
      if (stage_rank[a.stage] != r) return kBroken;  // stage-on-two-ranks, stage-on-wrong-rank
      comm_fault = misplaced[a.stage] & bit;
    } else if ((bit & kComms) && a.has_microbatch()) {
      comm_fault = 1;
    }
    if (!a.has_microbatch())  // a compute action of no microbatch
      return (bit & (kF | kB | kI | kW)) ? kBroken : comm_fault ? kCommFault : kClean;
    if (a.microbatch() >= ctx.microbatches) return kBroken;  // microbatch-out-of-range
    if (bit == 0 || !a.has_stage()) return comm_fault ? Verdict(kCommFault | kUncounted) : kUncounted;
    std::uint8_t& cell = seen[std::size_t{a.stage} * ctx.microbatches + a.microbatch()];
    const std::uint8_t before = cell;
    // duplicate-action; backward-before-forward (B or I before F); weight-before-input-grad.
    const std::uint8_t needs = kNeeds[static_cast<std::size_t>(a.kind)];
    if ((before & bit) || (before & needs) != needs) return kBroken;
    cell = before | bit;
    // send-before-compute: SEND_F after its F, SEND_B after its I or B (earlier on this rank, the
    // only one that writes the stage's cells).
    const std::uint8_t sent_after = kSentAfter[static_cast<std::size_t>(a.kind)];
    if (sent_after && !(before & sent_after)) comm_fault = 1;
    return comm_fault ? kCommFault : kClean;
  }

  // send-without-recv, recv-without-send: every SEND and RECV of the grid has its other half.
  // Row by row (a stage's microbatches), beside the rows of the stages before and after it, in
  // bit operations that GCC vectorizes: a SEND_F (16) needs the next stage's RECV_F (32), a RECV_F
  // the previous stage's SEND_F, a SEND_B (64) the previous stage's RECV_B (128), a RECV_B the
  // next stage's SEND_B.
  bool comms_paired() const {
    static_assert(kRecvF == kSendF << 1 && kRecvB == kSendB << 1);
    const std::size_t mbs = ctx.microbatches;
    const std::vector<std::uint8_t> none(mbs, 0);  // the rows beyond the pipeline's ends
    for (std::size_t st = 0; st < ctx.stages; ++st) {
      const std::uint8_t* row = seen.data() + st * mbs;
      const std::uint8_t* prev = st > 0 ? row - mbs : none.data();
      const std::uint8_t* next = st + 1 < ctx.stages ? row + mbs : none.data();
      std::uint8_t unpaired = 0;
      for (std::size_t m = 0; m < mbs; ++m) {
        const unsigned p = prev[m], n = next[m];
        const unsigned partners = ((n >> 1) & kSendF) | ((p << 1) & kRecvF) | ((p >> 1) & kSendB) | ((n << 1) & kRecvB);
        unpaired |= static_cast<std::uint8_t>(row[m] & kComms & ~partners);
      }
      if (unpaired) return false;
    }
    return true;
  }
};

}  // namespace

CleanProof prove_clean(const CheckContext& ctx) {
  CleanProof out;
  const Schedule& s = *ctx.schedule;
  if (s.rank_count() != ctx.ranks) return out;  // rank-count
  const double grid = double(ctx.stages) * double(ctx.microbatches);
  if (grid > dense_grid_limit(s.step_count())) return out;  // a sparse index: the rules' hash map serves
  Proof proof{ctx,
              std::vector<std::uint8_t>(static_cast<std::size_t>(grid), 0),
              std::vector<std::uint32_t>(ctx.stages, ActionIndex::kNone),
              {}};
  // Each stage's rank is known before its first action: the placement's, which when inferred is
  // the first rank that runs the stage, what a pass in rank order meets first (a map that says
  // otherwise only makes the proof fail, and the rules run). So the ranks are read in two halves on
  // two threads (ir/rank_halves.hpp): a stage's cells are written only by its own rank's half.
  for (std::size_t st = 0; st < ctx.stages && st < ctx.stage_to_rank.size(); ++st)
    proof.stage_rank[st] = ctx.stage_to_rank[st];
  // Each rank in program order: with every stage on one rank (checked as it goes), "already
  // seen" is "earlier on the same rank", which is what the order rules ask.
  proof.place_comms();
  std::uint8_t verdicts[2] = {kClean, kClean};
  std::uint32_t kinds[2] = {0, 0};
  std::uint32_t stages_named[2] = {0, 0};  // 1 + the highest stage a leaf names
  bool containers[2] = {false, false};
  for_rank_halves(s, [&](std::size_t half, std::size_t begin, std::size_t end) {
    std::uint8_t verdict = kClean;
    std::uint32_t seen_kinds = 0, named = 0;
    for (std::size_t r = begin; r < end && !(verdict & kBroken); ++r) {
      const auto rank = static_cast<std::uint32_t>(r);
      // The stage of the action before, already checked (in range, on this rank): an action of the
      // same stage with a microbatch in range takes the short way (Proof::visit's rules, in tables).
      std::uint32_t checked = ~0u;
      std::uint8_t* row = nullptr;
      std::uint8_t misplaced = 0;
      for (const Action& a : s.ranks[r].actions) {
        if (a.stage == checked && a.index < ctx.microbatches && !a.is_container()) [[likely]] {
          const auto k = static_cast<unsigned>(a.kind);
          seen_kinds |= 1u << k;
          const std::uint8_t bit = kBit[k];
          if (bit == 0) {
            verdict |= kUncounted;
            continue;
          }
          const std::uint8_t before = row[a.index], needs = kNeeds[k], sent_after = kSentAfter[k];
          if ((before & bit) || (before & needs) != needs) {
            verdict |= kBroken;
            break;
          }
          row[a.index] = before | bit;
          if ((misplaced & bit) || (sent_after && !(before & sent_after))) verdict |= kCommFault;
          continue;
        }
        if (a.is_idle()) {
          seen_kinds |= 1u << static_cast<unsigned>(ActionKind::Idle);
          continue;
        }
        if (a.is_container()) [[unlikely]] {
          containers[half] = true;
          for (const Action& sub : s.subs(a)) {
            seen_kinds |= 1u << static_cast<unsigned>(sub.kind);
            named = std::max(named, sub.has_stage() ? sub.stage + 1u : 0u);
            verdict |= proof.visit(rank, sub);
          }
        } else {
          seen_kinds |= 1u << static_cast<unsigned>(a.kind);
          named = std::max(named, a.has_stage() ? a.stage + 1u : 0u);
          verdict |= proof.visit(rank, a);
          if (a.has_stage() && a.stage < ctx.stages && proof.stage_rank[a.stage] == rank) {
            checked = a.stage;
            row = proof.seen.data() + std::size_t{a.stage} * ctx.microbatches;
            misplaced = proof.misplaced[a.stage];
          }
        }
        if (verdict & kBroken) break;
      }
    }
    verdicts[half] = verdict;
    kinds[half] = seen_kinds;
    stages_named[half] = named;
  });
  const std::uint8_t verdict = verdicts[0] | verdicts[1];
  if (verdict & kBroken) return out;
  // missing-forward, missing-backward, full-and-split-backward: F, then B alone or I and W.
  for (std::uint8_t cell : proof.seen) {
    const std::uint8_t compute = cell & (kF | kB | kI | kW);
    if (compute != (kF | kB) && compute != (kF | kI | kW)) return out;
  }
  out.structural = true;
  out.comms = (verdict & kCommFault) == 0 && proof.comms_paired();
  out.kinds = kinds[0] | kinds[1];
  // Clean, with every leaf that names a microbatch in the grid: what the simulator would count.
  if (out.comms && !(verdict & kUncounted)) {
    auto census = std::make_shared<LeafCensus>();
    census->stages = ctx.stages;
    census->microbatches = ctx.microbatches;
    census->kinds = std::move(proof.seen);
    census->stage_rank = std::move(proof.stage_rank);
    const std::uint32_t named = std::max(stages_named[0], stages_named[1]);
    census->any_stage = named > 0;
    census->max_stage = named > 0 ? named - 1 : 0;
    census->explicit_comms = (out.kinds & kCommKinds) != 0;
    census->containers = containers[0] || containers[1];
    out.census = std::move(census);
  }
  return out;
}

bool provably_structurally_clean(const CheckContext& ctx) { return prove_clean(ctx).structural; }

bool proven_silent(const CleanProof& proof, const Rule& rule) {
  switch (rule.proven_by) {
    case ProvenBy::Never:
      return false;
    case ProvenBy::Structure:
      return proof.structural && !(proof.kinds & rule.proven_unless_kinds);
    case ProvenBy::StructureAndComms:
      return proof.structural && proof.comms && !(proof.kinds & rule.proven_unless_kinds);
  }
  return false;
}

}  // namespace ppsched::check
