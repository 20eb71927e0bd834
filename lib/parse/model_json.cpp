#include "parse/model_json.hpp"

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <limits>
#include <span>

#include "diag/suggest.hpp"
#include "parse/json_input.hpp"

namespace ppsched {

namespace {

using nlohmann::json;

// A model of more layers than this is a typo (or a fuzzer), not a network.
constexpr std::uint64_t kMaxLayers = 100000;

constexpr std::array<std::string_view, 24> kTopKeys{"schema_version",
                                                    "name",
                                                    "dtype",
                                                    "sequence_length",
                                                    "vocab",
                                                    "hidden",
                                                    "ffn_hidden",
                                                    "heads",
                                                    "kv_heads",
                                                    "recompute",
                                                    "tied_embeddings",
                                                    "grad_bytes_per_param",
                                                    "optimizer_bytes_per_param",
                                                    "mlp",
                                                    "norm",
                                                    "bias",
                                                    "position",
                                                    "vocab_multiple",
                                                    "attention",
                                                    "attention_dropout",
                                                    "hidden_dropout",
                                                    "moe",
                                                    "layers",
                                                    "measured"};
constexpr std::array<std::string_view, 4> kMoeKeys{"experts", "top_k", "expert_ffn_hidden", "shared_experts"};
constexpr std::array<std::string_view, 4> kLayerKeys{"type", "repeat", "times_us", "microbatch_size"};
constexpr std::array<std::string_view, 2> kMeasuredKeys{"microbatch_size", "times_us"};
constexpr std::array<std::string_view, 3> kTimeKeys{"F", "I", "W"};
constexpr std::array<std::string_view, 4> kTypeNames{"embedding", "block", "moe_block", "head"};
constexpr std::array<std::string_view, 3> kRecomputeNames{"none", "selective", "full"};
constexpr std::array<std::string_view, 4> kDtypeNames{"bf16", "fp16", "fp32", "fp8"};
constexpr std::array<double, 4> kDtypeBytes{2, 2, 4, 1};
constexpr std::array<std::string_view, 2> kMlpNames{"swiglu", "gelu"};
constexpr std::array<std::string_view, 2> kNormNames{"rmsnorm", "layernorm"};
constexpr std::array<std::string_view, 2> kPositionNames{"rope", "learned"};
constexpr std::array<std::string_view, 2> kAttentionNames{"flash", "unfused"};

std::string did_you_mean(std::string_view word, std::span<const std::string_view> known) {
  auto near = closest_match(word, known);
  return near ? fmt::format("; did you mean '{}'?", *near) : std::string();
}

std::string one_of(std::span<const std::string_view> names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i ? (i + 1 == names.size() ? " or " : ", ") : "") + std::string(names[i]);
  return out;
}

class ModelReader {
 public:
  explicit ModelReader(JsonInput& f) : f_(f) {}

