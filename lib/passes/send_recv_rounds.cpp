// add_send_recv_by_rounds (passes.hpp): PyTorch's `_add_send_recv` for a well-formed schedule,
// computed as when each action is emitted, then assembled rank by rank.
//
// PyTorch visits the ranks in ascending order, round after round; a rank emits its head when it
// is ready, and a head with comms appends its RECV to the receiving rank's output at once. So
// every emission has a moment (round, rank), and each rank's output is what reached it, in the
// order of those moments: its own heads (each followed by its SEND) and the RECVs of others.
// When every action sits on its stage's rank, a head's readiness asks only about earlier heads of
// its own rank and one RECV, which some other rank appends at a known moment (t', p): the RECV is
// seen by rank r from round t' when p < r (later in the same round), else from round t' + 1. So
//
//   round(r, i) = max(round(r, i - 1) + 1, the first round rank r sees the RECV it needs)
//
// and the rounds are found in one pass, each rank advancing until it needs a RECV not appended
// yet. (A round in which nothing moves cannot fall between two that do: what a rank waits for
// was emitted in an earlier round or earlier in the same one.) The outputs are then assembled,
// each rank's by merging its own heads with the RECVs its neighbour ranks send it, by moment: on
// two threads for a large schedule, and each output written once, at its final size, which the
// input alone gives (a large schedule's outputs are sized, and their pages faulted in, on the
// second core while the first places the rounds).
//
// The round robin (add_send_recv.cpp) stays the reference and takes what this does not: a
// container, a SEND or RECV in the input, an action off its stage's rank, a stage or microbatch
// outside the pipeline, a compute action with no microbatch, a duplicated action, an empty rank,
// and a schedule that cannot finish (it names the stuck ranks, as PyTorch does).
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "ir/rank_halves.hpp"
#include "passes/key_table.hpp"
#include "passes/passes.hpp"

namespace ppsched {

namespace {

constexpr std::uint32_t kNotYet = 0;  // a RECV cell before its RECV is appended
constexpr std::size_t kNoWait = ~std::size_t{0};

// The own-rank bits of a (stage, microbatch) cell: which of F, I and B its owner has emitted.
constexpr std::uint8_t kOwnF = 1, kOwnI = 2, kOwnB = 4;

class RoundsLowering {
 public:
  RoundsLowering(const Schedule& s, const std::vector<std::uint32_t>& map, std::uint32_t num_stages)
      : s_(s), map_(map), stages_(num_stages) {}

  std::optional<Schedule> run() {
    if (!fits()) return std::nullopt;
    // The outputs' sizes and memory follow from the input alone. For a large schedule they are
    // found, and the memory faulted in, on the second core while this one places the rounds; the
    // assembly then writes into memory that is there already.
    const bool ahead = second_half_start(s_) < s_.rank_count();
    std::thread outputs;
    struct Joiner {
      std::thread& thread;
      ~Joiner() {
        if (thread.joinable()) thread.join();
      }
    } joiner{outputs};
    std::exception_ptr outputs_failed;  // std::bad_alloc, reported here as on one thread
    if (ahead)
      outputs = std::thread([this, &outputs_failed] {
        try {
          allocate_outputs(true);
        } catch (...) {
          outputs_failed = std::current_exception();
        }
      });
    const bool placed = place_rounds();
    if (outputs.joinable()) outputs.join();
    if (outputs_failed) std::rethrow_exception(outputs_failed);
    if (!placed) return std::nullopt;
    if (!ahead) allocate_outputs(false);
    return assemble();
  }

 private:
  struct Lane {
    std::uint32_t next = 0;      ///< its next input action
    std::uint32_t last = 0;      ///< 1 + the round of its last action; 0 before the first
    std::size_t wait = kNoWait;  ///< the RECV cell its head waits for
  };

