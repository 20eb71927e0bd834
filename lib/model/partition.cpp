#include "model/partition.hpp"

#include <algorithm>
#include <limits>
#include <string>

namespace ppsched {

namespace {

Partition with_blocks_per_stage(const NetworkModel& m, const std::vector<std::uint32_t>& blocks) {
  Partition p;
  p.layers_of_stage.resize(blocks.size());
  std::uint32_t next = 1;  // layer 0 is the embedding
  for (std::size_t s = 0; s < blocks.size(); ++s) {
    auto& stage = p.layers_of_stage[s];
    if (s == 0) stage.push_back(0);
    for (std::uint32_t b = 0; b < blocks[s]; ++b) stage.push_back(next++);
    if (s + 1 == blocks.size()) stage.push_back(static_cast<std::uint32_t>(m.layers.size() - 1));
  }
  return p;
}

// ---- the layout string -------------------------------------------------------------------

constexpr std::uint64_t kMaxCount = std::uint64_t{1} << 40;  // saturates; far beyond any model

[[noreturn]] void layout_error(std::size_t column, const std::string& message) {
  throw ModelError("--pipeline-layout:" + std::to_string(column) + ": " + message);
}
[[noreturn]] void layout_error(const std::string& message) { throw ModelError("--pipeline-layout: " + message); }

// One symbol ('E', 't', 'L', '|') or a group ('('), repeated `count` times.
struct Item {
  char symbol;
  std::size_t column;
  std::uint64_t count = 1;
  std::vector<Item> group;
};

std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > kMaxCount / b ? kMaxCount : a * b;
}

class LayoutParser {
 public:
  explicit LayoutParser(std::string_view text) : s_(text) {}

  std::vector<Item> parse() {
    std::vector<Item> items = sequence(nullptr);
    return items;
  }

 private:
  void skip_commas() {
    while (i_ < s_.size() && s_[i_] == ',') ++i_;
  }

  // Items up to the end, or up to the ')' closing the group opened at `open` (not consumed).
  std::vector<Item> sequence(const Item* open) {
    std::vector<Item> items;
    for (skip_commas(); i_ < s_.size(); skip_commas()) {
      const char c = s_[i_];
      const std::size_t column = i_ + 1;
      switch (c) {
        case 'E':
        case 't':
        case 'L':
        case '|': {
          ++i_;
          Item item{c, column, 1, {}};
          item.count = repeat(true);
          items.push_back(std::move(item));
          break;
        }
        case '(': {
          if (open) layout_error(column, "groups do not nest (Megatron expands one level of '(...)*N')");
          ++i_;
          Item item{'(', column, 1, {}};
          item.group = sequence(&item);
          if (i_ >= s_.size()) layout_error(column, "'(' without ')'");
          ++i_;  // the ')'
          if (item.group.empty()) layout_error(column, "an empty group '()' repeats nothing");
          item.count = repeat(false);
          if (item.count == kNoCount) layout_error(column, "a group needs a count: (...)*N");
          items.push_back(std::move(item));
          break;
        }
        case ')':
          if (!open) layout_error(column, "')' without '('");
          return items;
        case '*':
          layout_error(column, "'*' must follow a layer letter, '|' or a group");
        case 'm':
          layout_error(column, "'m' (a multi-token prediction layer) is not modelled");
        default:
          layout_error(column, std::string("unknown symbol '") + c +
                                   "': E embedding, t block, L head and loss, '|' stage boundary");
      }
    }
    return items;
  }

  static constexpr std::uint64_t kNoCount = ~std::uint64_t{0};

