// V orders from building blocks (v_blocks.hpp): every distinct block, through the framework of
// synth/v_block.hpp.
#include "auto/v_blocks.hpp"

#include <algorithm>
#include <set>

#include "synth/v_block.hpp"

namespace ppsched::auto_detail {

using namespace vblock;

std::vector<std::vector<std::vector<Action>>> v_block_orders(const Shape& sh, std::uint32_t chunks, std::size_t limit,
                                                             double most_work, double& work) {
  std::vector<std::vector<std::vector<Action>>> out;
  if (sh.v != 2 || sh.ranks < 2 || limit == 0) return out;
  const std::uint32_t P = sh.ranks;
  const std::uint32_t times = repeats(P, sh.microbatches);
  const int most = most_held(P, sh.microbatches, chunks);
  std::set<std::vector<int>> seen_blocks;
  std::set<std::vector<std::uint64_t>> seen_orders;
  auto order_key = [](const std::vector<std::vector<Action>>& programs) {
    std::vector<std::uint64_t> key;
    for (const auto& program : programs) {
      for (const Action& a : program)
        key.push_back((std::uint64_t{a.index} << 24) | (std::uint64_t{a.stage} << 8) |
                      static_cast<std::uint64_t>(a.kind));
      key.push_back(~std::uint64_t{0});
    }
    return key;
  };
  // Rank 0's row: its chunk-0 forward at slot 0, the other three anywhere else (distinct); the
  // offsets from 1 to 5 slots, the nearer ranks' at least the farther ones'.
  for (int f1 = 1; f1 < kPeriod; ++f1)
    for (int i1 = 1; i1 < kPeriod; ++i1)
      for (int i0 = 1; i0 < kPeriod; ++i0) {
        if (f1 == i1 || f1 == i0 || i1 == i0) continue;
        Row row0{0, f1, i1, i0, 0, 0};
        if (!fill_weight_grads(row0)) continue;
        for (int near = 1; near < kPeriod; ++near)
          for (int far = 1; far <= near; ++far)
            for (std::uint32_t split = 1; split < P; ++split) {
              std::vector<Row> rows{row0};
              bool ok = true;
              for (std::uint32_t r = 0; ok && r + 1 < P; ++r) {
                Row next{};
                ok = next_row(rows.back(), r < split ? near : far, next);
                rows.push_back(next);
              }
              if (ok) {
                const auto first = first_positions(rows);
                // A rank's order depends only on where its six first positions sit relative to
                // each other.
                std::vector<int> key;
                for (const auto& f : first) {
                  const int lo = *std::min_element(f.begin(), f.end());
                  for (int x : f) key.push_back(x - lo);
                }
                if (seen_blocks.insert(key).second && steady_level(first, times) <= most) {
                  auto programs = reorder(first, sh.microbatches, chunks, work);
                  if (programs && seen_orders.insert(order_key(*programs)).second) out.push_back(std::move(*programs));
                  if (out.size() >= limit || work > most_work) return out;
                }
              }
              if (far == near) break;  // the split changes nothing
            }
      }
  return out;
}

}  // namespace ppsched::auto_detail
