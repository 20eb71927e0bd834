// Registration of subcommands. Each cmd_*.cpp binds its flags to an options struct and sets
// `run`, which main calls when that subcommand was given.
#pragma once

#include <functional>
#include <vector>

namespace CLI {
class App;
}

namespace ppsched::cli {

struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

void add_compile_command(CLI::App& app, std::vector<Command>& commands);
void add_list_command(CLI::App& app, std::vector<Command>& commands);
void add_simulate_command(CLI::App& app, std::vector<Command>& commands);
void add_validate_command(CLI::App& app, std::vector<Command>& commands);
void add_tune_command(CLI::App& app, std::vector<Command>& commands);
void add_run_command(CLI::App& app, std::vector<Command>& commands);

}  // namespace ppsched::cli
