// ppsched: the driver. Parses the command line, runs one subcommand, and maps every failure
// to a documented exit code. All real work is in lib/.
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <string_view>
#include <exception>

#include <CLI/CLI.hpp>

#include "cli_support.hpp"
#include "commands.hpp"
#include "diag/suggest.hpp"
#include "exit_codes.hpp"
#include "io/byte_sink.hpp"
#include "io/output_file.hpp"

namespace {

int run(int argc, char** argv) {
  using namespace ppsched::cli;
  // A closed stdout pipe must surface as EPIPE (ended quietly), not kill the process.
  std::signal(SIGPIPE, SIG_IGN);
  ppsched::install_output_signal_handlers();

  CLI::App app{"ppsched: compile, validate and simulate pipeline-parallel training schedules",
               "ppsched"};
  app.set_version_flag("--version", std::string("ppsched ") + PPSCHED_VERSION);
  app.require_subcommand(1);
  app.footer("Exit codes: 0 ok, 1 findings, 2 usage or input error, 3 internal error, "
             "77 no GPU, 130 interrupted.\nSee docs/manual.md for the full manual.");

  std::vector<Command> commands;
  add_compile_command(app, commands);
  add_list_command(app, commands);
  add_simulate_command(app, commands);
  add_validate_command(app, commands);
  add_tune_command(app, commands);
  add_run_command(app, commands);

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
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitUsage;
  }
  try {
    for (auto& c : commands)
      if (c.app->parsed()) return c.run();
  } catch (const ppsched::BrokenPipe&) {
    return kExitOk;  // the reader has all it wanted (`ppsched ... | head`)
  } catch (const ppsched::IoError& e) {
    print_error(e.what());
    return kExitUsage;
  } catch (const std::bad_alloc&) {
    print_error("out of memory");
    return kExitInternal;
  } catch (const std::exception& e) {
    print_error(std::string("internal error: ") + e.what());
    return kExitInternal;
  }
  return kExitUsage;
}

}  // namespace

// Setting up the command line can throw too (out of memory): nothing escapes main.
int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (...) {
    std::fputs("ppsched: error: internal error while starting\n", stderr);
    return ppsched::cli::kExitInternal;
  }
}