  std::optional<NetworkModel> read(std::string_view default_name) {
    json doc;
    if (!f_.load(doc)) return std::nullopt;
    NetworkModel m;
    m.name = std::string(default_name);
    known_keys(doc, "$", kTopKeys);
    if (doc.contains("name")) {
      if (doc["name"].is_string() && !doc["name"].get<std::string>().empty())
        m.name = doc["name"].get<std::string>();
      else
        error("$.name", "\"name\" must be a non-empty string");
    }
    if (auto i = choice(doc, "$", "dtype", kDtypeNames)) m.dtype_bytes = kDtypeBytes[*i];
    if (auto i = choice(doc, "$", "recompute", kRecomputeNames))
      m.recompute = std::array{Recompute::Mode::None, Recompute::Mode::Selective, Recompute::Mode::Full}[*i];
    count(doc, "$", "sequence_length", m.sequence_length, true);
    count(doc, "$", "vocab", m.vocab, true);
    count(doc, "$", "hidden", m.hidden, true);
    count(doc, "$", "heads", m.heads, true);
    count(doc, "$", "kv_heads", m.kv_heads, false);
    count(doc, "$", "ffn_hidden", m.ffn_hidden, false);
    count(doc, "$", "vocab_multiple", m.vocab_multiple, false);
    if (auto i = choice(doc, "$", "mlp", kMlpNames)) m.mlp = std::array{MlpKind::SwiGlu, MlpKind::Gelu}[*i];
    if (auto i = choice(doc, "$", "norm", kNormNames)) m.norm = std::array{NormKind::RmsNorm, NormKind::LayerNorm}[*i];
    if (auto i = choice(doc, "$", "position", kPositionNames))
      m.position = std::array{PositionKind::Rope, PositionKind::Learned}[*i];
    if (auto i = choice(doc, "$", "attention", kAttentionNames))
      m.attention = std::array{AttentionKind::Flash, AttentionKind::Unfused}[*i];
    probability(doc, "attention_dropout", m.attention_dropout);
    probability(doc, "hidden_dropout", m.hidden_dropout);
    flag(doc, "tied_embeddings", m.tied_embeddings);
    flag(doc, "bias", m.bias);
    ok_ &= read_json_number(f_, doc, "$", "grad_bytes_per_param", m.grad_bytes_per_param, false, false);
    ok_ &= read_json_number(f_, doc, "$", "optimizer_bytes_per_param", m.optimizer_bytes_per_param, false, false);
    if (m.heads && m.hidden && m.hidden % m.heads)
      error("$.heads", fmt::format("heads ({}) must divide hidden ({})", m.heads, m.hidden));
    if (m.heads && m.kv_heads && m.heads % m.kv_heads)
      error("$.kv_heads", fmt::format("kv_heads ({}) must divide heads ({})", m.kv_heads, m.heads));

    const bool has_moe = doc.contains("moe");
    if (has_moe) read_moe(doc["moe"], m.moe);
    std::array<std::optional<LayerTimes>, 4> by_type;
    std::uint32_t measured_mbs = 1;
    if (doc.contains("measured")) read_measured(doc["measured"], by_type, measured_mbs);
    if (!doc.contains("layers") || !doc["layers"].is_array() || doc["layers"].empty())
      return error("$.layers",
                   "\"layers\" must list the layers in order, e.g. [{\"type\": \"embedding\"}, "
                   "{\"type\": \"block\", \"repeat\": 32}, {\"type\": \"head\"}]"),
             std::nullopt;
    read_layers(doc["layers"], by_type, measured_mbs, m);
    if (!ok_) return std::nullopt;

    bool any_moe = false, any_block = false;
    for (const Layer& l : m.layers) {
      any_moe |= l.type == LayerType::MoeBlock;
      any_block |= l.type == LayerType::Block;
    }
    if (any_moe && !has_moe)
      return error("$", "a moe_block needs \"moe\": {\"experts\", \"top_k\", \"expert_ffn_hidden\"}"), std::nullopt;
    if (has_moe && !any_moe) return error("$.moe", "\"moe\" is given but no layer is a moe_block"), std::nullopt;
    if (any_block && m.ffn_hidden == 0) return error("$", "a block needs \"ffn_hidden\""), std::nullopt;
    try {
      check_network(m);  // what the checks above do not catch is still reported, at the top
    } catch (const ModelError& e) {
      return error("$", e.what()), std::nullopt;
    }
    return m;
  }

 private:
  void error(const std::string& at, std::string message) {
    f_.error(at, std::move(message));
    ok_ = false;
  }

  void known_keys(const json& obj, const std::string& at, std::span<const std::string_view> keys) {
    ok_ &= f_.known_keys(obj, at, keys);
  }

  void flag(const json& doc, const char* key, bool& out) {
    if (!doc.contains(key)) return;
    if (doc[key].is_boolean())
      out = doc[key].get<bool>();
    else
      error(fmt::format("$.{}", key), fmt::format("\"{}\" must be true or false", key));
  }

  // A probability in [0, 1): 1 would drop everything.
  void probability(const json& doc, const char* key, double& out) {
    if (!doc.contains(key)) return;
    const json& v = doc[key];
    if (v.is_number() && v.get<double>() >= 0 && v.get<double>() < 1)
      out = v.get<double>();
    else
      error(fmt::format("$.{}", key), fmt::format("\"{}\" must be a number from 0 up to (not including) 1", key));
  }

