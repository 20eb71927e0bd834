// Subcommands whose work is still to come. They are registered now so the command set is
// stable and `--help` lists it; running one says what is missing and exits 2.
#include <CLI/CLI.hpp>

#include "cli_support.hpp"
#include "commands.hpp"
#include "exit_codes.hpp"

namespace ppsched::cli {

void add_pending_commands(CLI::App& app, std::vector<Command>& commands) {
  struct Pending {
    const char* name;
    const char* summary;
  };
  static constexpr Pending kPending[] = {
      {"run", "Execute a schedule on GPUs and measure it"},
  };
  for (const Pending& p : kPending) {
    CLI::App* sub = app.add_subcommand(p.name, std::string(p.summary) + " (not implemented yet)");
    sub->allow_extras();
    std::string name = p.name;
    commands.push_back({sub, [name] {
                          print_error("'ppsched " + name + "' is not implemented in this version");
                          return kExitUsage;
                        }});
  }
}

}  // namespace ppsched::cli
