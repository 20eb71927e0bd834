#include "parse/model_json.hpp"

#include <string>

#include "diag/render.hpp"
#include "model/network.hpp"
#include "support/catch.hpp"

using namespace ppsched;

namespace {

std::string errors(std::string_view text) {
  DiagnosticSink sink;
  auto model = read_model_text("m.json", text, sink);
  CHECK_FALSE(model);
  CHECK(sink.has_errors());
  return render_text(sink);
}

double total_params(const NetworkModel& m) {
  double p = 0;
  for (const Layer& l : m.layers) p += layer_cost(m, l, find_gpu("h100"), 1).params;
  return p;
}

}  // namespace

TEST_CASE("a model file: every key, layers expanded, measured times per type and per entry") {
  DiagnosticSink sink;
  auto m = read_model_text("m.json", R"({"schema_version": 1, "name": "llama3-8b-like", "dtype": "fp32",
   "sequence_length": 8192, "vocab": 128256, "hidden": 4096, "ffn_hidden": 14336, "heads": 32, "kv_heads": 8,
   "recompute": "selective", "tied_embeddings": true, "grad_bytes_per_param": 2, "optimizer_bytes_per_param": 8,
   "moe": {"experts": 8, "top_k": 2, "expert_ffn_hidden": 7168, "shared_experts": 1},
   "layers": [{"type": "embedding"}, {"type": "block", "repeat": 2},
              {"type": "moe_block", "repeat": 2, "times_us": {"F": 10, "I": 20, "W": 30}, "microbatch_size": 4},
              {"type": "head"}],
   "measured": {"microbatch_size": 2, "times_us": {"block": {"F": 1200, "I": 1250, "W": 1100}}}})",
                           sink);
  REQUIRE(m);
  CHECK_FALSE(sink.has_errors());
  CHECK(m->name == "llama3-8b-like");
  CHECK(m->dtype_bytes == 4);
  CHECK(m->sequence_length == 8192);
  CHECK(m->vocab == 128256);
  CHECK(m->hidden == 4096);
  CHECK(m->ffn_hidden == 14336);
  CHECK(m->heads == 32);
  CHECK(m->kv_heads == 8);
  CHECK(m->recompute == Recompute::Mode::Selective);
  CHECK(m->tied_embeddings);
  CHECK(m->grad_bytes_per_param == 2);
  CHECK(m->optimizer_bytes_per_param == 8);
  CHECK(m->moe.experts == 8);
  CHECK(m->moe.top_k == 2);
  CHECK(m->moe.expert_ffn_hidden == 7168);
  CHECK(m->moe.shared_experts == 1);
  REQUIRE(m->layers.size() == 6);
  CHECK(m->block_count() == 4);
  CHECK(m->layers[0].type == LayerType::Embedding);
  CHECK_FALSE(m->layers[0].measured);
  CHECK(m->layers[2].type == LayerType::Block);
  REQUIRE(m->layers[2].measured);
  CHECK(m->layers[2].measured->f_us == 1200);
  CHECK(m->layers[2].measured->w_us == 1100);
  CHECK(m->layers[2].measured->microbatch_size == 2);
  CHECK(m->layers[4].type == LayerType::MoeBlock);
  REQUIRE(m->layers[4].measured);
  CHECK(m->layers[4].measured->i_us == 20);
  CHECK(m->layers[4].measured->microbatch_size == 4);
  CHECK(m->layers[5].type == LayerType::Head);
}

TEST_CASE("a model file's defaults: bf16, no recompute, Adam in fp32, kv_heads = heads, named after the file") {
  DiagnosticSink sink;
  auto m = read_model_text("dir/tiny.model.json", R"({"schema_version": 1, "sequence_length": 16, "vocab": 10,
   "hidden": 8, "ffn_hidden": 16, "heads": 2, "layers": [{"type": "embedding"}, {"type": "block"}, {"type": "head"}]})",
                           sink);
  REQUIRE(m);
  CHECK(m->name == "tiny");
  CHECK(m->dtype_bytes == 2);
  CHECK(m->recompute == Recompute::Mode::None);
  CHECK_FALSE(m->tied_embeddings);
  CHECK(m->grad_bytes_per_param == 4);
  CHECK(m->optimizer_bytes_per_param == 12);
  CHECK(m->kv_heads == 0);
  CHECK(m->layers.size() == 3);
}

