// Model shapes the model tests share: Llama 3 8B (schedules/llama3-8b.model.json) and the Zero
// Bubble paper's 1.5B GPT (schedules/zb-gpt-1.5b.model.json), built in code.
#pragma once

#include "model/network.hpp"

namespace ppsched::test {

inline NetworkModel llama3_8b() {
  NetworkModel m;
  m.name = "llama3-8b";
  m.sequence_length = 8192;
  m.vocab = 128256;
  m.hidden = 4096;
  m.ffn_hidden = 14336;
  m.heads = 32;
  m.kv_heads = 8;
  m.layers.push_back({LayerType::Embedding, {}});
  for (int i = 0; i < 32; ++i) m.layers.push_back({LayerType::Block, {}});
  m.layers.push_back({LayerType::Head, {}});
  return m;
}

inline NetworkModel zb_gpt_1p5b() {
  NetworkModel m;
  m.name = "zb-gpt-1.5b";
  m.sequence_length = 1024;
  m.vocab = 50257;
  m.vocab_multiple = 128;
  m.hidden = 2304;
  m.ffn_hidden = 4 * 2304;
  m.heads = 24;
  m.mlp = MlpKind::Gelu;
  m.norm = NormKind::LayerNorm;
  m.bias = true;
  m.position = PositionKind::Learned;
  m.tied_embeddings = true;
  m.layers.push_back({LayerType::Embedding, {}});
  for (int i = 0; i < 22; ++i) m.layers.push_back({LayerType::Block, {}});
  m.layers.push_back({LayerType::Head, {}});
  return m;
}

}  // namespace ppsched::test
