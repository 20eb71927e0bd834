// The greedy list scheduler (greedy.hpp): each rank, whenever it is free, runs the most urgent
// action that is ready (see auto_schedule.hpp for the rules and the variants).
#include "synth/auto/greedy.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "sim/memory.hpp"

namespace ppsched::auto_detail {

namespace {

constexpr double kUnknown = -1.0;

// The next decision time of each rank, at most one per rank, kept in a winner tree (a tournament)
// over the ranks: each inner node holds the earlier of its two children's entries, the left one on
// a tie, and the left subtree holds the lower ranks, so the root is the next (time, rank) to decide.
// Why not a binary heap: a decision pops the root and re-queues the same rank, and a heap pays a
// sift-down and a sift-up with two-key comparisons for that; here lowering a key walks up only
// while it wins, and the rank that decides is settled once, after its decision, with one pass up
// its path of log2(ranks) single comparisons (measured: about half the greedy's instructions went
// to the heap).
class DecisionQueue {
 public:
  explicit DecisionQueue(std::uint32_t ranks) {
    while (leaves_ < ranks) leaves_ *= 2;
    node_.assign(2 * std::size_t{leaves_}, Entry{kNever, 0});
    for (std::uint32_t r = 0; r < leaves_; ++r) node_[leaves_ + r].rank = r;
    for (std::size_t i = leaves_ - 1; i >= 1; --i) node_[i] = earlier(node_[2 * i], node_[2 * i + 1]);
  }

  /// The rank to decide next and its time; call settle() first.
  bool empty() const { return node_[1].time == kNever; }
  std::uint32_t top() const { return node_[1].rank; }
  double top_time() const { return node_[1].time; }

  /// Takes the top rank out of the queue. Its path keeps a stale entry until settle(), which the
  /// caller runs after the decision: every key lowered meanwhile is at or after the taken time,
  /// so a walk that stops at a stale entry would have stopped at the settled one too, or is
  /// redone by settle().
  void take_top() {
    taken_ = node_[1].rank;
    node_[leaves_ + taken_].time = kNever;
  }
  void settle() {
    if (taken_ == kNone) return;
    for (std::size_t i = (std::size_t{leaves_} + taken_) / 2; i >= 1; i /= 2)
      node_[i] = earlier(node_[2 * i], node_[2 * i + 1]);
    taken_ = kNone;
  }

  /// Decide for rank r at time t, unless it is queued for earlier already.
  void lower(std::uint32_t r, double t) {
    std::size_t i = std::size_t{leaves_} + r;
    if (t >= node_[i].time) return;
    node_[i].time = t;
    for (i /= 2; i >= 1; i /= 2) {
      Entry& n = node_[i];
      if (!(t < n.time || (t == n.time && r <= n.rank))) break;  // (time, rank) order
      n = {t, r};
    }
  }

 private:
  static constexpr std::uint32_t kNone = 0xFFFFFFFF;
  struct Entry {
    double time;
    std::uint32_t rank;
  };
  static const Entry& earlier(const Entry& left, const Entry& right) { return right.time < left.time ? right : left; }

  std::uint32_t leaves_ = 1;
  std::uint32_t taken_ = kNone;
  std::vector<Entry> node_;  ///< node_[1] is the root; node_[leaves_ + r] is rank r's key
};

// List scheduling in time order: a rank decides when it is free and re-decides when something it
// may run becomes ready.
class Greedy {
 public:
  Greedy(const Shape& shape, const GreedyPolicy& policy)
      : sh_(shape), pol_(policy), M_(shape.microbatches), queue_(shape.ranks) {
    f_end_.assign(std::size_t{sh_.stages} * M_, kUnknown);
    i_end_.assign(std::size_t{sh_.stages} * M_, kUnknown);
    next_f_.assign(sh_.stages, 0);
    next_i_.assign(sh_.stages, 0);
    next_w_.assign(sh_.stages, 0);
    mem_ = sh_.base;
    peak_ = sh_.base;
    first_start_.assign(sh_.ranks, -1.0);
    reserved_.assign(sh_.ranks, 0.0);
    free_.assign(sh_.ranks, 0.0);
    programs_.resize(sh_.ranks);
    forwards_left_.assign(sh_.ranks, 0);
    for (std::uint32_t r = 0; r < sh_.ranks; ++r) forwards_left_[r] = static_cast<std::uint32_t>(sh_.own[r].size()) * M_;
    for (auto& prog : programs_) prog.reserve(std::size_t{3} * M_ * sh_.v);
    if (pol_.guide) {
      cursor_.assign(sh_.ranks, 0);
      done_.resize(sh_.ranks);
      for (std::uint32_t r = 0; r < sh_.ranks; ++r) {
        // Only F, I and W are the greedy's to run: idle steps (patterns align ranks with them)
        // count as done from the start.
        const std::vector<Action>& prog = pol_.guide->ranks[r].actions;
        done_[r].resize(prog.size());
        for (std::size_t k = 0; k < prog.size(); ++k)
          done_[r][k] = prog[k].kind != ActionKind::F && prog[k].kind != ActionKind::I && prog[k].kind != ActionKind::W;
      }
    }
  }

