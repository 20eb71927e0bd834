// The bubble decomposition view (sim_views.hpp).
#include <fmt/format.h>

#include "report/sim_views.hpp"

namespace ppsched {

std::string bubbles_text(const SimAnalysis& a) {
  // The shared-GPU column only where ranks shared a device (simulate --gpu-count).
  bool shared = false;
  for (const RankUsage& u : a.ranks) shared |= u.device_wait > 0;
  std::string out = "idle time per rank, by cause\nrank   warm-up cool-down  dependency   transfer";
  out += shared ? " shared GPU\n" : "\n";
  RankUsage total;
  auto row = [&](const RankUsage& u) {
    std::string line =
        fmt::format(" {:>9g} {:>9g} {:>11g} {:>10g}", u.warmup, u.cooldown, u.dependency_wait, u.comm_wait);
    return line + (shared ? fmt::format(" {:>10g}\n", u.device_wait) : "\n");
  };
  for (std::size_t r = 0; r < a.ranks.size(); ++r) {
    const RankUsage& u = a.ranks[r];
    out += fmt::format("{:>4}", r) + row(u);
    total.warmup += u.warmup;
    total.cooldown += u.cooldown;
    total.dependency_wait += u.dependency_wait;
    total.comm_wait += u.comm_wait;
    total.device_wait += u.device_wait;
  }
  out += " all" + row(total);
  return out;
}

nlohmann::ordered_json bubbles_json(const SimAnalysis& a) {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (const RankUsage& u : a.ranks)
    j.push_back({{"warmup", u.warmup},
                 {"cooldown", u.cooldown},
                 {"dependency_wait", u.dependency_wait},
                 {"comm_wait", u.comm_wait},
                 {"device_wait", u.device_wait}});
  return j;
}

}  // namespace ppsched
