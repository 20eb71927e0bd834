// The bubble decomposition view (sim_views.hpp).
#include <fmt/format.h>

#include "report/sim_views.hpp"

namespace ppsched {

std::string bubbles_text(const SimAnalysis& a) {
  std::string out = "idle time per rank, by cause\nrank   warm-up cool-down  dependency   transfer\n";
  RankUsage total;
  for (std::size_t r = 0; r < a.ranks.size(); ++r) {
    const RankUsage& u = a.ranks[r];
    out += fmt::format("{:>4} {:>9g} {:>9g} {:>11g} {:>10g}\n", r, u.warmup, u.cooldown, u.dependency_wait, u.comm_wait);
    total.warmup += u.warmup;
    total.cooldown += u.cooldown;
    total.dependency_wait += u.dependency_wait;
    total.comm_wait += u.comm_wait;
  }
  out += fmt::format(" all {:>9g} {:>9g} {:>11g} {:>10g}\n", total.warmup, total.cooldown, total.dependency_wait,
                     total.comm_wait);
  return out;
}

nlohmann::ordered_json bubbles_json(const SimAnalysis& a) {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (const RankUsage& u : a.ranks)
    j.push_back({{"warmup", u.warmup}, {"cooldown", u.cooldown}, {"dependency_wait", u.dependency_wait},
                 {"comm_wait", u.comm_wait}});
  return j;
}

}  // namespace ppsched