TEST_CASE("a model file describes the block: MLP, norm, biases, positions and vocabulary padding") {
  DiagnosticSink sink;
  auto m = read_model_text("gpt.json",
                           R"({"schema_version": 1, "sequence_length": 1024, "vocab": 50257, "vocab_multiple": 128,
   "hidden": 64, "ffn_hidden": 256, "heads": 4, "mlp": "gelu", "norm": "layernorm", "bias": true,
   "position": "learned", "layers": [{"type": "embedding"}, {"type": "block"}, {"type": "head"}]})",
                           sink);
  REQUIRE(m);
  CHECK(m->mlp == MlpKind::Gelu);
  CHECK(m->norm == NormKind::LayerNorm);
  CHECK(m->bias);
  CHECK(m->position == PositionKind::Learned);
  CHECK(m->padded_vocab() == 50304);
  // Block: QKV 3 x 64^2 + 192, out 64^2 + 64, in 64 x 256 + 256, out 256 x 64 + 64, two
  // LayerNorms 4 x 64: 12,288 + 4,096 + 16,384 + 16,384 + 832 = 49,984.
  CHECK(layer_cost(*m, m->layers[1], find_gpu("h100"), 1).params == 49984);
  // Embedding: the padded vocabulary and 1024 positions; head: its LayerNorm and, untied, 50304 x 64.
  CHECK(layer_cost(*m, m->layers[0], find_gpu("h100"), 1).params == (50304.0 + 1024) * 64);
  CHECK(layer_cost(*m, m->layers[2], find_gpu("h100"), 1).params == 128 + 50304.0 * 64);
  // The defaults are Llama's block.
  auto plain = read_model_text(
      "llama.json", R"({"schema_version": 1, "sequence_length": 8, "vocab": 10, "hidden": 8, "ffn_hidden": 16,
   "heads": 2, "layers": [{"type": "embedding"}, {"type": "block"}, {"type": "head"}]})",
      sink);
  REQUIRE(plain);
  CHECK(plain->mlp == MlpKind::SwiGlu);
  CHECK(plain->norm == NormKind::RmsNorm);
  CHECK_FALSE(plain->bias);
  CHECK(plain->position == PositionKind::Rope);
  CHECK(plain->padded_vocab() == 10);
  CHECK_FALSE(sink.has_errors());
}

TEST_CASE("the block's vocabulary is checked at its key") {
  CHECK_THAT(
      errors(
          R"({"schema_version": 1, "sequence_length": 8, "vocab": 10, "hidden": 8, "ffn_hidden": 16, "heads": 2, "mlp": "relu",
   "layers": [{"type": "embedding"}, {"type": "block"}, {"type": "head"}]})"),
      Catch::Contains("$.mlp") && Catch::Contains("swiglu or gelu"));
  CHECK_THAT(
      errors(R"({"schema_version": 1, "sequence_length": 8, "vocab": 10, "hidden": 8, "ffn_hidden": 16, "heads": 2,
   "norm": "layernrom", "layers": [{"type": "embedding"}, {"type": "block"}, {"type": "head"}]})"),
      Catch::Contains("did you mean 'layernorm'"));
  CHECK_THAT(
      errors(
          R"({"schema_version": 1, "sequence_length": 8, "vocab": 10, "hidden": 8, "ffn_hidden": 16, "heads": 2, "bias": 1,
   "layers": [{"type": "embedding"}, {"type": "block"}, {"type": "head"}]})"),
      Catch::Contains("\"bias\" must be true or false"));
  CHECK_THAT(
      errors(R"({"schema_version": 1, "sequence_length": 8, "vocab": 10, "hidden": 8, "ffn_hidden": 16, "heads": 2,
   "vocab_multiple": 0, "layers": [{"type": "embedding"}, {"type": "block"}, {"type": "head"}]})"),
      Catch::Contains("$.vocab_multiple"));
}