  // "*N" after a symbol or group (commas anywhere in it are ignored, as Megatron drops them first).
  // Without '*': 1 when `optional`, else kNoCount.
  std::uint64_t repeat(bool optional) {
    skip_commas();
    if (i_ >= s_.size() || s_[i_] != '*') return optional ? 1 : kNoCount;
    const std::size_t star = i_ + 1;
    ++i_;
    skip_commas();
    if (i_ >= s_.size() || s_[i_] < '0' || s_[i_] > '9') layout_error(star, "'*' needs a count, e.g. t*4");
    std::uint64_t n = 0;
    for (; i_ < s_.size(); ++i_) {
      if (s_[i_] == ',') continue;
      if (s_[i_] < '0' || s_[i_] > '9') break;
      n = std::min(kMaxCount, n * 10 + std::uint64_t(s_[i_] - '0'));
    }
    return n;
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

// How many '|' the items expand to (saturating).
std::uint64_t boundaries(const std::vector<Item>& items) {
  std::uint64_t n = 0;
  for (const Item& it : items) {
    const std::uint64_t one = it.symbol == '(' ? boundaries(it.group) : it.symbol == '|' ? 1 : 0;
    n = std::min(kMaxCount, n + saturating_mul(one, it.count));
  }
  return n;
}

std::uint64_t expanded_size(const std::vector<Item>& items) {
  std::uint64_t n = 0;
  for (const Item& it : items)
    n = std::min(kMaxCount, n + saturating_mul(it.symbol == '(' ? expanded_size(it.group) : 1, it.count));
  return n;
}

// Walks the expanded layout against the model's layers, in order.
class LayoutBuilder {
 public:
  explicit LayoutBuilder(const NetworkModel& m) : m_(m), blocks_(m.block_count()) { p_.layers_of_stage.emplace_back(); }

  void expand(const std::vector<Item>& items) {
    for (const Item& it : items) {
      if (it.symbol == '(' && expanded_size(it.group) == 0) continue;  // (t*0)*1000000000
      for (std::uint64_t k = 0; k < it.count; ++k) {
        if (it.symbol == '(')
          expand(it.group);
        else
          place(it.symbol, it.column);
      }
    }
  }

  Partition finish() {
    if (next_ < m_.layers.size()) {
      const LayerType t = m_.layers[next_].type;
      if (t == LayerType::Embedding) layout_error("the layout places no 'E' (the embedding)");
      if (t == LayerType::Head) layout_error("the layout ends without 'L' (the head and loss)");
      layout_error("the layout places " + std::to_string(blocks_used_) + " blocks ('t'), the model has " +
                   std::to_string(blocks_));
    }
    return std::move(p_);
  }

 private:
  static char letter(LayerType t) {
    switch (t) {
      case LayerType::Embedding:
        return 'E';
      case LayerType::Head:
        return 'L';
      case LayerType::Block:
      case LayerType::MoeBlock:
        return 't';
    }
    return '?';
  }

  void place(char symbol, std::size_t column) {
    if (symbol == '|') {
      p_.layers_of_stage.emplace_back();
      return;
    }
    if (next_ >= m_.layers.size())
      layout_error(column, std::string("'") + symbol + "' after 'L': the head and loss is the model's last layer");
    const char want = letter(m_.layers[next_].type);
    if (symbol != want) {
      if (want == 'E') layout_error(column, "the layout must start with 'E' (the embedding)");
      if (symbol == 'E') layout_error(column, "'E' (the embedding) comes once, first");
      if (symbol == 't')
        layout_error(column, "'t' would be block " + std::to_string(blocks_used_ + 1) + ", the model has " +
                                 std::to_string(blocks_) + " blocks");
      layout_error(column, "'L' (the head) after " + std::to_string(blocks_used_) + " of the model's " +
                               std::to_string(blocks_) + " blocks");
    }
    if (symbol == 't') ++blocks_used_;
    p_.layers_of_stage.back().push_back(static_cast<std::uint32_t>(next_++));
  }

  const NetworkModel& m_;
  std::uint32_t blocks_;
  std::uint32_t blocks_used_ = 0;
  std::size_t next_ = 0;
  Partition p_;
};

}  // namespace

namespace {

// The smallest slowest stage of a contiguous split of the blocks into `stages` stages, the
// embedding on the first stage and the head on the last (`total(layer)` prices a layer). With
// `empty_ends` the first stage may hold the embedding alone and the last the head alone, as
// Megatron's layouts and PyTorch's split proposals allow; middle stages hold a block at least.
// Ties keep the earliest cut, so the result is deterministic. Returns the blocks per stage, or an
// empty vector when no such split exists.
std::vector<std::uint32_t> min_max_split(const std::vector<double>& prefix, double embedding, double head,
                                         std::uint32_t stages, bool empty_ends, double& slowest) {
  const auto n = static_cast<std::uint32_t>(prefix.size() - 1);
  const std::uint32_t fewest_first = empty_ends ? 0 : 1;  // blocks the first stage must hold
  const std::uint32_t fewest_last = empty_ends ? 0 : 1;
  const double inf = std::numeric_limits<double>::infinity();
  // best[k][j]: the smallest slowest stage over the embedding and the first j blocks in k + 1
  // stages; cut[k][j]: where the last of those stages starts.
  std::vector<std::vector<double>> best(stages, std::vector<double>(n + 1, inf));
  std::vector<std::vector<std::uint32_t>> cut(stages, std::vector<std::uint32_t>(n + 1, 0));
  for (std::uint32_t j = fewest_first; j <= n; ++j)
    if (stages > 1 || j == n) best[0][j] = embedding + prefix[j] + (stages == 1 ? head : 0.0);
  for (std::uint32_t k = 1; k < stages; ++k) {
    const bool last = k + 1 == stages;
    const std::uint32_t fewest = last ? fewest_last : 1;
    for (std::uint32_t j = last ? n : 0; j <= n; ++j) {
      for (std::uint32_t i = 0; i + fewest <= j; ++i) {
        if (best[k - 1][i] == inf) continue;
        const double here = std::max(best[k - 1][i], prefix[j] - prefix[i] + (last ? head : 0.0));
        if (here < best[k][j]) {
          best[k][j] = here;
          cut[k][j] = i;
        }
      }
    }
  }
  slowest = best[stages - 1][n];
  if (slowest == inf) return {};
  std::vector<std::uint32_t> blocks(stages, 0);
  std::uint32_t j = n;
  for (std::uint32_t k = stages - 1; k > 0; --k) {
    blocks[k] = j - cut[k][j];
    j = cut[k][j];
  }
  blocks[0] = j;
  return blocks;
}

}  // namespace

Partition balanced_partition(const NetworkModel& m, std::uint32_t stages, const GpuSpec* gpu,
                             std::uint32_t microbatch_size) {
  check_network(m);
  const std::uint32_t n = m.block_count();
  if (stages == 0) throw ModelError("a pipeline needs at least one stage");
  if (stages > n + 2)
    throw ModelError(std::to_string(stages) + " stages need at least " + std::to_string(stages - 2) +
                     " blocks, the embedding and the head a stage each; model '" + m.name + "' has " +
                     std::to_string(n));
  // A layer's time under a full backward.
  std::vector<double> prefix(n + 1, 0.0);  // prefix[j]: the first j blocks
  LayerCostMemo cost_of(m, gpu, microbatch_size);
  auto total = [&](std::size_t layer) {
    const LayerCost& c = cost_of(m.layers[layer]);
    return c.f_us + c.i_us + c.w_us + c.recompute_us;
  };
  const double embedding = total(0), head = total(m.layers.size() - 1);
  for (std::uint32_t j = 0; j < n; ++j) prefix[j + 1] = prefix[j] + total(j + 1);
  // A split with a block on every stage where one exists; end stages of their own only where they
  // make the slowest stage faster (or where there are more stages than blocks).
  double with_blocks = std::numeric_limits<double>::infinity(), with_empty_ends = with_blocks;
  std::vector<std::uint32_t> blocks;
  if (stages <= n) blocks = min_max_split(prefix, embedding, head, stages, false, with_blocks);
  if (stages > 1) {
    std::vector<std::uint32_t> other = min_max_split(prefix, embedding, head, stages, true, with_empty_ends);
    if (with_empty_ends < with_blocks) blocks = std::move(other);
  }
  return with_blocks_per_stage(m, blocks);
}

Partition parse_pipeline_layout(std::string_view layout, const NetworkModel& m, std::uint32_t stages) {
  check_network(m);
  const std::vector<Item> items = LayoutParser(layout).parse();
  const std::uint64_t found = std::min(kMaxCount, boundaries(items) + 1);
  if (found != stages)
    layout_error("the layout has " +
                 (found == kMaxCount ? std::string("too many stages")
                                     : std::to_string(found) + (found == 1 ? " stage" : " stages")) +
                 ", the pipeline has " + std::to_string(stages));
  LayoutBuilder builder(m);
  builder.expand(items);
  return builder.finish();
}

Partition explicit_partition(const NetworkModel& m, const std::vector<std::uint32_t>& blocks_per_stage,
                             std::uint32_t stages) {
  check_network(m);
  if (blocks_per_stage.size() != stages)
    throw ModelError("blocks per stage: " + std::to_string(blocks_per_stage.size()) +
                     " counts given, the pipeline has " + std::to_string(stages) + " stages");
  std::uint64_t sum = 0;
  for (std::uint32_t b : blocks_per_stage) sum += b;
  if (sum != m.block_count())
    throw ModelError("blocks per stage: the counts add up to " + std::to_string(sum) + " blocks, model '" + m.name +
                     "' has " + std::to_string(m.block_count()));
  return with_blocks_per_stage(m, blocks_per_stage);
}

std::string stage_layers_label(const NetworkModel& m, const std::vector<std::uint32_t>& layers) {
  std::uint32_t blocks = 0, moe_blocks = 0;
  bool embedding = false, head = false;
  for (std::uint32_t i : layers) {
    if (i >= m.layers.size()) continue;
    switch (m.layers[i].type) {
      case LayerType::Embedding:
        embedding = true;
        break;
      case LayerType::Head:
        head = true;
        break;
      case LayerType::Block:
        ++blocks;
        break;
      case LayerType::MoeBlock:
        ++moe_blocks;
        break;
    }
  }
  std::string out;
  auto add = [&](const std::string& part) { out += (out.empty() ? "" : " + ") + part; };
  if (embedding) add("embedding");
  if (blocks) add(std::to_string(blocks) + (blocks == 1 ? " block" : " blocks"));
  if (moe_blocks) add(std::to_string(moe_blocks) + (moe_blocks == 1 ? " moe block" : " moe blocks"));
  if (head) add("head");
  return out.empty() ? "(empty)" : out;
}

}  // namespace ppsched