  /// Gives up (run() returns false, gave_up() true) once some rank cannot finish by `limit`: a
  /// candidate that cannot beat or tie the best one found so far is not worth finishing.
  void give_up_above(double limit) {
    limit_ = limit;
    // Far wider than the rounding of a running sum of a few million durations.
    screen_margin_ = 1e-6 * std::max(1.0, std::abs(limit));
    work_left_.assign(sh_.ranks, 0.0);
    for (std::uint32_t r = 0; r < sh_.ranks; ++r) work_left_[r] = exact_work_left(r);
  }
  bool gave_up() const { return gave_up_; }
  bool shadow_parted() const { return shadow_parted_; }

  bool run(double& makespan) {
    for (std::uint32_t r = 0; r < sh_.ranks; ++r) queue_.lower(r, 0.0);
    for (;;) {
      queue_.settle();
      if (queue_.empty() || gave_up_) break;
      const std::uint32_t r = queue_.top();
      const double t = queue_.top_time();
      queue_.take_top();
      decide(t, r);
    }
    makespan = 0;
    if (gave_up_) return false;
    for (std::uint32_t s = 0; s < sh_.stages; ++s)
      if (next_w_[s] < M_) return false;
    for (double f : free_) makespan = std::max(makespan, f);
    return true;
  }

  std::vector<std::vector<Action>>& programs() { return programs_; }
  /// After run(): the highest per-rank peak and the longest rank span, exactly as the timed
  /// simulator and compute_memory measure them (a test checks the two agree).
  double peak() const { return *std::max_element(peak_.begin(), peak_.end()); }
  double span() const {
    double longest = 0;
    for (std::uint32_t r = 0; r < sh_.ranks; ++r)
      if (first_start_[r] >= 0) longest = std::max(longest, free_[r] - first_start_[r]);
    return longest;
  }

 private:
  double& f_end(std::uint32_t s, std::uint32_t m) { return f_end_[std::size_t{s} * M_ + m]; }
  double& i_end(std::uint32_t s, std::uint32_t m) { return i_end_[std::size_t{s} * M_ + m]; }

  // When the next I of stage s can start (kNever: not yet known).
  double i_ready(std::uint32_t s) {
    const std::uint32_t m = next_i_[s];
    if (m >= M_ || next_f_[s] <= m) return kNever;
    double ready = f_end(s, m);
    if (s + 1 < sh_.stages) {
      double grad = i_end(s + 1, m);
      if (grad == kUnknown) return kNever;
      ready = std::max(ready, grad + sh_.bwd_xfer[s]);
    }
    return ready;
  }

  // When the next F of stage s can start as far as its input goes (kNever: not yet known).
  double f_ready(std::uint32_t s) {
    const std::uint32_t m = next_f_[s];
    if (m >= M_) return kNever;
    if (s == 0) return 0.0;
    double in = f_end(s - 1, m);
    return in == kUnknown ? kNever : in + sh_.fwd_xfer[s];
  }

  bool f_fits(std::uint32_t r, std::uint32_t s) const {
    if (sh_.v == 2 && !sh_.first_chunk_of_v(s))  // a second chunk: reserved, or it must fit
      return pol_.reserve_each || mem_[r] + sh_.act[s] <= pol_.target_cap + kSlack;
    double need = sh_.act[s];
    if (sh_.first_chunk_of_v(s)) {
      const std::uint32_t partner = sh_.partner(s);
      if (pol_.reserve_each) {
        need += sh_.act[partner];
      } else {
        // Rank r's second chunk lives about 2r+1 slots of V-Min's 6-slot period, so it holds
        // about (2r+2)/6 microbatches in flight: keep room for that many.
        const std::uint32_t want = (2 * r + 7) / 6;
        const std::uint32_t held = next_f_[partner] - next_i_[partner];
        need += sh_.act[partner] * (held < want ? want - held : 0);
      }
    }
    return mem_[r] + reserved_[r] + need <= pol_.target_cap + kSlack;
  }

