#include "run_processes.hpp"

#include <fmt/format.h>

#include <unistd.h>
#include <csignal>
#include <cstdio>

#include "cli_support.hpp"
#include "exit_codes.hpp"
#include "io/output_file.hpp"
#include "ir/user_error.hpp"
#include "run/distributed.hpp"
#include "run/mpi_loader.hpp"

namespace ppsched::cli {

namespace {

// What a process other than 0 writes to stderr while it prepares the run, held back: when every
// process reads the same bad input, process 0 alone says so; a process that fails where process
// 0 did not prints what it held.
class HeldStderr {
 public:
  HeldStderr() {
    std::fflush(stderr);
    file_ = std::tmpfile();
    saved_ = ::dup(STDERR_FILENO);
    if (file_ && saved_ >= 0) ::dup2(::fileno(file_), STDERR_FILENO);
  }
  ~HeldStderr() { release(false); }
  HeldStderr(const HeldStderr&) = delete;
  HeldStderr& operator=(const HeldStderr&) = delete;
  /// Restores stderr; prints what was held when `show`.
  void release(bool show) {
    if (saved_ < 0) return;
    std::fflush(stderr);
    ::dup2(saved_, STDERR_FILENO);
    ::close(saved_);
    saved_ = -1;
    if (show && file_) {
      std::rewind(file_);
      char buf[4096];
      for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, file_)) > 0;) std::fwrite(buf, 1, n, stderr);
    }
    if (file_) std::fclose(file_);
    file_ = nullptr;
  }

 private:
  std::FILE* file_ = nullptr;
  int saved_ = -1;
};

// One process of a multi-process run (run/distributed.hpp): every process reads and checks the
// same inputs, agrees with the others to start, runs its rank; process 0 writes the outputs.
int run_multi_process(RunOptions opt, run::ProcessGroup& group, double started_at_s) {
  const int me = group.rank();
  const double timeout_s = opt.measure.rule.timeout_s;
  std::vector<run::RunRequest> requests;
  auto held = me != 0 ? std::make_unique<HeldStderr>() : nullptr;
  int code = load_requests(opt, requests);
  run::DistributedOptions dopt;
  dopt.rank_map = opt.rank_map;
  dopt.started_at_s = started_at_s;
  dopt.timeout_s = timeout_s;
  dopt.barrier_each_iteration = opt.backend == "cuda";
  dopt.predict_with_measured_links = opt.backend == "cuda";
  if (code == kExitOk)
    for (const run::RunRequest& r : requests) try {
        run::place_ranks(static_cast<std::uint32_t>(r.schedule.rank_count()), group.size(), opt.rank_map);
      } catch (const UserError& e) {
        print_error(e.what());
        code = kExitUsage;
        break;
      }
  const std::uint64_t fingerprint = run::run_fingerprint(
      std::string(PPSCHED_VERSION) + " " + run::executable_digest() + " " + opt.backend, requests, opt.measure, dopt);
  run::StartVerdict verdict;
  try {
    verdict = run::agree_to_start(group, code, fingerprint, timeout_s);
  } catch (const run::GroupError& e) {
    if (held) held->release(true);
    print_error(fmt::format("process {}: {}", me, e.what()));
    group.abort(kExitFindings);
  }
  if (held) held->release(code != kExitOk && verdict.first_ready);
  if (verdict.exit_code != 0) {
    if (me == 0 && code == kExitOk) print_error(verdict.why);
    return verdict.exit_code;
  }

  std::unique_ptr<run::DeviceRuntime> backend = make_device_runtime(opt);
  run::CountingRuntime runtime(*backend);
  dopt.discoveries = [&] { return runtime.discoveries(); };
  dopt.opens = [&] { return runtime.opens(); };
  run::MeasureOptions measure = opt.measure;
  stop_at_iteration_boundary_on_interrupt(measure);
  run::BenchmarkReport rep;
  try {
    rep = run::run_distributed(runtime, group, std::move(requests), dopt, measure);
    if (rep.interrupted) {
      // Every process stopped at the same iteration (GroupSync::agree); which one was signalled,
      // and with what, so that every process exits 143 or 130 and process 0 names it.
      const double who = group.all_max(double(interrupt_signal()) * 65536 + me, timeout_s);
      const int sig = static_cast<int>(who / 65536), from = static_cast<int>(who) % 65536;
      if (sig > 0) adopt_interrupt_signal(sig);
      if (me == 0 && sig > 0)
        print_note(fmt::format("process {} got {}: every process stopped at the same iteration", from,
                               sig == SIGTERM  ? "SIGTERM"
                               : sig == SIGINT ? "SIGINT"
                                               : "a signal"));
    }
  } catch (const std::exception& e) {
    // Any failure here ends the whole job: the others would wait for this process forever.
    const run::ProcessPlace& place = group.places().at(me);
    print_error(fmt::format("process {} on {}: {}; ending the run", me, place.host, e.what()));
    group.abort(kExitFindings);
  }
  install_output_signal_handlers();
  if (rep.discovery.status != run::Discovery::Status::Ok) {
    if (me == 0) print_error(no_gpu_text(rep.discovery));
    return kExitNoGpu;
  }
  if (me != 0) return rep.interrupted ? interrupted_exit_code() : kExitOk;
  return write_run_outputs(opt, rep);
}

}  // namespace

int run_launched_process(RunOptions opt) {
  const double started_at_s = run::steady_seconds();
  std::unique_ptr<run::ProcessGroup> group;
  try {
    group = run::join_launched_group();
  } catch (const run::GroupError& e) {
    print_error(std::string("a launcher started this process as one of several, but it cannot join them: ") + e.what());
    return kExitUsage;
  }
  return run_multi_process(std::move(opt), *group, started_at_s);
}

}  // namespace ppsched::cli
