// Per-rank costs for tests: F, I and W as given, B = I + W (what the shorthand's default does).
#pragma once

#include "model/costs.hpp"

namespace ppsched::test {

inline KindCosts fiw_costs(double f, double i, double w) {
  KindCosts c = unit_costs();
  c[static_cast<std::size_t>(ActionKind::F)] = f;
  c[static_cast<std::size_t>(ActionKind::I)] = i;
  c[static_cast<std::size_t>(ActionKind::W)] = w;
  c[static_cast<std::size_t>(ActionKind::B)] = i + w;
  return c;
}

}  // namespace ppsched::test
