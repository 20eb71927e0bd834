// ppsched: the driver. Parses the command line, runs one subcommand, and maps every failure
// to a documented exit code. All real work is in lib/.
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <exception>
#include <new>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "cli_support.hpp"
#include "commands.hpp"
#include "diag/suggest.hpp"
#include "exit_codes.hpp"
#include "io/byte_sink.hpp"
#include "io/log_text.hpp"
#include "io/output_file.hpp"
#include "ir/user_error.hpp"

namespace {

// The first option of `argv[2..]` that subcommand `sub` does not have, as an error message with
// the closest option it has; empty when every option is known. Stops at "--"; a lone "-"
// (stdin) and negative numbers are values, not options.
std::string unknown_option(const CLI::App& sub, int argc, char** argv) {
  std::vector<std::string> longs{"--help"}, shorts{"-h"};
  for (const CLI::Option* o : sub.get_options()) {
    for (const std::string& l : o->get_lnames()) longs.push_back("--" + l);
    for (const std::string& s : o->get_snames()) shorts.push_back("-" + s);
  }
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") break;
    const bool is_long = arg.size() > 2 && arg.substr(0, 2) == "--";
    const bool is_short = !is_long && arg.size() >= 2 && arg[0] == '-' &&
                          ((arg[1] >= 'a' && arg[1] <= 'z') || (arg[1] >= 'A' && arg[1] <= 'Z'));
    if (!is_long && !is_short) continue;
    const std::string_view name = is_long ? arg.substr(0, arg.find('=')) : arg.substr(0, 2);
    const auto& known = is_long ? longs : shorts;
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    std::vector<std::string_view> candidates(longs.begin(), longs.end());
    std::string msg = sub.get_name() + ": unknown option '" + std::string(name) + "'";
    if (auto near = ppsched::closest_match(name, candidates)) msg += "; did you mean '" + *near + "'?";
    return msg + " (see ppsched " + sub.get_name() + " --help)";
  }
  return {};
}

// Out of memory, said once and without allocating (what was being done is in a fixed buffer): the
// request, not ppsched, is at fault, so the exit is its own (4), not an internal error's.
int out_of_memory(const char* command, const char* what) {
  const char* step = ppsched::cli::doing();
  std::fprintf(stderr,
               "ppsched: error: %s while %s (ppsched %s): the request needs more memory than this process may have "
               "(ulimit -v, a cgroup, the machine); narrow it (fewer ranks, microbatches or trials) or give it more\n",
               what, step[0] ? step : "running", command);
  return ppsched::cli::kExitOutOfMemory;
}

int run(int argc, char** argv) {
  using namespace ppsched::cli;
  // A closed stdout pipe must surface as EPIPE (ended quietly), not kill the process.
  std::signal(SIGPIPE, SIG_IGN);
  ppsched::install_output_signal_handlers();

  CLI::App app{"ppsched: compile, validate and simulate pipeline-parallel training schedules", "ppsched"};
  app.set_version_flag("--version", std::string("ppsched ") + PPSCHED_VERSION);
  app.require_subcommand(1);
  app.footer(
      "Exit codes: 0 ok, 1 findings, 2 usage or input error, 3 internal error, "
      "4 out of memory, 77 no GPU, 130 interrupted.\nSee docs/manual.md for the full manual.");

  std::vector<Command> commands;
  add_compile_command(app, commands);
  add_list_command(app, commands);
  add_simulate_command(app, commands);
  add_validate_command(app, commands);
  add_tune_command(app, commands);
  add_run_command(app, commands);
  add_trace_command(app, commands);

  // Every option's default in --help, unless its description says it already; flags, empty
  // strings and the 0 of an option that must be given have none worth showing.
  for (const auto& c : commands)
    for (CLI::Option* o : c.app->get_options()) {
      if (o->get_type_size() == 0 || o->get_description().find("default") != std::string::npos) continue;
      o->capture_default_str();
      if (o->get_default_str() == "0") o->default_str("");  // 0 stands for "not given" (--ranks, --microbatches)
    }

  // CLI11 answers an unknown command with "A subcommand is required"; name it and suggest.
  if (argc > 1 && argv[1][0] != '-') {
    std::vector<std::string_view> names;
    names.reserve(commands.size());
    for (const auto& c : commands) names.push_back(c.app->get_name());
    std::string_view word = argv[1];
    if (std::find(names.begin(), names.end(), word) == names.end()) {
      std::string msg = "unknown command '" + std::string(word) + "'";
      if (auto near = ppsched::closest_match(word, names)) msg += "; did you mean '" + *near + "'?";
      print_error(msg + " (see ppsched --help)");
      return kExitUsage;
    }
  }
  // A mistyped option would otherwise reach CLI11 as a positional argument and come out as
  // "FILE excludes --schedule" or "not expected"; name it, and the option it was likely meant as.
  if (argc > 1) {
    for (const auto& c : commands)
      if (c.app->get_name() == argv[1]) {
        if (std::string problem = unknown_option(*c.app, argc, argv); !problem.empty()) {
          print_error(problem);
          if (c.on_parse_error) c.on_parse_error(argc, argv, problem);
          return kExitUsage;
        }
      }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 quotes the arguments it rejects: its messages go out through the log guard too.
    std::ostringstream out, err;
    int rc = app.exit(e, out, err);
    print_stdout(out.str());
    const std::string err_text = ppsched::guarded(err.str());
    std::fwrite(err_text.data(), 1, err_text.size(), stderr);
    if (rc != 0)
      for (const auto& c : commands)
        if (c.on_parse_error && argc > 1 && c.app->get_name() == argv[1]) c.on_parse_error(argc, argv, e.what());
    return rc == 0 ? kExitOk : kExitUsage;
  }
  const Command* chosen = nullptr;
  for (const auto& c : commands)
    if (c.app->parsed()) chosen = &c;
  if (!chosen) return kExitUsage;
  try {
    set_doing("starting");
    return chosen->run();
  } catch (const ppsched::BrokenPipe&) {
    return kExitOk;  // the reader has all it wanted (`ppsched ... | head`)
  } catch (const ppsched::IoError& e) {
    print_error(e.what());
    return kExitUsage;
  } catch (const ppsched::UserError& e) {  // one a command did not report itself
    print_error(e.what());
    return kExitUsage;
  } catch (const std::bad_alloc&) {
    return out_of_memory(chosen->app->get_name().c_str(), "out of memory");
  } catch (const std::length_error&) {  // a container asked for more than max_size(): the same cause
    return out_of_memory(chosen->app->get_name().c_str(), "a request too large for memory");
  } catch (const std::exception& e) {
    print_error(std::string("internal error: ") + e.what());
    return kExitInternal;
  }
}

}  // namespace

// Setting up the command line can throw too (out of memory): nothing escapes main.
int main(int argc, char** argv) {
#ifdef __GLIBC__
  // Every large block (a rank's program, a chunk of output) gets a mapping of its own that goes back
  // to the system when freed. glibc's default raises this threshold after the first large free; then
  // such blocks come from per-thread arenas, and what the reader's second thread allocated and the
  // dry run freed could not be reused by the main thread: 26 MB more at the dry run's peak on a
  // 6M-action schedule (issue 48).
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
  try {
    return run(argc, argv);
  } catch (...) {
    std::fputs("ppsched: error: internal error while starting\n", stderr);
    return ppsched::cli::kExitInternal;
  }
}