  // The guided decision (GreedyPolicy::guide): the guide's order first, then any ready action
  // among the next `lookahead` not yet run; each stage's F, I and W still run in microbatch order.
  void decide_guided(double t, std::uint32_t r) {
    const std::vector<Action>& prog = pol_.guide->ranks[r].actions;
    std::vector<std::uint8_t>& done = done_[r];
    std::size_t& first = cursor_[r];
    while (first < prog.size() && done[first]) ++first;
    double next = kNever;
    std::uint32_t seen = 0;
    std::size_t k = first;
    for (; k < prog.size() && seen <= pol_.lookahead; ++k) {
      if (done[k]) continue;
      ++seen;
      const double ready = guided_ready(t, r, prog[k], k == first);
      if (ready <= t) {
        done[k] = 1;
        const std::uint32_t s = prog[k].stage;
        if (prog[k].kind == ActionKind::F) return run_f(t, r, s);
        if (prog[k].kind == ActionKind::I) return run_i(t, r, s);
        return run_w(t, r, s);
      }
      next = std::min(next, ready);
    }
    // The rank waits. Would a wider window (GreedyPolicy::shadow_lookahead) have run something now,
    // or woken the rank sooner? Either is the first step where the two runs part.
    for (; k < prog.size() && seen <= pol_.shadow_lookahead && !shadow_parted_; ++k) {
      if (done[k]) continue;
      ++seen;
      shadow_parted_ = guided_ready(t, r, prog[k], false) < next;
    }
    if (next != kNever) queue_.lower(r, next);
  }
  // When the guide's action `a` (at the cursor when in_order) can start, as far as is known now.
  double guided_ready(double t, std::uint32_t r, Action a, bool in_order) {
    const std::uint32_t s = a.stage, m = a.microbatch();
    switch (a.kind) {
      case ActionKind::F:
        return next_f_[s] == m && guided_f_fits(r, s, in_order) ? f_ready(s) : kNever;
      case ActionKind::I:
        return next_i_[s] == m ? i_ready(s) : kNever;
      case ActionKind::W:
        return next_w_[s] == m && next_i_[s] > m ? t : kNever;
      default:
        return kNever;
    }
  }
  // Under the guide, a forward must fit the cap. One taken ahead of the guide's order, if it is a
  // first chunk's, also leaves room for one second-chunk forward, so that running ahead can never
  // fill a rank with half-finished microbatches; in the guide's order it needs only to fit.
  bool guided_f_fits(std::uint32_t r, std::uint32_t s, bool in_order) const {
    double need = sh_.act[s] + (!in_order && sh_.first_chunk_of_v(s) ? sh_.act[sh_.partner(s)] : 0.0);
    return mem_[r] + need <= pol_.target_cap + kSlack;
  }

  void decide(double t, std::uint32_t r) {
    if (pol_.guide && !(pol_.free_cooldown && forwards_left_[r] == 0)) return decide_guided(t, r);
    double next = kNever;
    // 1. an input-gradient backward that is ready, highest stage first (nearest the loss)
    for (std::uint32_t s : sh_.own[r]) {
      double ready = i_ready(s);
      if (ready <= t) return run_i(t, r, s);
      next = std::min(next, ready);
    }
    // With wait_for_input_grad: nothing that would still run when the next known I is ready.
    const double i_due = pol_.wait_for_input_grad ? next : kNever;
    auto ends_in_time = [&](double duration) { return t + duration <= i_due + kSlack; };
    // 2. W before F when the policy says so
    std::uint32_t w_stage = oldest_w(r);
    if (pol_.weight_first && w_stage != kNoStage && ends_in_time(sh_.w[w_stage])) return run_w(t, r, w_stage);
    // 3. a forward that is ready and fits
    auto try_f = [&](std::uint32_t s) {
      if (!f_fits(r, s)) return false;
      double ready = f_ready(s);
      if (ready <= t && !ends_in_time(sh_.f[s])) return false;
      if (ready <= t) {
        run_f(t, r, s);
        return true;
      }
      next = std::min(next, ready);
      return false;
    };
    if (pol_.late_chunk_first) {
      for (std::uint32_t s : sh_.own[r])
        if (try_f(s)) return;
    } else {
      for (auto it = sh_.own[r].rbegin(); it != sh_.own[r].rend(); ++it)
        if (try_f(*it)) return;
    }
    // 4. a deferred W
    if (w_stage != kNoStage && ends_in_time(sh_.w[w_stage])) return run_w(t, r, w_stage);
    if (next != kNever) queue_.lower(r, next);
    // else: it waits until a producer on another rank is scheduled (wake below)
  }

  static constexpr std::uint32_t kNoStage = 0xFFFFFFFF;
  std::uint32_t oldest_w(std::uint32_t r) {
    std::uint32_t best = kNoStage;
    double best_end = kNever;
    for (std::uint32_t s : sh_.own[r]) {
      if (next_w_[s] >= next_i_[s]) continue;
      double e = i_end(s, next_w_[s]);
      if (e < best_end) best_end = e, best = s;
    }
    return best;
  }

