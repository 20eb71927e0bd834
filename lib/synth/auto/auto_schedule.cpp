// The automatic schedule (auto_schedule.hpp): a greedy list scheduler and the search around it.
#include "synth/auto/auto_schedule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

#include "sim/aggregate.hpp"
#include "sim/memory.hpp"
#include "synth/synth.hpp"

namespace ppsched {

namespace {

constexpr double kUnknown = -1.0;
constexpr double kNever = std::numeric_limits<double>::infinity();
constexpr double kSlack = 1e-9;  // memory comparisons: sums of fractions such as 1/2 are exact, 1/3 is not

// The pipeline's shape and what each action costs and holds, resolved once per search.
struct Shape {
  std::uint32_t ranks, microbatches, v, stages;
  std::vector<std::uint32_t> rank_of;           // per stage
  std::vector<std::vector<std::uint32_t>> own;  // per rank: its stages, highest first
  std::vector<double> f, i, w;                  // durations per stage
  std::vector<double> backward;                 // min(I + W, B): the least a microbatch's backward can cost
  std::vector<double> act, wgt;                 // M_B and M_W per stage
  std::vector<double> fwd_xfer, bwd_xfer;       // into stage s from s-1 (forward), from s+1 (backward)
  std::vector<double> base;                     // per rank: fixed memory

  explicit Shape(const AutoParams& p)
      : ranks(p.ranks), microbatches(p.microbatches), v(p.stages_per_rank), stages(p.ranks * p.stages_per_rank) {
    rank_of.resize(stages);
    own.resize(ranks);
    for (std::uint32_t s = 0; s < stages; ++s) {
      rank_of[s] = v == 1 ? s : (s < ranks ? s : 2 * ranks - 1 - s);
      own[rank_of[s]].push_back(s);
    }
    for (auto& list : own) std::sort(list.rbegin(), list.rend());
    const double chunk = 1.0 / v;
    for (std::uint32_t s = 0; s < stages; ++s) {
      const auto st = static_cast<std::uint16_t>(s);
      f.push_back(p.sim.costs.cost(st, ActionKind::F));
      i.push_back(p.sim.costs.cost(st, ActionKind::I));
      w.push_back(p.sim.costs.cost(st, ActionKind::W));
      backward.push_back(std::min(i.back() + w.back(), p.sim.costs.cost(st, ActionKind::B)));
      act.push_back(s < p.memory.activation.size() ? p.memory.activation[s] : chunk);
      wgt.push_back(s < p.memory.weight_grad.size() ? p.memory.weight_grad[s] : act.back());
      fwd_xfer.push_back(s == 0 || rank_of[s - 1] == rank_of[s]
                             ? 0.0
                             : p.sim.comm.transfer_time(s - 1, true, rank_of[s - 1], rank_of[s]));
      bwd_xfer.push_back(s + 1 >= stages || rank_of[s + 1] == rank_of[s]
                             ? 0.0
                             : p.sim.comm.transfer_time(s + 1, false, rank_of[s + 1], rank_of[s]));
    }
    base.assign(ranks, 0.0);
    for (std::uint32_t r = 0; r < ranks && r < p.memory.fixed_per_rank.size(); ++r) base[r] = p.memory.fixed_per_rank[r];
  }
  // V placement: a rank's first chunk (stage < ranks) has a partner stage on the same rank whose
  // forward of the same microbatch must still fit when it arrives.
  bool first_chunk_of_v(std::uint32_t s) const { return v == 2 && s < ranks; }
  std::uint32_t partner(std::uint32_t s) const { return 2 * ranks - 1 - s; }
};

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
  void give_up_above(double limit) { limit_ = limit; }
  bool gave_up() const { return gave_up_; }

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
    for (std::size_t k = first; k < prog.size() && seen <= pol_.lookahead; ++k) {
      if (done[k]) continue;
      ++seen;
      const Action a = prog[k];
      const std::uint32_t s = a.stage, m = a.microbatch();
      double ready = kNever;
      switch (a.kind) {
        case ActionKind::F:
          if (next_f_[s] == m && guided_f_fits(r, s, k == first)) ready = f_ready(s);
          break;
        case ActionKind::I:
          if (next_i_[s] == m) ready = i_ready(s);
          break;
        case ActionKind::W:
          if (next_w_[s] == m && next_i_[s] > m) ready = t;
          break;
        default: break;
      }
      if (ready <= t) {
        done[k] = 1;
        if (a.kind == ActionKind::F) return run_f(t, r, s);
        if (a.kind == ActionKind::I) return run_i(t, r, s);
        return run_w(t, r, s);
      }
      next = std::min(next, ready);
    }
    if (next != kNever) queue_.lower(r, next);
  }
  // Under the guide, a forward must fit the cap. One taken ahead of the guide's order, if it is a
  // first chunk's, also leaves room for one second-chunk forward, so that running ahead can never
  // fill a rank with half-finished microbatches; in the guide's order it needs only to fit.
  bool guided_f_fits(std::uint32_t r, std::uint32_t s, bool in_order) const {
    double need = sh_.act[s] + (!in_order && sh_.first_chunk_of_v(s) ? sh_.act[sh_.partner(s)] : 0.0);
    return mem_[r] + need <= pol_.target_cap + kSlack;
  }