  // The schedule's size and map as this path needs them: every stage of the pipeline on a rank
  // of the schedule, grids dense, rounds within 32 bits.
  bool fits() {
    const std::size_t ranks = s_.ranks.size(), steps = s_.step_count();
    if (ranks == 0 || stages_ == 0 || map_.size() < stages_ || steps >= (std::size_t{1} << 31)) return false;
    for (std::uint32_t st = 0; st < stages_; ++st)
      if (map_[st] >= ranks) return false;
    for (const RankProgram& p : s_.ranks)
      if (p.actions.empty()) return false;  // PyTorch asserts; the round robin says so
    // A stated count bounds every microbatch the rounds look up (a larger one leaves them), and
    // saves a pass over the actions.
    mbs_ = s_.num_microbatches ? s_.num_microbatches : microbatches_in_use(s_);
    if (double(stages_) * double(mbs_) > dense_grid_limit(steps)) return false;
    lanes_.resize(ranks);
    // Fresh memory, 4 bytes per action and 9 per (stage, microbatch): its pages are faulted in,
    // and the tables cleared, by two threads for a large schedule, a half each.
    const std::size_t cells = std::size_t{stages_} * mbs_;
    own_ = std::make_unique_for_overwrite<std::uint8_t[]>(cells);
    recv_ = std::make_unique_for_overwrite<std::uint32_t[]>(cells * 2);
    rounds_.resize(ranks);
    for_rank_halves(s_, [&](std::size_t half, std::size_t begin, std::size_t end) {
      for (std::size_t r = begin; r < end; ++r) rounds_[r].resize(s_.ranks[r].actions.size());
      if (half == 1 && begin == end) return;  // no second half: the first clears everything
      const std::size_t from = half == 0 ? 0 : cells / 2, to = half == 1 || end == ranks ? cells : cells / 2;
      std::fill(own_.get() + from, own_.get() + to, std::uint8_t{0});
      std::fill(recv_.get() + 2 * from, recv_.get() + 2 * to, kNotYet);
    });
    return true;
  }

  // The cell of the RECV into `stage` (forward: from the stage before; else from the one after).
  std::size_t recv_cell(std::uint32_t stage, std::uint32_t mb, bool forward) const {
    return (std::size_t{stage} * mbs_ + mb) * 2 + !forward;
  }

  // Where each action is emitted; false when this path does not apply (see the file comment).
  bool place_rounds() {
    const auto ranks = static_cast<std::uint32_t>(s_.ranks.size());
    work_.reserve(ranks);
    for (std::uint32_t r = ranks; r-- > 0;) work_.push_back(r);
    while (!work_.empty()) {
      const std::uint32_t r = work_.back();
      work_.pop_back();
      if (!advance(r)) return false;
    }
    for (std::uint32_t r = 0; r < ranks; ++r)
      if (lanes_[r].next != s_.ranks[r].actions.size()) return false;  // stuck: the round robin names it
    return true;
  }

  // Emits rank r's heads until one needs a RECV not appended yet; false when this path does not apply.
  bool advance(std::uint32_t r) {
    Lane& lane = lanes_[r];
    const std::vector<Action>& program = s_.ranks[r].actions;
    const auto last_stage = static_cast<std::uint32_t>(stages_ - 1);
    while (lane.next < program.size()) {
      const Action a = program[lane.next];
      std::uint32_t round = lane.last;  // the round after the rank's last action
      if (a.is_idle()) {
        rounds_[r][lane.next++] = round;
        lane.last = round + 1;
        continue;
      }
      if (a.is_container() || !a.has_stage() || a.stage > last_stage || map_[a.stage] != r) return false;
      const std::uint32_t st = a.stage;
      std::size_t needs = kNoWait;  // the RECV cell the head needs, appended by `sender`
      std::uint32_t sender = 0;
      switch (a.kind) {
        case ActionKind::F:
        case ActionKind::I:
        case ActionKind::B: {
          const std::uint32_t mb = a.index;
          if (mb >= mbs_) return false;  // none (kNoMicrobatch) included
          const bool forward = a.kind == ActionKind::F;
          if (forward ? st == 0 : st == last_stage) break;
          const std::uint32_t from_stage = forward ? st - 1 : st + 1;
          sender = map_[from_stage];
          if (sender == r) {
            // Readiness asks for the neighbour stage's compute on this same rank, emitted earlier.
            const std::uint8_t have = own_[std::size_t{from_stage} * mbs_ + mb];
            if (!(forward ? have & kOwnF : have & (kOwnI | kOwnB))) return false;  // never comes
            break;
          }
          needs = recv_cell(st, mb, forward);
          break;
        }
        case ActionKind::W:
        case ActionKind::Unshard:
        case ActionKind::Reshard:
        case ActionKind::ReduceGrad:
          break;
        default:
          return false;  // SEND, RECV (recorded as readiness), containers' kinds
      }
      if (needs != kNoWait) {
        const std::uint32_t appended = recv_[needs];
        if (appended == kNotYet) {
          lane.wait = needs;
          return true;  // woken when the sender appends it
        }
        // Appended in round appended - 1 by `sender`: seen that round when it is the lower rank.
        round = std::max(round, appended - 1 + (sender > r ? 1u : 0u));
      }
      rounds_[r][lane.next++] = round;
      lane.last = round + 1;
      if (!emit(r, a, round)) return false;
    }
    return true;
  }

