#include "parse/runtime_params_json.hpp"

#include <fmt/format.h>

#include <array>

#include "diag/suggest.hpp"
#include "model/gpu.hpp"
#include "parse/json_input.hpp"

namespace ppsched {

namespace {

constexpr std::array<std::string_view, 7> kKeys{"schema_version",       "runtime",        "hardware", "source",
                                                "p2p_call_overhead_us", "p2p_kernel_sms", "gpu"};

// The runtimes whose models take calibrated figures, and those that take none (sim/runtime.hpp).
constexpr std::string_view kWithParams = "megatron";
constexpr std::array<std::string_view, 2> kWithoutParams{"ideal", "pytorch"};

bool read_runtime(JsonInput& f, const nlohmann::json& doc, std::string& out) {
  if (!doc.contains("runtime")) return f.error("$", "missing \"runtime\" (\"megatron\")"), false;
  const auto& v = doc["runtime"];
  if (!v.is_string()) return f.error("$.runtime", "\"runtime\" must be a string: \"megatron\""), false;
  const auto name = v.get<std::string>();
  if (name == kWithParams) {
    out = name;
    return true;
  }
  for (auto none : kWithoutParams)
    if (name == none) {
      f.error("$.runtime",
              fmt::format("runtime '{}' has no parameters: only '{}' reads a parameters file", name, kWithParams));
      return false;
    }
  f.error("$.runtime",
          fmt::format("unknown runtime '{}': the only runtime with parameters is '{}'", name, kWithParams));
  return false;
}

bool read_text(JsonInput& f, const nlohmann::json& doc, const char* key, std::string& out) {
  if (!doc.contains(key)) return true;
  const auto& v = doc[key];
  if (!v.is_string()) return f.error(std::string("$.") + key, fmt::format("\"{}\" must be a string", key)), false;
  out = v.get<std::string>();
  return true;
}

std::optional<RuntimeParams> params_from(JsonInput& f) {
  nlohmann::json doc;
  if (!f.load(doc)) return std::nullopt;
  // Every field from the file: none keeps the struct's (or Megatron's) default.
  RuntimeParams p;
  p.runtime.clear();
  p.hardware.clear();
  p.source.clear();
  p.p2p_call_overhead_us = 0;
  p.p2p_kernel_sms = 0;
  p.gpu.clear();
  // A key misspelt here would silently leave a figure at a value nobody chose.
  bool ok = f.known_keys(doc, "$", kKeys);
  ok &= read_runtime(f, doc, p.runtime);
  ok &= read_text(f, doc, "hardware", p.hardware);
  ok &= read_text(f, doc, "source", p.source);
  ok &= read_json_number(f, doc, "$", "p2p_call_overhead_us", p.p2p_call_overhead_us, true, false);
  ok &= read_json_number(f, doc, "$", "p2p_kernel_sms", p.p2p_kernel_sms, false, false);
  ok &= read_text(f, doc, "gpu", p.gpu);
  if (!ok) return std::nullopt;
  if (p.p2p_kernel_sms > 0) {  // a share of SMs needs the device they are a share of
    const GpuSpec* gpu = find_gpu(p.gpu);
    if (!gpu) {
      std::string known;
      for (const GpuSpec& g : gpus()) known += (known.empty() ? "" : ", ") + std::string(g.name);
      f.error(doc.contains("gpu") ? "$.gpu" : "$",
              p.gpu.empty() ? "\"p2p_kernel_sms\" needs \"gpu\", the device whose SMs they are (" + known + ")"
                            : "unknown gpu '" + p.gpu + "' (known: " + known + ")");
      return std::nullopt;
    }
    if (p.p2p_kernel_sms >= gpu->sms) {
      f.error("$.p2p_kernel_sms",
              fmt::format("{} SMs would leave none of the {}'s {} for compute", p.p2p_kernel_sms, gpu->name, gpu->sms));
      return std::nullopt;
    }
  }
  return p;
}

}  // namespace

std::optional<RuntimeParams> read_runtime_params(const std::string& path, DiagnosticSink& sink) {
  JsonInput f(path, "runtime-params-file", sink);
  return params_from(f);
}

std::optional<RuntimeParams> read_runtime_params_text(std::string_view name, std::string_view text,
                                                      DiagnosticSink& sink) {
  JsonInput f(name, text, "runtime-params-file", sink);
  return params_from(f);
}

}  // namespace ppsched
