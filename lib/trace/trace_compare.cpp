#include "trace/trace_compare.hpp"

#include <algorithm>

#include "ir/user_error.hpp"
#include "sim/memory.hpp"
#include "sim/timed.hpp"

namespace ppsched {

TraceComparison compare_with_simulator(const TraceAnalysis& measured, const RuntimeModel& model, P2pQueues queues) {
  TraceComparison out;
  const Schedule order = compute_only(measured.executed);
  const std::uint32_t stages = stages_in_use(order);
  const auto ranks = static_cast<std::uint32_t>(order.rank_count());
  TimedOptions opt;
  opt.costs = measured_cost_model(measured, stages);
  // Every hop as measured: its median transfer as the link's latency (the bytes are in it).
  double hop = 0;
  std::vector<double> all;
  for (const MeasuredHop& h : measured.hops) all.push_back(h.median_us);
  if (!all.empty()) {
    std::sort(all.begin(), all.end());
    hop = all[all.size() / 2];
  }
  Topology t;
  t.node_of_rank.assign(ranks, 0);
  t.slice_of_rank.assign(ranks, 0);
  t.intra_node = t.inter_node = t.inter_slice = {hop, 0};
  opt.comm.topology = t;
  opt.p2p_queues = queues;
  out.run = schedule_as_run(order, model.runtime, {});
  const Placement placement = placement_of(order);
  try {
    out.simulated = simulate_runtime(out.run, placement.stage_to_rank, opt, MemoryModel{}, model);
  } catch (const TimedDeadlock& e) {
    throw UserError(std::string("the order as run cannot finish in the simulator: ") + e.what());
  }
  out.simulated_iteration_us = iteration_time(out.simulated, model.optimizer);
  out.p2p_queues = queues;
  return out;
}

}  // namespace ppsched