  void decide(double t, std::uint32_t r) {
    if (pol_.guide) return decide_guided(t, r);
    double next = kNever;
    // 1. an input-gradient backward that is ready, highest stage first (nearest the loss)
    for (std::uint32_t s : sh_.own[r]) {
      double ready = i_ready(s);
      if (ready <= t) return run_i(t, r, s);
      next = std::min(next, ready);
    }
    // 2. W before F when the policy says so
    std::uint32_t w_stage = oldest_w(r);
    if (pol_.weight_first && w_stage != kNoStage) return run_w(t, r, w_stage);
    // 3. a forward that is ready and fits
    auto try_f = [&](std::uint32_t s) {
      if (!f_fits(r, s)) return false;
      double ready = f_ready(s);
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
    if (w_stage != kNoStage) return run_w(t, r, w_stage);
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
    // that plus the work it has left. Recounted from the counters (a few products for one or two
    // stages) rather than decremented, so no rounding error builds up over the run.
    if (limit_ != kNever) {
      double left = 0;
      for (std::uint32_t s : sh_.own[r])
        left += (M_ - next_f_[s]) * sh_.f[s] + (M_ - next_i_[s]) * sh_.i[s] + (M_ - next_w_[s]) * sh_.w[s];
      gave_up_ = gave_up_ || free_[r] + left > limit_;
    }
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
  std::vector<double> mem_, peak_, first_start_, reserved_, free_;
  std::vector<std::vector<Action>> programs_;
  std::vector<std::size_t> cursor_;               // guided: the first action of the guide not yet run
  std::vector<std::vector<std::uint8_t>> done_;  // guided: which of the guide's actions have run
  DecisionQueue queue_;
  double limit_ = kNever;
  bool gave_up_ = false;
};

Schedule empty_schedule(const AutoParams& p) {
  Schedule s;
  s.ranks.resize(p.ranks);
  s.num_stages = p.ranks * p.stages_per_rank;
  s.num_microbatches = p.microbatches;
  s.placement = p.stages_per_rank == 2 ? *Placement::v(p.ranks, s.num_stages) : Placement::loop(p.ranks, s.num_stages);
  return s;
}

void check_params(const AutoParams& p) {
  if (p.ranks == 0 || p.microbatches == 0) throw std::invalid_argument("auto: ranks and microbatches must be at least 1");
  if (p.stages_per_rank != 1 && p.stages_per_rank != 2)
    throw std::invalid_argument(fmt::format(
        "auto: --stages-per-rank must be 1 (loop placement) or 2 (V placement), not {}", p.stages_per_rank));
  if (p.ranks * p.stages_per_rank > Action::kMaxStage)
    throw std::invalid_argument("auto: too many stages");
}

// Simulated makespan and peak of a schedule; fits when it finishes under the cap.
AutoCandidate measure(std::string origin, const Schedule& s, const AutoParams& p) {
  AutoCandidate c;
  c.origin = std::move(origin);
  std::optional<SimAnalysis> a = try_simulate_aggregates(s, s.placement.stage_to_rank, p.sim, p.memory);
  if (!a) {
    c.why_not = "does not finish";
    return c;
  }
  c.makespan = a->makespan;
  c.peak = a->memory.max_peak();
  for (const RankUsage& u : a->ranks) c.span = std::max(c.span, u.last_action_end - u.first_action_start);
  c.fits = p.memory_cap <= 0 || c.peak <= p.memory_cap + kSlack;
  if (!c.fits) c.why_not = fmt::format("peak memory {:.4g} is over the cap {:.4g}", c.peak, p.memory_cap);
  return c;
}

// No schedule of this shape can finish sooner: a rank cannot start before the first microbatch's
// forwards reach it, and then has all its own work to do.
double makespan_lower_bound(const Shape& sh) {
  double bound = 0;
  for (std::uint32_t r = 0; r < sh.ranks; ++r) {
    double work = 0;
    for (std::uint32_t s : sh.own[r]) work += sh.microbatches * (sh.f[s] + sh.backward[s]);
    const std::uint32_t first = sh.own[r].back();  // its lowest stage
    double reach = 0;
    for (std::uint32_t s = 0; s < first; ++s) reach += sh.f[s] + sh.fwd_xfer[s + 1];
    bound = std::max(bound, reach + work);
  }
  return bound;
}

bool better(const AutoCandidate& a, const AutoCandidate& b) {
  if (!a.fits) return false;
  if (!b.fits) return true;
  const double eps = 1e-12 * std::max(1.0, b.makespan);
  if (std::abs(a.makespan - b.makespan) > eps) return a.makespan < b.makespan;
  if (std::abs(a.span - b.span) > eps) return a.span < b.span;  // less bubble inside the ranks
  return a.peak < b.peak - kSlack;
}

// The caps the greedy aims for: the real one first, then the memory of the handcrafted shapes
// (2p-1 and p microbatches of activation: ZB-H2, ZB-H1; and for two chunks (p+2)/2: V-Half), each
// only when lower. V-Half's memory is a V shape's: with one chunk, aiming that low only starves
// the pipeline (at p=64, m=512, T_F=2, T_I=3, T_W=1: 5697 against 3359 at the cap p).
std::vector<double> target_caps(const AutoParams& p, const Shape& sh) {
  double unit = 0;  // one microbatch's activation on the busiest rank
  for (std::uint32_t r = 0; r < sh.ranks; ++r) {
    double sum = sh.base[r];
    for (std::uint32_t s : sh.own[r]) sum += sh.act[s];
    unit = std::max(unit, sum);
  }
  double cap = p.memory_cap > 0 ? p.memory_cap : unit * 2 * p.ranks;
  std::vector<double> caps{cap};
  std::vector<double> shapes{2.0 * p.ranks - 1, 1.0 * p.ranks};
  if (p.stages_per_rank == 2) shapes.push_back((p.ranks + 2) / 2.0);
  for (double k : shapes)
    if (k * unit < cap - kSlack && k * unit >= unit) caps.push_back(k * unit);
  return caps;
}

// The search's budget, counted in work rather than read from a clock, so that the same input gives
// the same schedule on any machine: --time-budget seconds at a nominal 10M simulated actions per
// second (about what one core here does, memory accounting included), each greedy run and each
// simulation charged its action count.
class WorkBudget {
 public:
  explicit WorkBudget(double seconds) : left_(seconds * 1e7) {}
  /// Charges `actions`; false once the budget is spent.
  bool spend(double actions) {
    left_ -= actions;
    return left_ >= 0;
  }
  bool spent() const { return left_ < 0; }
  bool can_pay(double actions) const { return left_ >= actions; }

 private:
  double left_;
};

// Local search on the best schedule found. A move takes one action of a rank and puts it up to
// kReach places earlier or later in that rank's program: a W earlier fills a bubble and frees
// memory sooner, a W later lets a forward or an input gradient on the critical path go first, and
// forwards or input gradients of different chunks trade places. Each move is re-simulated and kept
// when the schedule still finishes under the cap and is better in (makespan, then the sum of the
// ranks' finish times): the second key lets the search cross the plateaus where one move cannot
// shorten the makespan alone but frees a rank for the next. A move that breaks a dependency does not
// finish and is dropped. First improvement, pass after pass, until a pass changes nothing or the
// budget is spent; the result is never worse than what it started from.
struct Score {
  double makespan, finish_sum;
};
Score score_of(const Schedule& s, const AutoParams& p, bool& fits) {
  fits = false;
  std::optional<SimAnalysis> a = try_simulate_aggregates(s, s.placement.stage_to_rank, p.sim, p.memory);
  if (!a) return {kNever, kNever};
  double sum = 0;
  for (const RankUsage& u : a->ranks) sum += u.last_action_end;
  fits = p.memory_cap <= 0 || a->memory.max_peak() <= p.memory_cap + kSlack;
  return {a->makespan, sum};
}

bool improves(const Score& a, const Score& b) {
  const double eps = 1e-12 * std::max(1.0, b.makespan);
  if (a.makespan < b.makespan - eps) return true;
  return a.makespan <= b.makespan + eps && a.finish_sum < b.finish_sum - eps * 8;
}

void improve_locally(const AutoParams& p, WorkBudget& budget, Schedule& best, AutoResult& result) {
  constexpr std::ptrdiff_t kReach = 6;
  const double actions = static_cast<double>(best.action_count());
  // A pass tries up to 2 * kReach moves per action, each a whole simulation. When the budget
  // cannot pay for one pass, first improvement would only ever look at the first actions of the
  // first ranks, a corner of the schedule chosen by its numbering, not by where the bubbles are;
  // then the search is skipped, and the budget is not burnt on it (a larger --time-budget turns
  // it on).
  if (!budget.can_pay(actions * 2 * kReach * actions)) return;
  bool fits = false;
  Score current = score_of(best, p, fits);
  std::size_t moves = 0;
  for (bool changed = true; changed && !budget.spent();) {
    changed = false;
    for (std::size_t r = 0; r < best.ranks.size() && !budget.spent(); ++r) {
      auto& ops = best.ranks[r].actions;
      const auto n = static_cast<std::ptrdiff_t>(ops.size());
      for (std::ptrdiff_t k = 0; k < n && !budget.spent(); ++k) {
        for (std::ptrdiff_t d = -kReach; d <= kReach && !budget.spent(); ++d) {
          const std::ptrdiff_t to = k + d;
          if (d == 0 || to < 0 || to >= n) continue;
          // Never past the F or I of its own (stage, microbatch): that can only deadlock.
          const Action moved = ops[k];
          bool blocked = false;
          for (std::ptrdiff_t j = std::min(k, to); j <= std::max(k, to) && !blocked; ++j)
            blocked = j != k && ops[j].stage == moved.stage && ops[j].microbatch() == moved.microbatch();
          if (blocked) continue;
          auto rotate = [&](std::ptrdiff_t from, std::ptrdiff_t into) {
            if (from < into)
              std::rotate(ops.begin() + from, ops.begin() + from + 1, ops.begin() + into + 1);
            else
              std::rotate(ops.begin() + into, ops.begin() + from, ops.begin() + from + 1);
          };
          rotate(k, to);
          budget.spend(actions);
          bool ok = false;
          Score c = score_of(best, p, ok);
          if (ok && improves(c, current)) {
            current = c;
            changed = true;
            ++moves;
            break;  // position k now holds another action: look at it afresh
          }
          rotate(to, k);  // undo
        }
      }
    }
  }
  if (moves == 0) return;
  // Every kept move finished under the cap and was no slower, so the result is at least as good.
  AutoCandidate c = measure(fmt::format("{} + {} local move{}", result.best.origin, moves, moves == 1 ? "" : "s"), best, p);
  if (!c.fits || !(c.makespan <= result.best.makespan + 1e-12 * std::max(1.0, result.best.makespan))) return;
  result.best = c;
  result.tried.push_back(c);
}

}  // namespace

bool greedy_schedule(const AutoParams& p, const GreedyPolicy& policy, Schedule& out, double& makespan,
                     double give_up_above) {
  check_params(p);
  Shape shape(p);
  Greedy g(shape, policy);
  g.give_up_above(give_up_above);
  if (!g.run(makespan)) return false;
  out = empty_schedule(p);
  for (std::uint32_t r = 0; r < p.ranks; ++r) out.ranks[r].actions = std::move(g.programs()[r]);
  return true;
}

AutoResult auto_schedule(const AutoParams& p) {
  check_params(p);
  const Shape shape(p);
  for (std::uint32_t r = 0; r < p.ranks; ++r) {
    double need = shape.base[r];
    for (std::uint32_t s : shape.own[r]) need += shape.act[s];
    if (p.memory_cap > 0 && need > p.memory_cap + kSlack)
      throw std::invalid_argument(fmt::format(
          "auto: the memory cap {:.4g} is below what rank {} needs for one microbatch ({:.4g})", p.memory_cap, r, need));
  }
  WorkBudget budget(p.time_budget_s);
  const double actions_per_candidate = 3.0 * p.ranks * p.stages_per_rank * p.microbatches;
  AutoResult result;
  std::optional<Schedule> best_schedule;
  auto consider = [&](AutoCandidate c, Schedule s) {
    if (!best_schedule || better(c, result.best)) {
      result.best = c;
      best_schedule = std::move(s);
    }
    result.tried.push_back(std::move(c));
  };

  // One greedy construction, kept as a candidate (or recorded as stuck). The greedy's own times are
  // the timed simulator's (compute-only schedule, implicit comms), so it needs no second simulation.
  auto run_greedy = [&](AutoCandidate c, const GreedyPolicy& pol) {
    Greedy g(shape, pol);
    // A candidate that can no longer beat or tie the best so far stops there (it could not be
    // chosen, so the result is the same as finishing it). The margin covers rounding in the
    // bound; a tie must finish, as the tie-breaks may prefer it.
    if (best_schedule && result.best.fits)
      g.give_up_above(result.best.makespan + 1e-9 * std::max(1.0, result.best.makespan));
    if (!g.run(c.makespan)) {
      c.why_not = g.gave_up() ? fmt::format("stopped early: cannot finish by {:.6g}, the best so far", result.best.makespan)
                              : "the greedy got stuck";
      result.tried.push_back(std::move(c));
      return;
    }
    c.peak = g.peak();
    c.span = g.span();
    c.fits = p.memory_cap <= 0 || c.peak <= p.memory_cap + kSlack;
    Schedule s = empty_schedule(p);
    for (std::uint32_t r = 0; r < p.ranks; ++r) s.ranks[r].actions = std::move(g.programs()[r]);
    consider(std::move(c), std::move(s));
  };

  // Nothing can finish sooner than the makespan bound: the search stops at the first candidate
  // that reaches it (later candidates could only tie).
  const double bound = makespan_lower_bound(shape);
  auto perfect = [&] {
    const double eps = 1e-9 * std::max(1.0, bound);
    return best_schedule && result.best.fits && result.best.makespan <= bound + eps;
  };

  // Greedy variants, most promising first, until the budget is spent (the first always runs).
  // The greedy's own times are the timed simulator's (compute-only schedule, implicit comms), so
  // its candidates need no second simulation.
  // W before F only for two chunks: with one, a W taken before a forward that fits only delays
  // the pipeline, which ZB-H1 (a candidate below) already covers. On 300 random configurations
  // (p 2..16, m p..4p, T_F, T_I, T_W in [0.5, 3], cap p..2p) no one-chunk W-first variant was
  // the winner, while for two chunks 6 were.
  const std::vector<bool> weight_orders = p.stages_per_rank == 2 ? std::vector<bool>{false, true} : std::vector<bool>{false};
  std::vector<GreedyPolicy> policies;
  for (double cap : target_caps(p, shape))
    for (bool late_first : p.stages_per_rank == 2 ? std::vector<bool>{true, false} : std::vector<bool>{true})
      for (bool weight_first : weight_orders) {
        policies.push_back({cap, weight_first, late_first});
        // Room for one second chunk only with the late chunk first and F before W: on 300 random
        // V configurations it won 95 times there, and 7 times in the three other combinations.
        if (p.stages_per_rank == 2 && late_first && !weight_first) policies.push_back({cap, false, true, false});
      }
  auto run_policy = [&](std::size_t k) {
    budget.spend(actions_per_candidate);
    const GreedyPolicy& pol = policies[k];
    AutoCandidate c;
    c.origin = fmt::format("greedy (aim {:.4g}, {}{}{})", pol.target_cap, pol.weight_first ? "W before F" : "F before W",
                           p.stages_per_rank == 2 ? (pol.late_chunk_first ? ", late chunk first" : ", early chunk first")
                                                  : "",
                           pol.reserve_each ? "" : ", second-chunk room as V-Min's");
    run_greedy(std::move(c), pol);
  };
  // The first variant always runs; the others after the families, so that a good family sets
  // the mark that lets a losing variant stop early (run_greedy).
  run_policy(0);

  // The handcrafted families of this shape, simulated: the result is never slower than the best
  // of them that fits (unless the greedy is already perfect).
  SynthParams sp;
  sp.ranks = p.ranks;
  sp.microbatches = p.microbatches;
  std::vector<std::string_view> families = p.stages_per_rank == 1
                                               ? std::vector<std::string_view>{"ZBH1", "ZBH2", "1F1B", "GPipe"}
                                               : std::vector<std::string_view>{"ZBVZeroBubble", "VHalf", "VMin"};
  // With every cost positive, a rank's memory events happen in program order, so sequential_peak
  // is the simulated peak: a family over the cap is ruled out without simulating it.
  bool positive_costs = true;
  for (std::uint32_t st = 0; st < shape.stages; ++st)
    for (ActionKind k : {ActionKind::F, ActionKind::I, ActionKind::W, ActionKind::B})
      positive_costs &= p.sim.costs.cost(static_cast<std::uint16_t>(st), k) > 0;
  std::vector<std::pair<std::string, Schedule>> guides;  // the V patterns (ZBV, V-Half, V-Min), to squeeze below
  for (std::string_view name : families) {
    if (perfect()) break;
    try {
      Schedule s = synthesize(name, sp);
      const std::string family(find_family(name)->name);
      if (p.stages_per_rank == 2) guides.emplace_back(family, s);
      if (const double peak = sequential_peak(s, p.memory);
          positive_costs && p.memory_cap > 0 && peak > p.memory_cap + kSlack) {
        AutoCandidate c;
        c.origin = family;
        c.peak = peak;
        c.why_not = fmt::format("peak memory {:.4g} is over the cap {:.4g}", peak, p.memory_cap);
        result.tried.push_back(std::move(c));
        continue;
      }
      AutoCandidate c = measure(family, s, p);
      consider(std::move(c), std::move(s));
    } catch (const SynthError& e) {
      AutoCandidate c;
      c.origin = std::string(name);
      c.why_not = e.what();
      result.tried.push_back(std::move(c));
    }
  }
  for (std::size_t k = 1; k < policies.size() && !perfect() && !budget.spent(); ++k) run_policy(k);
  // The V patterns squeezed: the greedy, guided by each pattern's order, under the real cap.
  const double cap = target_caps(p, shape).front();
  for (const auto& [family, guide] : guides)
    for (std::uint32_t lookahead : {2u, 6u}) {
      if (perfect() || budget.spent()) break;
      budget.spend(actions_per_candidate);
      GreedyPolicy pol{cap, false, true, true, &guide, lookahead};
      AutoCandidate c;
      c.origin = fmt::format("{} squeezed (aim {:.4g}, look {} ahead)", family, cap, lookahead);
      run_greedy(std::move(c), pol);
    }
  if (!best_schedule || !result.best.fits)
    throw std::invalid_argument(fmt::format("auto: no schedule fits the memory cap {:.4g}", p.memory_cap));
  if (!perfect()) improve_locally(p, budget, *best_schedule, result);
  result.schedule = std::move(*best_schedule);
  return result;
}

}  // namespace ppsched