TEST_CASE("the example models under schedules/ read, with their published parameter counts") {
  struct Example {
    const char* file;
    std::uint32_t blocks;
    double params;
  };
  // Embedding + blocks + final norm + output projection, counted by hand:
  //   8B:  2 x 128256 x 4096 + 32 x 218,112,000 + 4096                 = 8,030,261,248
  //   70B: 2 x 128256 x 8192 + 80 x (150,994,944 + 704,643,072 + 16384) + 8192 = 70,553,706,496
  //   Mixtral: 2 x 32000 x 4096 + 32 x (41,943,040 + 32,768 + 8 x 176,160,768 + 8192) + 4096
  //          = 46,702,792,704
  // The Zero Bubble paper's GPT models (GELU 4h, LayerNorm, biases, learned positions, tied, the
  // vocabulary 50257 padded to 50304), a block 12 h^2 + 13 h (QKV 3h^2 + 3h, out h^2 + h, in
  // 4h^2 + 4h, out 4h^2 + h, two LayerNorms 4h):
  //   1.5B:  50304 x 2304 + 1024 x 2304 + 22 x 63,730,944 + 2 x 2304 = 1,520,345,088
  //   14.6B: 50304 x 5120 + 1024 x 5120 + 46 x 314,639,360 + 2 x 5120 = 14,736,220,160
  const Example examples[] = {{"llama3-8b.model.json", 32, 8030261248.0},
                              {"llama3-70b.model.json", 80, 70553706496.0},
                              {"mixtral-8x7b.model.json", 32, 46702792704.0},
                              {"zb-gpt-1.5b.model.json", 22, 1520345088.0},
                              {"zb-gpt-14.6b.model.json", 46, 14736220160.0}};
  for (const auto& e : examples) {
    INFO(e.file);
    DiagnosticSink sink;
    auto m = read_model(std::string(PPSCHED_SOURCE_DIR) + "/schedules/" + e.file, sink);
    REQUIRE(m);
    CHECK(m->block_count() == e.blocks);
    CHECK(total_params(*m) == e.params);
  }
}