  // An integer >= 1 (0 stays "not given").
  bool count(const json& obj, const std::string& at, const char* key, std::uint64_t& out, bool required,
             std::uint64_t max = std::numeric_limits<std::uint64_t>::max()) {
    if (!obj.contains(key)) {
      if (required) error(at, fmt::format("missing \"{}\"", key));
      return !required;
    }
    const json& v = obj[key];
    if (!v.is_number_unsigned() || v.get<std::uint64_t>() < 1 || v.get<std::uint64_t>() > max) {
      error(at + "." + key, max == std::numeric_limits<std::uint64_t>::max()
                                ? fmt::format("\"{}\" must be an integer >= 1", key)
                                : fmt::format("\"{}\" must be an integer from 1 to {}", key, max));
      return false;
    }
    out = v.get<std::uint64_t>();
    return true;
  }

  bool count32(const json& obj, const std::string& at, const char* key, std::uint32_t& out, bool required) {
    std::uint64_t v = out;
    if (!count(obj, at, key, v, required, std::numeric_limits<std::uint32_t>::max())) return false;
    out = static_cast<std::uint32_t>(v);
    return true;
  }

  std::optional<std::size_t> choice(const json& obj, const std::string& at, const char* key,
                                    std::span<const std::string_view> names) {
    if (!obj.contains(key)) return std::nullopt;
    const json& v = obj[key];
    const std::string path = at + "." + key;
    if (!v.is_string()) return error(path, fmt::format("\"{}\" must be {}", key, one_of(names))), std::nullopt;
    const auto s = v.get<std::string>();
    for (std::size_t i = 0; i < names.size(); ++i)
      if (names[i] == s) return i;
    error(path, fmt::format("\"{}\" must be {}, not '{}'{}", key, one_of(names), s, did_you_mean(s, names)));
    return std::nullopt;
  }

  void read_moe(const json& moe, MoeShape& out) {
    if (!moe.is_object())
      return error("$.moe", "\"moe\" is an object: experts, top_k, expert_ffn_hidden, shared_experts");
    known_keys(moe, "$.moe", kMoeKeys);
    count32(moe, "$.moe", "experts", out.experts, true);
    count32(moe, "$.moe", "top_k", out.top_k, true);
    count(moe, "$.moe", "expert_ffn_hidden", out.expert_ffn_hidden, true);
    if (moe.contains("shared_experts")) {
      const json& v = moe["shared_experts"];
      if (!v.is_number_unsigned() || v.get<std::uint64_t>() > std::numeric_limits<std::uint32_t>::max())
        error("$.moe.shared_experts", "\"shared_experts\" must be an integer >= 0");
      else
        out.shared_experts = static_cast<std::uint32_t>(v.get<std::uint64_t>());
    }
    if (out.experts && out.top_k > out.experts)
      error("$.moe.top_k", fmt::format("top_k ({}) cannot exceed experts ({})", out.top_k, out.experts));
  }

  // {"F": .., "I": .., "W": ..} in microseconds, all three required.
  std::optional<LayerTimes> times(const json& t, const std::string& at, std::uint32_t mbs) {
    if (!t.is_object()) return error(at, "times are an object {\"F\": us, \"I\": us, \"W\": us}"), std::nullopt;
    known_keys(t, at, kTimeKeys);
    LayerTimes out;
    out.microbatch_size = mbs;
    bool good = read_json_number(f_, t, at, "F", out.f_us, true, false);
    good &= read_json_number(f_, t, at, "I", out.i_us, true, false);
    good &= read_json_number(f_, t, at, "W", out.w_us, true, false);
    ok_ &= good;
    return good ? std::optional(out) : std::nullopt;
  }

