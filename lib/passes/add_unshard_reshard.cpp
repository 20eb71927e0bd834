// FSDP UNSHARD/RESHARD placement (PyTorch's `_add_unshard_reshard`), in linear time.
//
// At each action PyTorch looks ahead for the next `count` distinct stages to compute,
// rescanning the rest of the rank every time: quadratic when a rank has fewer than `count`
// stages, since the scan then never stops early. Here one backward pass carries, from each
// position, the first few distinct stages of the suffix with the element where each first
// appears; the look-ahead result at a position is read off that short list. A forward pass then
// emits RESHARD/UNSHARD with the active stages in a PythonIntSet, so that evictions come out in
// the order CPython iterates its set.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ir/action_text.hpp"
#include "passes/passes.hpp"
#include "passes/python_set.hpp"
#include "passes/pytorch_view.hpp"

namespace ppsched {

namespace {

// The look-ahead result of every position of one rank, stored flat.
struct Lookahead {
  std::vector<std::int32_t> stages;
  std::vector<std::uint32_t> begin, length;
  std::span<const std::int32_t> at(std::size_t j) const { return {stages.data() + begin[j], length[j]}; }
};

bool is_overlap(const Schedule& s, const Action& a) {
  return a.kind == ActionKind::OverlapFB && pytorch::has_sub_actions(s, a);
}

// The stages PyTorch's look-ahead takes from one element: the sub-actions' stages for an
// OVERLAP_F_B that has them, otherwise the element's own stage (-1 for any other container).
template <class F>
void element_stages(const Schedule& s, const Action& a, F&& f) {
  if (is_overlap(s, a)) {
    for (const Action& sub : s.subs(a)) f(static_cast<std::int32_t>(pytorch::stage(sub)));
  } else {
    f(static_cast<std::int32_t>(pytorch::stage(a)));
  }
}

bool holds(std::span<const std::int32_t> list, std::int32_t stage) {
  return std::find(list.begin(), list.end(), stage) != list.end();
}

// PyTorch's stopping rule, applied to the distinct stages of the suffix in first-occurrence
// order (each entry names the element where its stage first appears): a regular element stops
// the scan when it brings the list to exactly `count`, an OVERLAP_F_B (all of its new stages
// added) when the list has reached `count` or more. Elements that add nothing cannot stop it
// for count > 0, so they need not be listed.
struct Distinct {
  std::int32_t stage;
  std::uint32_t element;
};

void take_until_stop(const Schedule& s, const std::vector<Action>& elements, const std::vector<Distinct>& distinct,
                     std::uint32_t count, std::vector<std::int32_t>& out) {
  std::size_t taken = 0;
  for (std::size_t i = 0; i < distinct.size();) {
    const std::uint32_t element = distinct[i].element;
    std::size_t end = i;
    while (end < distinct.size() && distinct[end].element == element) out.push_back(distinct[end++].stage);
    taken += end - i;
    bool stop = is_overlap(s, elements[element]) ? taken >= count : taken == count;
    if (stop) return;
    i = end;
  }
}

Lookahead linear_lookahead(const Schedule& s, const std::vector<Action>& elements, std::uint32_t count) {
  // The answer at a position holds fewer than `count` stages before its last element and at
  // most `widest` from that element, so the first count - 1 + widest distinct stages suffice.
  // Each position costs O(keep * widest): linear for PyTorch's two-action OVERLAP_F_B.
  std::size_t widest = 1;
  for (const Action& a : elements)
    if (is_overlap(s, a)) widest = std::max(widest, s.subs(a).size());
  const std::size_t keep = count - 1 + widest;

  const std::size_t n = elements.size();
  Lookahead look;
  look.begin.resize(n);
  look.length.resize(n);
  look.stages.reserve(n * std::min<std::size_t>(count, 4));
  std::vector<Distinct> distinct, next;
  std::vector<std::int32_t> own;
  for (std::size_t j = n; j-- > 0;) {
    own.clear();
    element_stages(s, elements[j], [&](std::int32_t st) {
      if (!holds(own, st)) own.push_back(st);
    });
    next.clear();
    for (std::int32_t st : own) next.push_back({st, static_cast<std::uint32_t>(j)});
    for (const Distinct& d : distinct) {
      if (next.size() >= keep) break;
      if (!holds(own, d.stage)) next.push_back(d);
    }
    distinct.swap(next);
    look.begin[j] = static_cast<std::uint32_t>(look.stages.size());
    take_until_stop(s, elements, distinct, count, look.stages);
    look.length[j] = static_cast<std::uint32_t>(look.stages.size() - look.begin[j]);
  }
  return look;
}

// count <= 0 (a regular element's test, len == count after an append, never holds; an
// OVERLAP_F_B's, len >= count, always does), and None (neither test stops; comparing an int with
// None raises at the first OVERLAP_F_B): the answer at a position is every distinct stage of the
// suffix, up to and including the first OVERLAP_F_B for count <= 0. Read backwards, the answer at
// j is j's own stages followed by the answer at j + 1 without them, or j's own alone where j is
// an OVERLAP_F_B that ends the scan. Distinct stages are at most a rank's stage count, so this is
// linear in the rank times that count.
Lookahead unbounded_lookahead(const Schedule& s, const std::vector<Action>& elements, bool stop_at_overlap) {
  const std::size_t n = elements.size();
  Lookahead look;
  look.begin.resize(n);
  look.length.resize(n);
  std::vector<std::int32_t> after, here;
  for (std::size_t j = n; j-- > 0;) {
    here.clear();
    element_stages(s, elements[j], [&](std::int32_t st) {
      if (!holds(here, st)) here.push_back(st);
    });
    if (!(stop_at_overlap && is_overlap(s, elements[j])))
      for (std::int32_t st : after)
        if (!holds(here, st)) here.push_back(st);
    look.begin[j] = static_cast<std::uint32_t>(look.stages.size());
    look.stages.insert(look.stages.end(), here.begin(), here.end());
    look.length[j] = static_cast<std::uint32_t>(here.size());
    after.swap(here);
  }
  return look;
}

Action fsdp(ActionKind kind, std::int64_t stage) { return *pytorch::plain(stage, kind, Action::kNoMicrobatch); }

}  // namespace

Schedule add_unshard_reshard(const Schedule& s, std::optional<std::int64_t> max_active_stages) {
  Schedule out = empty_like(s);
  std::vector<Action> elements;
  std::vector<std::int64_t> evict;
  std::vector<std::int32_t> fetch;
  for (std::size_t r = 0; r < s.ranks.size(); ++r) {
    elements.clear();
    for (const Action& a : s.ranks[r].actions)
      if (!a.is_idle()) elements.push_back(a);
    if (!max_active_stages)
      for (const Action& a : elements)
        if (is_overlap(s, a))
          throw PassError("max_active_stages=None cannot look past '" + action_text(a, s.sub_actions) + "' on rank " +
                          std::to_string(r) +
                          " (PyTorch: TypeError: '>=' not supported between instances of 'int' "
                          "and 'NoneType')");
    Lookahead look =
        !max_active_stages || *max_active_stages <= 0
            ? unbounded_lookahead(s, elements, max_active_stages.has_value())
            : linear_lookahead(s, elements,
                               static_cast<std::uint32_t>(std::min<std::int64_t>(*max_active_stages, 1 << 20)));

    auto& program = out.ranks[r].actions;
    program.reserve(elements.size() + 8);
    PythonIntSet active;
    for (std::size_t j = 0; j < elements.size(); ++j) {
      std::span<const std::int32_t> next = look.at(j);
      evict.clear();
      active.for_each([&](std::int64_t st) {
        if (!holds(next, static_cast<std::int32_t>(st))) evict.push_back(st);
      });
      fetch.clear();
      for (std::int32_t st : next)
        if (!active.contains(st)) fetch.push_back(st);
      for (std::int64_t st : evict) {
        active.discard(st);
        program.push_back(fsdp(ActionKind::Reshard, st));
      }
      for (std::int32_t st : fetch) {
        active.add(st);
        program.push_back(fsdp(ActionKind::Unshard, st));
      }
      program.push_back(elements[j]);
    }
    for (std::int64_t st : active.items()) program.push_back(fsdp(ActionKind::Reshard, st));
  }
  return out;
}

}  // namespace ppsched