  // Records an emitted head: its own bit, and its RECV on the receiving rank. False for a
  // duplicated action (its second RECV would be appended too: the round robin says what happens).
  bool emit(std::uint32_t r, const Action& a, std::uint32_t round) {
    const bool forward = a.kind == ActionKind::F;
    if (!forward && a.kind != ActionKind::I && a.kind != ActionKind::B) return true;
    const std::uint32_t st = a.stage, mb = a.index;
    std::uint8_t& have = own_[std::size_t{st} * mbs_ + mb];
    const std::uint8_t bit = forward ? kOwnF : a.kind == ActionKind::I ? kOwnI : kOwnB;
    if (have & (forward ? kOwnF : kOwnI | kOwnB)) return false;
    have |= bit;
    const std::optional<std::uint16_t> to_stage = sends_to(a, r);
    if (!to_stage) return true;
    const std::uint32_t q = map_[*to_stage];
    const std::size_t cell = recv_cell(*to_stage, mb, forward);
    recv_[cell] = round + 1;
    if (lanes_[q].wait == cell) {
      lanes_[q].wait = kNoWait;
      work_.push_back(q);
    }
    return true;
  }

  // Where a head of rank p sends (PyTorch's `_has_comms`): an F to the next stage, an I or B to
  // the one before, when that stage sits on another rank. The stage it sends to, or nullopt.
  std::optional<std::uint16_t> sends_to(const Action& a, std::uint32_t p) const {
    const bool forward = a.kind == ActionKind::F;
    if (!forward && a.kind != ActionKind::I && a.kind != ActionKind::B) return std::nullopt;
    if (forward ? a.stage + 1u == stages_ : a.stage == 0) return std::nullopt;
    const auto to_stage = static_cast<std::uint16_t>(forward ? a.stage + 1 : a.stage - 1);
    if (map_[to_stage] == p) return std::nullopt;
    return to_stage;
  }
  // The RECV a head of rank p appends to rank q, if any.
  std::optional<Action> recv_for(const Action& a, std::uint32_t p, std::uint32_t q) const {
    const std::optional<std::uint16_t> to = sends_to(a, p);
    if (!to || map_[*to] != q) return std::nullopt;
    return Action::make(a.kind == ActionKind::F ? ActionKind::RecvF : ActionKind::RecvB, *to, a.index);
  }

  // The ranks that send to rank q: the ranks of the stages next to q's own.
  std::vector<std::uint32_t> senders_of(std::uint32_t q) const {
    std::vector<std::uint32_t> out;
    for (std::uint32_t st = 0; st < stages_; ++st) {
      const bool next_to_q = (st > 0 && map_[st - 1] == q) || (st + 1 < stages_ && map_[st + 1] == q);
      if (next_to_q && map_[st] != q && std::find(out.begin(), out.end(), map_[st]) == out.end())
        out.push_back(map_[st]);
    }
    return out;
  }

  // Rank q's output: its heads (each followed by its SEND) and the RECVs sent to it, by moment.
  void assemble_rank(std::uint32_t q, std::vector<Action>& out) const {
    constexpr std::uint64_t kNoMore = ~std::uint64_t{0};
    // A rank that sends to q, read in step with its rounds: its next RECV for q and that RECV's moment.
    struct From {
      const Action* next;
      const Action* end;
      const std::uint32_t* round;
      std::uint32_t rank;
      std::uint64_t moment;
      Action recv;
    };
    auto refill = [&](From& f) {
      for (; f.next != f.end; ++f.next, ++f.round) {
        if (const std::optional<Action> recv = recv_for(*f.next, f.rank, q)) {
          f.recv = *recv;
          f.moment = std::uint64_t{*f.round} << 32 | f.rank;
          ++f.next;
          ++f.round;
          return;
        }
      }
      f.moment = kNoMore;
    };
    std::vector<From> senders;
    for (std::uint32_t p : senders_of(q)) {
      const std::vector<Action>& program = s_.ranks[p].actions;
      senders.push_back({program.data(), program.data() + program.size(), rounds_[p].data(), p, kNoMore, {}});
      refill(senders.back());
    }
    // The RECVs appended before `moment`, in the order they were.
    auto take_recvs_before = [&](std::uint64_t moment) {
      for (;;) {
        From* first = nullptr;
        for (From& f : senders)
          if (f.moment < moment && (!first || f.moment < first->moment)) first = &f;
        if (!first) return;
        out.push_back(first->recv);
        refill(*first);
      }
    };
    const std::vector<Action>& own = s_.ranks[q].actions;
    const std::uint32_t* round = rounds_[q].data();
    for (const Action& a : own) {
      take_recvs_before(std::uint64_t{*round++} << 32 | q);
      if (a.is_idle()) continue;
      out.push_back(a);
      if (sends_to(a, q))
        out.push_back(Action::make(a.kind == ActionKind::F ? ActionKind::SendF : ActionKind::SendB, a.stage, a.index));
    }
    take_recvs_before(kNoMore);
  }