  void read_measured(const json& measured, std::array<std::optional<LayerTimes>, 4>& by_type, std::uint32_t& mbs) {
    if (!measured.is_object()) return error("$.measured", "\"measured\" is an object: microbatch_size, times_us");
    known_keys(measured, "$.measured", kMeasuredKeys);
    count32(measured, "$.measured", "microbatch_size", mbs, false);
    if (!measured.contains("times_us")) return error("$.measured", "missing \"times_us\"");
    const json& t = measured["times_us"];
    if (!t.is_object())
      return error(
          "$.measured.times_us",
          "\"times_us\" gives times per layer type, e.g. {\"block\": {\"F\": 1200, \"I\": 1250, \"W\": 1100}}");
    known_keys(t, "$.measured.times_us", kTypeNames);
    for (std::size_t i = 0; i < kTypeNames.size(); ++i) {
      const std::string key(kTypeNames[i]);
      if (t.contains(key)) by_type[i] = times(t[key], "$.measured.times_us." + key, mbs);
    }
  }

  void read_layers(const json& layers, const std::array<std::optional<LayerTimes>, 4>& by_type,
                   std::uint32_t measured_mbs, NetworkModel& m) {
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < layers.size(); ++i) {
      const std::string at = fmt::format("$.layers[{}]", i);
      const json& e = layers[i];
      if (!e.is_object()) {
        error(at, "a layer is an object: {\"type\": ..., \"repeat\": n}");
        continue;
      }
      known_keys(e, at, kLayerKeys);
      if (!e.contains("type")) {
        error(at, fmt::format("missing \"type\": {}", one_of(kTypeNames)));
        continue;
      }
      auto type_index = choice(e, at, "type", kTypeNames);
      if (!type_index) continue;
      const auto type = static_cast<LayerType>(*type_index);
      std::uint64_t repeat = 1;
      if (!count(e, at, "repeat", repeat, false, kMaxLayers)) continue;
      std::uint32_t mbs = measured_mbs;
      count32(e, at, "microbatch_size", mbs, false);
      std::optional<LayerTimes> t = by_type[*type_index];
      if (e.contains("times_us"))
        t = times(e["times_us"], at + ".times_us", mbs);
      else if (e.contains("microbatch_size"))
        error(at + ".microbatch_size", "\"microbatch_size\" is the size \"times_us\" was measured at; give both");
      // Where each layer may stand: the partitioners and Megatron's layout need the embedding to
      // open the first stage and the head to close the last.
      const bool first = i == 0, last = i + 1 == layers.size();
      if (type == LayerType::Embedding && (!first || repeat != 1))
        error(at, "the embedding is the first layer, once");
      else if (type == LayerType::Head && (!last || repeat != 1))
        error(at, "the head is the last layer, once");
      else if (first && type != LayerType::Embedding)
        error(at, "the first layer must be the embedding");
      else if (last && type != LayerType::Head)
        error(at, "the last layer must be the head");
      total += repeat;
      if (total > kMaxLayers) return error(at, fmt::format("more than {} layers", kMaxLayers));
      for (std::uint64_t r = 0; r < repeat; ++r) m.layers.push_back({type, t});
    }
    if (ok_ && m.block_count() == 0) error("$.layers", "the model needs at least one block or moe_block");
  }

  JsonInput& f_;
  bool ok_ = true;
};

std::string_view stem(std::string_view path) {
  auto slash = path.find_last_of('/');
  if (slash != std::string_view::npos) path.remove_prefix(slash + 1);
  for (std::string_view ext : {".model.json", ".json"})
    if (path.size() > ext.size() && path.ends_with(ext)) return path.substr(0, path.size() - ext.size());
  return path;
}

}  // namespace

std::optional<NetworkModel> read_model(const std::string& path, DiagnosticSink& sink) {
  JsonInput f(path, "model-file", sink);
  return ModelReader(f).read(path == "-" ? std::string_view("model") : stem(path));
}

std::optional<NetworkModel> read_model_text(std::string_view name, std::string_view text, DiagnosticSink& sink) {
  JsonInput f(name, text, "model-file", sink);
  return ModelReader(f).read(stem(name));
}

}  // namespace ppsched