  void occupy(std::uint32_t r, double start, double duration, Action a) {
    if (first_start_[r] < 0) first_start_[r] = start;
    programs_[r].push_back(a);
    free_[r] = start + duration;
    queue_.lower(r, free_[r]);
    // Every later action of rank r starts after this one ends, so the rank ends no sooner than
    // that plus the work it has left. A running total (work_left_) screens; near the mark the
    // work left is recounted from the counters, so rounding in the running total never decides.
    if (limit_ != kNever) {
      work_left_[r] -= duration;
      if (free_[r] + work_left_[r] > limit_ - screen_margin_) {
        work_left_[r] = exact_work_left(r);
        gave_up_ = gave_up_ || free_[r] + work_left_[r] > limit_;
      }
    }
  }
  // The work rank r has left, from the counters (a few products for one or two stages).
  double exact_work_left(std::uint32_t r) const {
    double left = 0;
    for (std::uint32_t s : sh_.own[r])
      left += (M_ - next_f_[s]) * sh_.f[s] + (M_ - next_i_[s]) * sh_.i[s] + (M_ - next_w_[s]) * sh_.w[s];
    return left;
  }
  void wake(std::uint32_t stage, double at) {
    const std::uint32_t r = sh_.rank_of[stage];
    queue_.lower(r, std::max(at, free_[r]));
  }

  // The simulator's memory rule (sim/memory.hpp). The greedy applies a free when it decides the
  // action rather than at its end: with one action at a time per rank, nothing can allocate on
  // that rank in between, so the peaks are the same.
  double held(ActionKind kind, std::uint32_t s) const { return memory_delta(kind, sh_.act[s], sh_.wgt[s]).amount; }

  void run_f(double t, std::uint32_t r, std::uint32_t s) {
    const std::uint32_t m = next_f_[s]++;
    --forwards_left_[r];
    if (pol_.reserve_each && sh_.first_chunk_of_v(s)) reserved_[r] += sh_.act[sh_.partner(s)];
    if (pol_.reserve_each && sh_.v == 2 && !sh_.first_chunk_of_v(s)) reserved_[r] -= sh_.act[s];
    mem_[r] += held(ActionKind::F, s);
    peak_[r] = std::max(peak_[r], mem_[r]);
    occupy(r, t, sh_.f[s], Action::make(ActionKind::F, static_cast<std::uint16_t>(s), m));
    f_end(s, m) = free_[r];
    if (s + 1 < sh_.stages && sh_.rank_of[s + 1] != r) wake(s + 1, free_[r] + sh_.fwd_xfer[s + 1]);
  }
  void run_i(double t, std::uint32_t r, std::uint32_t s) {
    const std::uint32_t m = next_i_[s]++;
    mem_[r] += held(ActionKind::I, s);
    occupy(r, t, sh_.i[s], Action::make(ActionKind::I, static_cast<std::uint16_t>(s), m));
    i_end(s, m) = free_[r];
    if (s > 0 && sh_.rank_of[s - 1] != r) wake(s - 1, free_[r] + sh_.bwd_xfer[s - 1]);
  }
  void run_w(double t, std::uint32_t r, std::uint32_t s) {
    const std::uint32_t m = next_w_[s]++;
    mem_[r] += held(ActionKind::W, s);
    occupy(r, t, sh_.w[s], Action::make(ActionKind::W, static_cast<std::uint16_t>(s), m));
  }

  const Shape& sh_;
  const GreedyPolicy& pol_;
  const std::uint32_t M_;
  std::vector<double> f_end_, i_end_;
  std::vector<std::uint32_t> next_f_, next_i_, next_w_;
  std::vector<std::uint32_t> forwards_left_;  // per rank (GreedyPolicy::free_cooldown)
  std::vector<double> mem_, peak_, first_start_, reserved_, free_;
  std::vector<std::vector<Action>> programs_;
  std::vector<std::size_t> cursor_;               // guided: the first action of the guide not yet run
  std::vector<std::vector<std::uint8_t>> done_;  // guided: which of the guide's actions have run
  DecisionQueue queue_;
  double limit_ = kNever;
  bool shadow_parted_ = false;  // GreedyPolicy::shadow_lookahead
  double screen_margin_ = 0;
  std::vector<double> work_left_;  // per rank, a running total (occupy)
  bool gave_up_ = false;
};

}  // namespace

GreedyRun greedy_run(const Shape& shape, const GreedyPolicy& policy, double give_up_above) {
  Greedy g(shape, policy);
  g.give_up_above(give_up_above);
  GreedyRun out;
  out.finished = g.run(out.makespan);
  out.gave_up = g.gave_up();
  out.same_with_shadow_lookahead = policy.guide && policy.shadow_lookahead > policy.lookahead && !g.shadow_parted();
  for (const auto& program : g.programs()) out.placed += program.size();
  if (out.finished) {
    out.peak = g.peak();
    out.span = g.span();
    out.programs = std::move(g.programs());
  }
  return out;
}

}  // namespace ppsched::auto_detail
