#include "parse/stage_spec_json.hpp"

#include <fmt/format.h>

#include <array>

#include "parse/json_input.hpp"

namespace ppsched {

namespace {

constexpr std::array<std::string_view, 2> kTopKeys{"schema_version", "stages"};
constexpr std::array<std::string_view, 7> kStageKeys{
    "activation_bytes", "gradient_bytes", "activation_memory_bytes", "weight_grad_memory_bytes", "weight_bytes",
    "recompute",        "inputs"};
constexpr std::array<std::string_view, 4> kRecomputeKeys{"mode", "cost", "kept_memory_bytes", "weight_groups"};
constexpr std::array<std::string_view, 4> kInputKeys{"name", "requires_grad", "keyword", "tensor"};
constexpr const char* kInputShape =
    "an input is {\"name\": ..., \"requires_grad\": true|false, \"keyword\": true|false, \"tensor\": true|false}";

constexpr const char* kRecomputeShape =
    "\"recompute\" is \"none\", \"full\", or {\"mode\": \"full\"|\"selective\", \"cost\": fraction of the forward, "
    "\"kept_memory_bytes\": ..., \"weight_groups\": ...}";

// "recompute": a mode name, or an object. Selective AC recomputes part of the forward and keeps
// part of the activations, both model-specific: it must say how much of each.
bool read_recompute(JsonInput& f, const nlohmann::json& st, const std::string& at, Recompute& r) {
  if (!st.contains("recompute")) return true;
  const auto& v = st["recompute"];
  const std::string rat = at + ".recompute";
  auto mode_of = [&](const nlohmann::json& name, const std::string& where) {
    if (name.is_string()) {
      if (name == "none") return r.mode = Recompute::Mode::None, true;
      if (name == "full") return r.mode = Recompute::Mode::Full, true;
      if (name == "selective") return r.mode = Recompute::Mode::Selective, true;
    }
    f.error(where, kRecomputeShape);
    return false;
  };
  if (v.is_string()) {
    if (!mode_of(v, rat)) return false;
    if (r.mode == Recompute::Mode::Selective) {
      f.error(rat,
              "selective recompute needs its \"cost\" (the fraction of the forward it re-runs) and "
              "\"kept_memory_bytes\" (what the forward keeps): give {\"mode\": \"selective\", \"cost\": ..., "
              "\"kept_memory_bytes\": ...}");
      return false;
    }
    return true;
  }
  if (!v.is_object() || !v.contains("mode")) {
    f.error(rat, kRecomputeShape);
    return false;
  }
  if (!f.known_keys(v, rat, kRecomputeKeys)) return false;
  if (!mode_of(v["mode"], rat + ".mode")) return false;
  const bool selective = r.mode == Recompute::Mode::Selective;
  bool ok = read_json_number(f, v, rat, "cost", r.cost, selective, false);
  if (ok && r.cost > 1) {
    f.error(rat + ".cost", "\"cost\" is the fraction of the stage's forward one recompute re-runs: at most 1");
    ok = false;
  }
  ok &= read_json_number(f, v, rat, "kept_memory_bytes", r.kept_memory_bytes, selective, false);
  if (v.contains("weight_groups")) {
    const auto& g = v["weight_groups"];
    if (!g.is_number_integer() || g.get<std::int64_t>() < 1 || g.get<std::int64_t>() > 1'000'000) {
      f.error(rat + ".weight_groups",
              "\"weight_groups\" (parameter groups per checkpointed region) is an integer >= 1");
      ok = false;
    } else {
      r.weight_groups = static_cast<std::uint32_t>(g.get<std::int64_t>());
    }
  }
  return ok;
}

std::optional<std::vector<StageSpec>> stage_spec_from(JsonInput& f, std::uint32_t num_stages) {
  nlohmann::json doc;
  if (!f.load(doc)) return std::nullopt;
  // A misspelt key (weight_byte) would leave its value at the default without a word.
  if (!f.known_keys(doc, "$", kTopKeys)) return std::nullopt;
  if (!doc.contains("stages") || !doc["stages"].is_array())
    return f.error("$.stages", "\"stages\" must list one object per stage"), std::nullopt;
  const auto& stages = doc["stages"];
  if (stages.size() != num_stages) {
    auto count = [](std::size_t n) { return fmt::format("{} stage{}", n, n == 1 ? "" : "s"); };
    return f.error("$.stages",
                   fmt::format("the stage spec describes {}; the schedule has {}{}", count(stages.size()),
                               count(num_stages), num_stages ? fmt::format(" (0-{})", num_stages - 1) : std::string())),
           std::nullopt;
  }
  std::vector<StageSpec> out(num_stages);
  bool ok = true;
  for (std::size_t i = 0; i < stages.size(); ++i) {
    std::string at = fmt::format("$.stages[{}]", i);
    const auto& st = stages[i];
    if (!st.is_object()) {
      f.error(at, "each stage is an object");
      ok = false;
      continue;
    }
    StageSpec& sp = out[i];
    ok &= f.known_keys(st, at, kStageKeys);
    ok &= read_json_number(f, st, at, "activation_bytes", sp.activation_bytes, true, false);
    sp.gradient_bytes = sp.activation_bytes;
    ok &= read_json_number(f, st, at, "gradient_bytes", sp.gradient_bytes, false, false);
    sp.activation_memory_bytes = sp.activation_bytes;
    ok &= read_json_number(f, st, at, "activation_memory_bytes", sp.activation_memory_bytes, false, false);
    ok &= read_json_number(f, st, at, "weight_grad_memory_bytes", sp.weight_grad_memory_bytes, false, false);
    ok &= read_json_number(f, st, at, "weight_bytes", sp.weight_bytes, false, false);
    ok &= read_recompute(f, st, at, sp.recompute);
    if (st.contains("inputs")) {
      const auto& inputs = st["inputs"];
      // Not a list is an error: ignoring it would skip the zero-bubble input-gradient check.
      if (!inputs.is_array()) {
        f.error(at + ".inputs", fmt::format("\"inputs\" must be a list, got {}: [{{\"name\": ..., \"requires_grad\": "
                                            "true|false, \"keyword\": true|false, \"tensor\": true|false}}, ...]",
                                            inputs.type_name()));
        ok = false;
      }
      for (std::size_t k = 0; inputs.is_array() && k < inputs.size(); ++k) {
        const auto& in = inputs[k];
        std::string iat = fmt::format("{}.inputs[{}]", at, k);
        if (!in.is_object() || !in.contains("name") || !in["name"].is_string()) {
          f.error(iat, kInputShape);
          ok = false;
          continue;
        }
        if (!f.known_keys(in, iat, kInputKeys)) {
          ok = false;
          continue;
        }
        StageSpec::Input input;
        input.name = in["name"].get<std::string>();
        auto flag = [&](const char* key, bool& value) {
          if (!in.contains(key)) return true;
          if (!in[key].is_boolean()) {
            f.error(iat + "." + key, fmt::format("\"{}\" must be true or false", key));
            return false;
          }
          value = in[key].get<bool>();
          return true;
        };
        bool flags_ok = flag("requires_grad", input.requires_grad);
        flags_ok &= flag("keyword", input.keyword);
        flags_ok &= flag("tensor", input.tensor);
        ok &= flags_ok;
        sp.inputs.push_back(std::move(input));
      }
    }
  }
  if (!ok) return std::nullopt;
  return out;
}

}  // namespace

std::optional<std::vector<StageSpec>> read_stage_spec(const std::string& path, std::uint32_t num_stages,
                                                      DiagnosticSink& sink) {
  JsonInput f(path, "stage-spec", sink);
  return stage_spec_from(f, num_stages);
}

std::optional<std::vector<StageSpec>> read_stage_spec_text(std::string_view name, std::string_view text,
                                                           std::uint32_t num_stages, DiagnosticSink& sink) {
  JsonInput f(name, text, "stage-spec", sink);
  return stage_spec_from(f, num_stages);
}

}  // namespace ppsched
