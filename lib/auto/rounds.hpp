// The rounds of the automatic search (internal to lib/auto): one row each in an ordered table
// (rounds.cpp), read top to bottom, which Search::run() goes through. A row says when its round
// applies, what the budget must pay before it starts, and how its candidates are made; what the
// budget pays for, the give-up mark, the best so far and the stop at the lower bound are the
// search's (search.hpp), so a round is only the list of candidates it yields.
#pragma once

#include <span>
#include <string_view>

#include "auto/shape.hpp"

namespace ppsched::auto_detail {

class Search;

/// What the loop allows a round that starts, from its row's gates.
struct Allowance {
  /// Its candidates that win least run too (Round::pays_for_all).
  bool every_candidate = true;
  /// The most of the budget its own work may take, besides the greedy runs it charges (Round::share).
  double most_work = kNever;
};

/// A row of the table: a round of the search. The loop skips a round when `applies` says no, when
/// it is `budgeted` and the budget is spent, or when its gate (`pays` times its `work`) is more
/// than the budget has left (kLargeSearchGate times that in a large search); else it keeps a start
/// for the local search if `keeps_start` and runs it. Every round stops before its next candidate
/// once one is perfect, and a budgeted one once the budget is spent (Search::stop()).
struct Round {
  std::string_view name;
  /// When it applies (the shape, the cap, what earlier rounds left); nullptr: always.
  bool (*applies)(const Search&) = nullptr;
  /// It does not start once the budget is spent. false: it runs whatever the budget.
  bool budgeted = false;
  /// Its gate: it starts only when what is left of the budget is at least `pays` times its work,
  /// `work` counting every candidate as run to the end (no give-up). 0: no gate. A round whose
  /// work is 0 has no candidate and does not start.
  double pays = 0;
  double (*work)(const Search&) = nullptr;
  /// With a gate: its candidates that win least run only when the budget left is at least this
  /// many times its work (Allowance::every_candidate). 0: all of them whenever it runs.
  double pays_for_all = 0;
  /// The share of the budget its own work may take (Allowance::most_work): of what is left when it
  /// starts, or, with `share_of_whole`, of the whole budget. 0: no limit of its own.
  double share = 0;
  bool share_of_whole = false;
  /// The best so far is kept as a start for one more local search before it runs: a better
  /// candidate from this round is not always a better start (Search::starts_beaten).
  bool keeps_start = false;
  /// Yields its candidates (through Search::run_greedy and the other calls of search.hpp).
  void (*run)(Search&, const Allowance&) = nullptr;
};

/// Above this many microbatch-ranks (p x m) a search is large: its gates and its rounds' own shares
/// (not the local search's share of the whole) count the budget left as kLargeSearchGate times
/// larger. A search up to it stays within 50 ms (docs/bench.md, "The wide grid"), where opening
/// the gates would double its time; a larger one takes a few percent of its budget under the
/// strict gates, and at p = 24 and 32 the rounds they shut (the exploration's windows, the
/// unit-time orders' rare windows, more building blocks) were what the Zero Bubble authors'
/// searches beat it by.
inline constexpr double kSmallSearch = 1024;
inline constexpr double kLargeSearchGate = 10;

/// The search's rounds, in the order it runs them.
std::span<const Round> search_rounds();

}  // namespace ppsched::auto_detail