  // Each rank's output, empty at its final size: its heads but idle steps, a SEND per head with
  // comms, a RECV per head of another rank that sends to it (the rounds apply: every action is on
  // its stage's rank, every stage on a rank). `fault_in`: its memory is written to now, not when
  // the assembly first writes each page.
  void allocate_outputs(bool fault_in) {
    const auto ranks = static_cast<std::uint32_t>(s_.ranks.size());
    std::vector<std::size_t> sizes(ranks, 0);
    for (std::uint32_t r = 0; r < ranks; ++r)
      for (const Action& a : s_.ranks[r].actions) {
        if (a.is_idle()) continue;
        ++sizes[r];
        if (a.is_container() || !a.has_stage() || a.stage >= stages_) continue;  // the rounds do not apply
        if (const std::optional<std::uint16_t> to = sends_to(a, r)) {
          ++sizes[r];
          ++sizes[map_[*to]];
        }
      }
    out_.ranks.resize(ranks);
    for (std::uint32_t r = 0; r < ranks; ++r) {
      std::vector<Action>& out = out_.ranks[r].actions;
      out.reserve(sizes[r]);
      if (fault_in) populate(out.data(), sizes[r] * sizeof(Action));
    }
  }

  // Asks the kernel for the whole pages of [p, p + bytes) at once (MADV_POPULATE_WRITE, Linux
  // 5.14): a third cheaper than a fault per page on this VM. Where it is not supported, the pages
  // come as they are first written.
  static void populate(void* p, std::size_t bytes) {
#ifdef MADV_POPULATE_WRITE
    const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
    const auto at = reinterpret_cast<std::uintptr_t>(p);
    const std::uintptr_t begin = (at + page - 1) / page * page, end = (at + bytes) / page * page;
    if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
#else
    (void)p;
    (void)bytes;
#endif
  }

  Schedule assemble() {
    own_.reset();  // the assembly reads the rounds only
    recv_.reset();
    Schedule out = std::move(out_);
    out.sub_actions = s_.sub_actions;
    out.placement = s_.placement;
    out.num_stages = s_.num_stages;
    out.num_microbatches = s_.num_microbatches;
    for_rank_halves(s_, [&](std::size_t, std::size_t begin, std::size_t end) {
      for (std::size_t q = begin; q < end; ++q) assemble_rank(static_cast<std::uint32_t>(q), out.ranks[q].actions);
    });
    return out;
  }

  const Schedule& s_;
  const std::vector<std::uint32_t>& map_;
  const std::uint32_t stages_;
  std::uint32_t mbs_ = 0;
  std::unique_ptr<std::uint8_t[]> own_;             ///< per (stage, microbatch): kOwn* bits
  std::unique_ptr<std::uint32_t[]> recv_;           ///< per (stage, microbatch, direction): 1 + round appended
  std::vector<Lane> lanes_;                         ///< per rank
  std::vector<std::vector<std::uint32_t>> rounds_;  ///< per rank and input action: its round
  Schedule out_;                                    ///< the outputs, empty, at their sizes
  std::vector<std::uint32_t> work_;                 ///< ranks to advance
};

}  // namespace

std::optional<Schedule> add_send_recv_by_rounds(const Schedule& s, const std::vector<std::uint32_t>& stage_to_rank,
                                                std::uint32_t num_stages) {
  return RoundsLowering(s, stage_to_rank, num_stages).run();
}

}  // namespace ppsched
