// ppsched: the driver. Parses the command line, runs one subcommand, and maps every failure
// to a documented exit code. All real work is in lib/.
#include <csignal>
#include <exception>

#include <CLI/CLI.hpp>

#include "cli_support.hpp"
#include "commands.hpp"
#include "exit_codes.hpp"
#include "io/byte_sink.hpp"

int main(int argc, char** argv) {
  using namespace ppsched::cli;
  // A closed stdout pipe must surface as EPIPE (ended quietly), not kill the process.
  std::signal(SIGPIPE, SIG_IGN);

  CLI::App app{"ppsched: compile, validate and simulate pipeline-parallel training schedules",
               "ppsched"};
  app.set_version_flag("--version", std::string("ppsched ") + PPSCHED_VERSION);
  app.require_subcommand(1);
  app.footer("Exit codes: 0 ok, 1 findings, 2 usage or input error, 3 internal error, "
             "77 no GPU, 130 interrupted.\nSee docs/manual.md for the full manual.");

  std::vector<Command> commands;
  add_compile_command(app, commands);
  add_pending_commands(app, commands);

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
