// Before any device work, the processes of a run agree that they are about to run the same thing
// (the same schedules and options, the same ppsched) and that each could prepare it. Launching
// different programs by mistake (`mpirun -np 2 ppsched run A : -np 2 ppsched run B`) or one
// process failing to read its input must stop every process at once, not hang them.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "ir/action_text.hpp"
#include "run/distributed.hpp"

namespace ppsched::run {

namespace {

// FNV-1a, 64 bits: enough to tell two different runs apart; nothing here is adversarial.
class Digest {
 public:
  void add(std::string_view s) {
    for (unsigned char c : s) h_ = (h_ ^ c) * 0x100000001B3ull;
    h_ = (h_ ^ 0xFF) * 0x100000001B3ull;  // a separator, so "ab","c" differs from "a","bc"
  }
  template <typename T>
  void add_value(const T& v) {
    add(fmt::format("{}", v));
  }
  std::uint64_t value() const { return h_; }

 private:
  std::uint64_t h_ = 0xCBF29CE484222325ull;
};

void add_costs(Digest& d, const CostModel& c) {
  d.add_value(c.overlap_factor);
  for (const KindCosts& k : c.per_stage) d.add(fmt::format("{}", fmt::join(k, ",")));
}

void add_comm(Digest& d, const CommModel& c) {
  if (c.topology) {
    d.add(fmt::format("{}", fmt::join(c.topology->node_of_rank, ",")));
    d.add(fmt::format("{}", fmt::join(c.topology->slice_of_rank, ",")));
    for (const Link& l : {c.topology->intra_node, c.topology->inter_node, c.topology->inter_slice})
      d.add(fmt::format("{},{}", l.latency_us, l.bytes_per_us));
  }
  for (const StageSpec& s : c.stages) d.add(fmt::format("{},{}", s.activation_bytes, s.gradient_bytes));
}

}  // namespace

std::uint64_t run_fingerprint(const std::string& version, const std::vector<RunRequest>& requests,
                              const MeasureOptions& measure, const DistributedOptions& dopt) {
  Digest d;
  d.add(version);
  for (const RunRequest& r : requests) {
    d.add(r.name);
    for (const RankProgram& prog : r.schedule.ranks) {
      std::string line;
      for (const Action& a : prog.actions) line += action_text(a, r.schedule.sub_actions) + ",";
      d.add(line);
    }
    d.add(fmt::format("{}", fmt::join(r.stage_to_rank, ",")));
    const PlanOptions& p = r.plan;
    d.add(fmt::format("{} {} {} {} {} {} {}", static_cast<int>(p.workload), p.shape.layers, p.shape.hidden,
                      p.shape.tokens, p.shape.element_bytes, p.blocking_comms, p.activation_bytes));
    add_costs(d, p.costs);
    add_comm(d, p.comm);
    add_costs(d, r.sim.costs);
    add_comm(d, r.sim.comm);
    d.add_value(r.predict_from_measurement);
  }
  const StopRule& s = measure.rule;
  d.add(fmt::format("{} {} {} {} {} {}", measure.warmup, s.min_samples, s.min_time_s, s.max_noise_pct, s.timeout_s,
                    s.max_iters));
  d.add(fmt::format("{} {} {}", fmt::join(dopt.rank_map, ","), dopt.timeout_s, dopt.barrier_each_iteration));
  return d.value();
}

std::string executable_digest() {
  std::FILE* f = std::fopen("/proc/self/exe", "rb");
  if (!f) return "unknown";
  Digest d;
  std::string chunk(1 << 16, '\0');
  for (std::size_t n; (n = std::fread(chunk.data(), 1, chunk.size(), f)) > 0;) d.add(std::string_view(chunk.data(), n));
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  return failed ? "unknown" : fmt::format("{:016x}", d.value());
}

StartVerdict agree_to_start(ProcessGroup& group, int my_code, std::uint64_t fingerprint, double timeout_s) {
  std::uint8_t mine[12];
  const auto code = static_cast<std::int32_t>(my_code);
  std::memcpy(mine, &code, 4);
  std::memcpy(mine + 4, &fingerprint, 8);
  const std::vector<Bytes> all = group.all_gather(mine, timeout_s);
  StartVerdict v;
  std::vector<int> failed, differ;
  std::uint64_t first_print = 0;
  for (std::size_t p = 0; p < all.size(); ++p) {
    if (all[p].size() != sizeof mine)
      throw GroupError("process " + std::to_string(p) + " sent a start check that does not parse");
    std::int32_t c;
    std::uint64_t f;
    std::memcpy(&c, all[p].data(), 4);
    std::memcpy(&f, all[p].data() + 4, 8);
    if (p == 0) first_print = f;
    if (c != 0) {
      if (p == 0) v.first_ready = false;
      if (v.exit_code == 0) v.exit_code = c;
      failed.push_back(static_cast<int>(p));
    } else if (f != first_print) {
      differ.push_back(static_cast<int>(p));
    }
  }
  if (!failed.empty()) {
    v.why = fmt::format("process{} {} could not prepare the run (see {} messages)", failed.size() == 1 ? "" : "es",
                        fmt::join(failed, ", "), failed.size() == 1 ? "its" : "their");
    return v;
  }
  if (!differ.empty()) {
    v.exit_code = 2;
    v.why = fmt::format(
        "process{} {} run{} other schedules, options or another ppsched than process 0 (the "
        "launcher started different commands, or their input files differ between nodes)",
        differ.size() == 1 ? "" : "es", fmt::join(differ, ", "), differ.size() == 1 ? "s" : "");
  }
  return v;
}

}  // namespace ppsched::run
