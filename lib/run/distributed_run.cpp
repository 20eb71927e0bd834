// run_distributed: what every process of a multi-process `ppsched run` does, in the same order
// on every process so that their collectives match: discover and open once, join the
// communicator, measure the links, then per schedule plan, localize, measure and gather.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "run/distributed.hpp"

namespace ppsched::run {

namespace {

// Discovery's outcome on every process: all must be usable, or all stop with the first
// process's reason that is not.
Discovery agree_on_discovery(ProcessGroup& group, const Discovery& mine, double timeout_s) {
  const std::string status(1, static_cast<char>(mine.status));
  Bytes local(status.begin(), status.end());
  local.insert(local.end(), mine.message.begin(), mine.message.end());
  const std::vector<Bytes> all = group.all_gather(local, timeout_s);
  for (std::size_t p = 0; p < all.size(); ++p) {
    if (all[p].empty() || all[p][0] == static_cast<std::uint8_t>(Discovery::Status::Ok)) continue;
    Discovery d = mine;
    d.status = static_cast<Discovery::Status>(all[p][0]);
    d.message = "process " + std::to_string(p) + ": " + std::string(all[p].begin() + 1, all[p].end());
    return d;
  }
  return mine;
}

// The pairs measured: process 0 with the first other process on its node, and with the first
// process on another node, when there are such processes.
std::vector<MeasuredLink> links_to_measure(const std::vector<ProcessPlace>& places) {
  std::vector<MeasuredLink> links;
  for (std::size_t p = 1; p < places.size(); ++p)
    if (places[p].node == places[0].node) {
      links.push_back({"intra_node", 0, static_cast<int>(p), 0, 0});
      break;
    }
  for (std::size_t p = 1; p < places.size(); ++p)
    if (places[p].node != places[0].node) {
      links.push_back({"inter_node", 0, static_cast<int>(p), 0, 0});
      break;
    }
  return links;
}

void measure_links(Device& device, ProcessGroup& group, std::vector<MeasuredLink>& links,
                   const DistributedOptions& opt) {
  const int me = group.rank();
  for (MeasuredLink& l : links) {
    if (me == l.from || me == l.to) {
      const int peer = me == l.from ? l.to : l.from;
      const double small = device.ping_pong_us(peer, opt.ping_small_bytes, opt.ping_repeats);
      const double large = device.ping_pong_us(peer, opt.ping_large_bytes, opt.ping_repeats);
      l.latency_us = small;
      if (large > small)
        l.bytes_per_us = static_cast<double>(opt.ping_large_bytes - opt.ping_small_bytes) / (large - small);
    }
    group.barrier(opt.timeout_s);
  }
}

Topology topology_of(const std::vector<ProcessPlace>& places, const std::vector<std::int32_t>& process_of_rank,
                     const std::vector<MeasuredLink>& links) {
  Topology t;
  for (std::int32_t p : process_of_rank) {
    t.node_of_rank.push_back(static_cast<std::uint32_t>(places.at(p).node));
    t.slice_of_rank.push_back(0);
  }
  for (const MeasuredLink& l : links) {
    const Link link{l.latency_us, l.bytes_per_us};
    (l.link == "intra_node" ? t.intra_node : t.inter_node) = link;
  }
  // A class nothing crossed stays as measured for the other (no rank pair uses it).
  if (links.size() == 1)
    (links[0].link == "intra_node" ? t.inter_node : t.intra_node) = Link{links[0].latency_us, links[0].bytes_per_us};
  t.inter_slice = t.inter_node;
  return t;
}

std::vector<ProcessRow> gather_rows(ProcessGroup& group, const Discovery& discovery, int ordinal, std::int32_t rank,
                                    const DistributedOptions& opt) {
  std::string mine = std::to_string(rank) + "\t" + std::to_string(ordinal) + "\t" +
                     std::to_string(opt.discoveries ? opt.discoveries() : -1) + "\t" +
                     std::to_string(opt.opens ? opt.opens() : -1) + "\t";
  for (const DeviceInfo& d : discovery.devices)
    if (d.ordinal == ordinal) mine += d.name;
  const std::vector<Bytes> all = group.all_gather(Bytes(mine.begin(), mine.end()), opt.timeout_s);
  std::vector<ProcessRow> rows;
  for (std::size_t p = 0; p < all.size(); ++p) {
    const std::string text(all[p].begin(), all[p].end());
    std::vector<std::string> f;
    std::size_t at = 0;
    for (int i = 0; i < 4; ++i) {
      const std::size_t tab = text.find('\t', at);
      if (tab == std::string::npos)
        throw GroupError("process " + std::to_string(p) + " sent a row that does not parse");
      f.push_back(text.substr(at, tab - at));
      at = tab + 1;
    }
    ProcessRow row;
    row.process = static_cast<int>(p);
    row.place = group.places().at(p);
    row.rank = std::stoi(f[0]);
    row.ordinal = std::stoi(f[1]);
    row.discoveries = std::stoi(f[2]);
    row.opens = std::stoi(f[3]);
    row.device = text.substr(at);
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

BenchmarkReport run_distributed(DeviceRuntime& runtime, ProcessGroup& group, std::vector<RunRequest> requests,
                                const DistributedOptions& dopt, const MeasureOptions& mopt) {
  const double began = dopt.started_at_s > 0 ? dopt.started_at_s : steady_seconds();
  const int me = group.rank();
  BenchmarkReport report;
  report.launcher = group.implementation();
  report.discovery = agree_on_discovery(group, runtime.discover(), dopt.timeout_s);
  if (report.discovery.status != Discovery::Status::Ok) return report;

  // The local rank picks the GPU, as every multi-GPU launcher convention has it.
  const std::size_t visible = report.discovery.devices.size();
  const int device_index = group.places().at(me).local_rank % static_cast<int>(visible);
  const int ordinal = report.discovery.devices[device_index].ordinal;
  report.ordinals = {ordinal};
  Bytes comm_id;
  if (me == 0) comm_id = runtime.new_comm_id();
  group.broadcast(comm_id, 0, dopt.timeout_s);
  GroupMembership member{&group, device_index, comm_id, dopt.timeout_s};
  std::unique_ptr<Device> device = runtime.open_member(report.discovery, member);

  report.links = links_to_measure(group.places());
  measure_links(*device, group, report.links, dopt);
  // Process 0 is in every pair, so its figures are the table.
  report.startup_s = group.all_max(steady_seconds() - began, dopt.timeout_s);

  GroupSync sync(group, dopt.timeout_s, dopt.barrier_each_iteration);
  MeasureOptions measure_opt = mopt;
  measure_opt.sync = &sync;
  std::int32_t my_rank = -1;
  for (RunRequest& req : requests) {
    const auto ranks = static_cast<std::uint32_t>(req.schedule.rank_count());
    const std::vector<std::int32_t> process_of_rank = place_ranks(ranks, group.size(), dopt.rank_map);
    for (std::uint32_t r = 0; r < ranks; ++r)
      if (process_of_rank[r] == me) my_rank = static_cast<std::int32_t>(r);
    req.plan.device_of_rank.assign(ranks, 0);
    RunPlan global = build_run_plan(req.schedule, req.stage_to_rank, req.plan);
    if (std::string problem = check_host_order(global); !problem.empty())
      throw PlanError("the launch order of '" + req.name + "' is unsafe: " + problem);
    RunPlan local = localize_plan(global, me, process_of_rank, device_index);
    device->setup(local.device);
    Measurement mine = measure(*device, local, measure_opt);
    const std::vector<Bytes> shares = group.all_gather(pack_measurement(local, mine), dopt.timeout_s);
    if (me != 0) {
      if (mine.stop == StopReason::Interrupted) report.interrupted = true;
      if (report.interrupted) break;
      continue;
    }
    // Process 0 reports the whole plan; each process is a "device" of it.
    for (std::uint32_t r = 0; r < ranks; ++r) global.device.device_of_rank[r] = process_of_rank[r];
    RunResult res;
    res.name = req.name;
    res.measured = merge_measurements(global, mine, shares);
    if (std::string race = check_measured_order(global, res.measured, 1.0); !race.empty())
      throw PlanError("'" + req.name + "' raced on the device: " + race);
    res.plan = std::move(global);
    const Topology measured = topology_of(group.places(), process_of_rank, report.links);
    TimedOptions sim = req.sim;
    if (dopt.predict_with_measured_links && !sim.comm.topology) sim.comm.topology = measured;
    predict(req, std::move(sim), static_cast<std::size_t>(group.size()), res);
    if (!report.measured_topology) report.measured_topology = measured;
    res.microbatches = stated_microbatches(req.schedule);
    res.schedule = std::move(req.schedule);
    if (res.measured.stop == StopReason::Interrupted) report.interrupted = true;
    report.results.push_back(std::move(res));
    if (report.interrupted) break;
  }
  std::vector<ProcessRow> rows = gather_rows(group, report.discovery, ordinal, my_rank, dopt);
  if (me == 0) report.processes = std::move(rows);
  return report;
}

}  // namespace ppsched::run
