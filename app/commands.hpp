// Registration of subcommands. Each cmd_*.cpp binds its flags to an options struct and sets
// `run`, which main calls when that subcommand was given.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace ppsched::cli {

struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
  /// Called, when set, after the command's words could not be parsed (CLI11 has said why, in
  /// `message`): for a command whose output document must exist whatever went wrong.
  std::function<void(int argc, char** argv, const std::string& message)> on_parse_error = nullptr;
};

void add_compile_command(CLI::App& app, std::vector<Command>& commands);
void add_list_command(CLI::App& app, std::vector<Command>& commands);
void add_simulate_command(CLI::App& app, std::vector<Command>& commands);
void add_validate_command(CLI::App& app, std::vector<Command>& commands);
void add_tune_command(CLI::App& app, std::vector<Command>& commands);
void add_run_command(CLI::App& app, std::vector<Command>& commands);
void add_trace_command(CLI::App& app, std::vector<Command>& commands);

}  // namespace ppsched::cli
