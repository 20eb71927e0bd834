// Tensor and expert parallelism in the cost model (model/ops.hpp shard_ops, model/network.hpp
// LayerParallelism, model/collectives.hpp): each GPU's share of a layer's work, state and
// activations, and the collectives that join the shares, against hand counts.
#include "model/collectives.hpp"
#include "model/network.hpp"
#include "model/ops.hpp"
#include "support/catch.hpp"
#include "support/model_shapes.hpp"

using namespace ppsched;

namespace {

double pass_flops(const PassOps& p) { return p.gemm_flops() + p.attention.flops; }

}  // namespace

TEST_CASE("collectives: ring all-gather, reduce-scatter, all-reduce and all-to-all by hand") {
  const Link link{5, 100};  // 5 us a step, 100 bytes a microsecond
  CHECK(all_gather_us(800, 4, link) == Approx(3.0 / 4 * 8 + 3 * 5));
  CHECK(reduce_scatter_us(800, 4, link) == Approx(all_gather_us(800, 4, link)));
  CHECK(all_reduce_us(800, 4, link) == Approx(2 * (6 + 15)));
  CHECK(all_to_all_us(800, 4, link) == Approx(6 + 5));
  CHECK(all_reduce_us(800, 1, link) == 0);
  const GpuSpec& h100 = *find_gpu("h100");
  CHECK(scale_up_link(h100).bytes_per_us == Approx(450e3));
  CHECK(scale_out_link(h100).bytes_per_us == Approx(50e3));
}

TEST_CASE("tensor parallel ops: a Llama block's FLOPs split eight ways, its norms only with SP") {
  const NetworkModel m = test::llama3_8b();
  const double tokens = 8192;
  const LayerOps whole = layer_ops(m, LayerType::Block, tokens);
  for (bool sp : {false, true}) {
    LayerOps split = layer_ops(m, LayerType::Block, tokens);
    shard_ops(split, 8, sp, 1);
    INFO("sequence parallel " << sp);
    CHECK(pass_flops(split.f) == Approx(pass_flops(whole.f) / 8));
    CHECK(pass_flops(split.i) == Approx(pass_flops(whole.i) / 8));
    CHECK(pass_flops(split.w) == Approx(pass_flops(whole.w) / 8));
    // The QKV GEMM keeps its tokens and reduction, an eighth of its outputs; the down projection an
    // eighth of its reduction.
    CHECK(split.f.gemms.front().name == "qkv");
    CHECK(split.f.gemms.front().m == whole.f.gemms.front().m);
    CHECK(split.f.gemms.front().n == Approx(whole.f.gemms.front().n / 8));
    const double norm_bytes = split.f.memory.front().bytes;  // the attention norm comes first
    CHECK(split.f.memory.front().name == "norm");
    CHECK(norm_bytes == Approx(whole.f.memory.front().bytes / (sp ? 8 : 1)));
  }
}

TEST_CASE("tensor parallel cost: a Llama block on 8 GPUs of a node, by hand") {
  const NetworkModel m = test::llama3_8b();
  const GpuSpec& h100 = *find_gpu("h100");
  const LayerCost whole = layer_cost(m, m.layers[1], &h100, 1);
  LayerParallelism tp;
  tp.tp = 8;
  tp.tp_link = scale_up_link(h100);
  const LayerCost no_sp = layer_cost(m, m.layers[1], &h100, 1, tp);
  tp.sequence_parallel = true;
  const LayerCost sp = layer_cost(m, m.layers[1], &h100, 1, tp);
  // Parameters: the linears an eighth, the two RMSNorms whole.
  const double norms = 2.0 * 4096;
  CHECK(no_sp.params == Approx((whole.params - norms) / 8 + norms));
  // Two all-reduces of 8192 x 4096 bf16 (64 MiB) in F and in I: 2 x 2 x (7/8 x 64 MiB / 450 GB/s + 7 x 5 us).
  const double bytes = 8192.0 * 4096 * 2, one = 2 * (7.0 / 8 * bytes / 450e3 + 7 * 5);
  CHECK(no_sp.f_comm_us == Approx(2 * one));
  CHECK(no_sp.i_comm_us == Approx(2 * one));
  CHECK(sp.f_comm_us == Approx(2 * one));  // an all-gather and a reduce-scatter move what one all-reduce does
  // Compute alone is at least an eighth of the whole (smaller GEMMs are no more efficient).
  CHECK(no_sp.f_us - no_sp.f_comm_us >= whole.f_us / 8);
  CHECK(no_sp.w_us >= whole.w_us / 8);
  CHECK(no_sp.w_us < whole.w_us / 4);
  // Activations: without SP the norms' and the column-parallel linears' inputs stay whole (4 x h
  // bf16 per token); with SP everything is an eighth. The message to the next stage is an eighth.
  const double replicated = 8192.0 * 4 * 4096 * 2;
  CHECK(no_sp.all_activation_bytes == Approx(replicated + (whole.all_activation_bytes - replicated) / 8));
  CHECK(sp.all_activation_bytes == Approx(whole.all_activation_bytes / 8));
  CHECK(sp.output_bytes == Approx(whole.output_bytes / 8));
}

TEST_CASE("expert parallel cost: a MoE block's experts spread over the group, with two all-to-alls a pass") {
  NetworkModel m = test::llama3_8b();
  m.moe = {8, 2, 14336, 0};
  m.layers[1].type = LayerType::MoeBlock;
  const GpuSpec& h100 = *find_gpu("h100");
  const LayerCost whole = layer_cost(m, m.layers[1], &h100, 1);
  LayerParallelism ep;
  ep.ep = 8;
  ep.ep_link = scale_out_link(h100);
  const LayerCost split = layer_cost(m, m.layers[1], &h100, 1, ep);
  const double experts = 8.0 * 3 * 4096 * 14336;
  CHECK(split.params == Approx(whole.params - experts + experts / 8));
  // Dispatch and combine of the tokens' two copies, 8192 x 2 x 4096 bf16, each way in F and in I.
  const double bytes = 8192.0 * 2 * 4096 * 2;
  CHECK(split.f_comm_us == Approx(2 * (7.0 / 8 * bytes / 50e3 + 15)));
  // Each GPU runs one expert over eight GPUs' tokens: the same FLOPs, in fewer, larger GEMMs.
  LayerOps ops = layer_ops(m, LayerType::MoeBlock, 8192);
  const double before = pass_flops(ops.f);
  shard_ops(ops, 1, false, 8);
  CHECK(pass_flops(ops.f) == Approx(before));
}

TEST_CASE("a layer with measured times cannot be split: its times are the whole layer's") {
  NetworkModel m = test::llama3_8b();
  m.layers[1].measured = LayerTimes{1000, 1000, 500, 1};
  LayerParallelism tp;
  tp.tp = 2;
  CHECK_THROWS_AS(layer_cost(m, m.layers[1], find_gpu("h100"), 1, tp), ModelError);
  CHECK_NOTHROW(layer_cost(m, m.layers[1], find_gpu("h100"), 1));
}
