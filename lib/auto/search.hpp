// One automatic search (internal to lib/auto): the loop over the rounds (rounds.hpp) and what they
// share. The search owns the work budget, the best candidate so far and its schedule, the mark
// that lets a losing candidate give up, the stop at the objective's lower bound, the V patterns
// kept as guides for the greedy, and the starts for the local search; a round only decides which
// candidates to measure, through the calls below, and the loop decides whether it runs at all.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "auto/auto_schedule.hpp"
#include "auto/greedy.hpp"
#include "auto/local_search.hpp"
#include "auto/shape.hpp"
#include "synth/synth.hpp"

namespace ppsched::auto_detail {

/// The search: construct it, then run() once.
class Search {
 public:
  explicit Search(const AutoParams& p);

  /// Runs the rounds of search_rounds() in order, each where its row lets it (rounds.hpp), and
  /// returns the best candidate with its schedule. Stops at the first candidate that reaches the
  /// objective's lower bound: nothing later could be faster. Throws UserError when no
  /// candidate fits the cap.
  AutoResult run();

  // ---- What a round reads ----
  const AutoParams& params() const { return p_; }
  const Shape& shape() const { return shape_; }
  /// The real cap, as the greedy aims for it (target_caps: a cap for "none" too).
  double cap() const { return cap_; }
  /// The unguided greedy variants, most promising first (greedy_variants).
  const std::vector<GreedyPolicy>& variants() const { return policies_; }
  WorkBudget& budget() { return budget_; }
  const WorkBudget& budget() const { return budget_; }
  /// A candidate has reached the objective's lower bound: nothing later can be faster.
  bool perfect() const;
  /// A round stops before its next candidate once this holds: a candidate is perfect, or the
  /// budget is spent.
  bool stop() const { return perfect() || budget_.spent(); }
  /// Whether some candidate fits the cap, and whether the last one measured does.
  bool has_fitting_best() const { return has_best() && result_.best.fits; }
  bool last_fits() const { return !result_.tried.empty() && result_.tried.back().fits; }

  // ---- The handcrafted families of this shape (Family::auto_search_order), in their order ----
  std::size_t families_left() const { return families_.size() - families_measured_; }
  /// Measures the next family, unless a candidate is perfect (it counts as measured either way).
  /// Not charged to the budget: a few per search.
  void measure_next_family();

  // ---- The V patterns, kept as guides (each V family measured adds its own) ----
  std::size_t guide_count() const { return guides_.size(); }
  const std::string& guide_family(std::size_t index) const { return guides_[index].family; }
  /// The whole pattern of guides_[index] (built now if only its start was).
  const Schedule& whole(std::size_t index);
  /// The guides squeezed in their own order so far (squeeze rounds), and the next one to squeeze,
  /// counted as squeezed from now.
  std::size_t squeezed() const { return squeezed_; }
  std::size_t take_next_squeeze() { return squeezed_++; }

  // ---- The candidates a round yields ----
  /// One greedy construction, guided by guides_[guide] if given, under the mark and charged to the
  /// budget for the actions it placed (a run that gave up, only those). Returns
  /// GreedyRun::same_with_shadow_lookahead.
  bool run_greedy(AutoCandidate c, GreedyPolicy pol, std::optional<std::size_t> guide = std::nullopt);
  /// An unguided variant, named by describe().
  void run_variant(const GreedyPolicy& pol);
  /// A candidate that was not run, with why (c.why_not).
  void note(AutoCandidate c) { result_.tried.push_back(std::move(c)); }
  /// A finished run's programs that are not kept: storage for the next run (GreedyBuffers).
  void recycle(GreedyRun& run);
  /// The storage every greedy run of the search shares.
  GreedyBuffers& buffers() { return buffers_; }

  // ---- The local search, last ----
  /// A candidate and its schedule, kept as a start for one more local search (keep_start).
  struct Start {
    AutoCandidate best;
    Schedule schedule;
  };
  /// The starts kept that the best so far improves on, asked before the local search changes it
  /// (else a start would be searched twice).
  std::vector<Start*> starts_beaten();
  /// The best schedule so far, wherever it is kept, and where it came from (AutoCandidate::origin).
  Schedule& best_schedule();
  const std::string& best_origin() const { return result_.best.origin; }
  /// Local search on the best schedule, in place, taking at most `most_work` of the budget.
  /// Returns the work it took.
  double improve_best(double most_work);
  /// Local search from `start`, taking at most `most_work`; its end becomes the best when it is
  /// better. Returns the work it took.
  double improve_start(Start& start, double most_work);

 private:
  // A V pattern, to squeeze, kept as a guide for the greedy.
  struct Guide {
    std::string family;
    Schedule schedule;    // the pattern, or its start (add_guide)
    bool complete;        // the whole pattern
    std::uint64_t slots;  // how many slots of it were built
  };

  bool consider(AutoCandidate c);
  bool has_best() const { return best_own_ || best_guide_; }
  void keep(Schedule s);
  void keep_guide(std::size_t index);
  double mark() const;
  double best_time() const { return iteration_time(result_.best, p_.optimizer); }
  bool record_run(AutoCandidate c, const GreedyRun& run, std::string_view unfinished);
  void measure_family(std::string_view name);
  void keep_start();
  void add_guide(const std::string& family);
  void build(Guide& g, std::uint64_t slots);
  void extend(Guide& g);
  GreedyRun run_guided(std::size_t index, GreedyPolicy pol, bool charged);
  void over_the_cap(const std::string& family, const Schedule& s);

  const AutoParams& p_;
  const Shape shape_;
  WorkBudget budget_;
  const double bound_;
  const double cap_;
  const std::vector<GreedyPolicy> policies_;
  SynthParams sp_;
  std::vector<std::string_view> families_;  // this shape's, the likely best first
  std::size_t families_measured_ = 0;       // families_[0, families_measured_) are done
  bool positive_costs_ = true;
  std::vector<Guide> guides_;  // the V patterns, to squeeze
  std::size_t squeezed_ = 0;   // guides_[0, squeezed_) are done
  AutoResult result_;
  // The best candidate's schedule: its own, or a V pattern's, left in guides_ until the end.
  std::optional<Schedule> best_own_;
  std::optional<std::size_t> best_guide_;
  GreedyBuffers buffers_;  // shared by every greedy run of the search
  // The best candidates (and their schedules) before the rounds that keep a start, each a start
  // for one more local search (improve_start).
  std::vector<Start> starts_;
};

}  // namespace ppsched::auto_detail