TEST_CASE("errors: model file problems name the value, with line and column") {
  CHECK(errors("{\"schema_version\": 1,\n \"hiden\": 4096, \"layers\": 3}") ==
        "m.json:2:11: error: $.hiden: unknown key 'hiden'; did you mean 'hidden'? [model-file]\n"
        "m.json:1:1: error: $: missing \"sequence_length\" [model-file]\n"
        "m.json:1:1: error: $: missing \"vocab\" [model-file]\n"
        "m.json:1:1: error: $: missing \"hidden\" [model-file]\n"
        "m.json:1:1: error: $: missing \"heads\" [model-file]\n"
        "m.json:2:27: error: $.layers: \"layers\" must list the layers in order, e.g. [{\"type\": \"embedding\"}, "
        "{\"type\": \"block\", \"repeat\": 32}, {\"type\": \"head\"}] [model-file]\n");
  const std::string head =
      "{\"schema_version\": 1, \"sequence_length\": 16, \"vocab\": 10, \"hidden\": 8, "
      "\"ffn_hidden\": 16, \"heads\": 2,\n";
  CHECK(errors("{\"schema_version\": 1, \"sequence_length\": 16, \"vocab\": 10, \"hidden\": 8, \"heads\": 3,\n"
               " \"dtype\": \"bf17\", \"recompute\": 1, \"kv_heads\": 0,\n"
               " \"layers\": [{\"type\": \"embedding\"}, {\"type\": \"blok\"}, {\"type\": \"head\"}]}") ==
        "m.json:2:11: error: $.dtype: \"dtype\" must be bf16, fp16, fp32 or fp8, not 'bf17'; did you mean 'bf16'? "
        "[model-file]\n"
        "m.json:2:32: error: $.recompute: \"recompute\" must be none, selective or full [model-file]\n"
        "m.json:2:47: error: $.kv_heads: \"kv_heads\" must be an integer >= 1 [model-file]\n"
        "m.json:1:81: error: $.heads: heads (3) must divide hidden (8) [model-file]\n"
        "m.json:3:45: error: $.layers[1].type: \"type\" must be embedding, block, moe_block or head, not 'blok'; "
        "did you mean 'block'? [model-file]\n");
  CHECK(errors(head +
               " \"layers\": [{\"type\": \"block\"}, {\"type\": \"embedding\"}, {\"type\": \"head\", \"repeat\": 2},"
               " {\"type\": \"block\", \"repeat\": 0, \"times_us\": {\"F\": 1}}]}") ==
        "m.json:2:13: error: $.layers[0]: the first layer must be the embedding [model-file]\n"
        "m.json:2:32: error: $.layers[1]: the embedding is the first layer, once [model-file]\n"
        "m.json:2:55: error: $.layers[2]: the head is the last layer, once [model-file]\n"
        "m.json:2:114: error: $.layers[3].repeat: \"repeat\" must be an integer from 1 to 100000 [model-file]\n");
  CHECK(errors(head + " \"layers\": [{\"type\": \"embedding\"}, {\"type\": \"block\", \"times_us\": {\"F\": 1, \"I\": "
                      "-2, \"w\": 3}},"
                      " {\"type\": \"head\"}]}") ==
        "m.json:2:89: error: $.layers[1].times_us.w: unknown key 'w'; did you mean 'W'? [model-file]\n"
        "m.json:2:80: error: $.layers[1].times_us.I: \"I\" must be a finite number >= 0 [model-file]\n"
        "m.json:2:66: error: $.layers[1].times_us: missing \"W\" [model-file]\n");
  CHECK(errors(head + " \"layers\": [{\"type\": \"embedding\"}, {\"type\": \"moe_block\"}, {\"type\": \"head\"}]}") ==
        "m.json:1:1: error: $: a moe_block needs \"moe\": {\"experts\", \"top_k\", \"expert_ffn_hidden\"} "
        "[model-file]\n");
  CHECK(errors(head + " \"moe\": {\"experts\": 2, \"top_k\": 3, \"expert_ffn_hidden\": 8},\n"
                      " \"layers\": [{\"type\": \"embedding\"}, {\"type\": \"moe_block\"}, {\"type\": \"head\"}]}") ==
        "m.json:2:33: error: $.moe.top_k: top_k (3) cannot exceed experts (2) [model-file]\n");
  CHECK(errors(head + " \"moe\": {\"experts\": 2, \"top_k\": 1, \"expert_ffn_hidden\": 8},\n"
                      " \"layers\": [{\"type\": \"embedding\"}, {\"type\": \"block\"}, {\"type\": \"head\"}]}") ==
        "m.json:2:9: error: $.moe: \"moe\" is given but no layer is a moe_block [model-file]\n");
  CHECK(errors(head + " \"layers\": [{\"type\": \"embedding\"}, {\"type\": \"head\"}]}") ==
        "m.json:2:12: error: $.layers: the model needs at least one block or moe_block [model-file]\n");
  CHECK(errors(head + " \"measured\": {\"times_us\": {\"blocks\": {\"F\": 1, \"I\": 1, \"W\": 1}}},\n"
                      " \"layers\": [{\"type\": \"embedding\"}, {\"type\": \"block\", \"microbatch_size\": 2}, "
                      "{\"type\": \"head\"}]}") ==
        "m.json:2:38: error: $.measured.times_us.blocks: unknown key 'blocks'; did you mean 'block'? [model-file]\n"
        "m.json:3:73: error: $.layers[1].microbatch_size: \"microbatch_size\" is the size \"times_us\" was measured "
        "at; give both [model-file]\n");
  CHECK(errors("{\"schema_version\": 2}") ==
        "m.json:1:20: error: $.schema_version: schema_version must be 1 [model-file]\n");
  CHECK(errors("{\"schema_version\": 1,").starts_with("m.json:1:22: error: invalid JSON: "));
}

TEST_CASE("a model that cannot be read from disk is one diagnostic") {
  DiagnosticSink sink;
  CHECK_FALSE(read_model("/nonexistent/x.model.json", sink));
  CHECK(sink.has_errors());
}
