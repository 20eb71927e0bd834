// `ppsched list`: the schedule families ppsched can synthesize; with --ranks and
// --microbatches, each family's peak memory computed for that configuration.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <memory>

#include "cli_support.hpp"
#include "commands.hpp"
#include "exit_codes.hpp"
#include "report/family_table.hpp"
#include "schedule_source.hpp"
#include "synth/synth.hpp"

namespace ppsched::cli {

namespace {
struct ListOptions {
  std::string format = "text";
  std::uint32_t ranks = 0, microbatches = 0, stages_per_rank = 0;
  double max_schedule_gib = 4;
};

// The table builds every family's schedule, one at a time: the largest of them, estimated as
// compile estimates one, must fit the budget (each family at the stages per rank it runs at).
bool within_list_budget(const ListOptions& opt) {
  std::uint32_t v = 1;
  for (const Family& f : families())
    v = std::max(v, f.fixed_stages_per_rank || !opt.stages_per_rank ? f.default_stages_per_rank : opt.stages_per_rank);
  return within_size_budget(opt.ranks, v, opt.microbatches, false, opt.max_schedule_gib, "--max-schedule-gib");
}
}  // namespace

void add_list_command(CLI::App& app, std::vector<Command>& commands) {
  auto opt = std::make_shared<ListOptions>();
  CLI::App* sub = app.add_subcommand("list", "List the schedule families ppsched can synthesize");
  sub->add_option("--format", opt->format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->option_text("text|json");
  auto* ranks = sub->add_option("--ranks", opt->ranks,
                                "With --microbatches: compute each family's peak memory for this configuration")
                    ->check(CLI::Range(1u, 65535u));
  auto* mbs = sub->add_option("--microbatches", opt->microbatches, "Microbatches per iteration")
                  ->check(CLI::Range(1u, 1u << 24));
  sub->add_option("--stages-per-rank", opt->stages_per_rank, "Stages per rank for the families that take any")
      ->check(CLI::Range(1u, 64u));
  sub->add_option("--max-schedule-gib", opt->max_schedule_gib,
                  "With --ranks: refuse a configuration whose largest schedule would hold more than this many GiB "
                  "(default 4)")
      ->check(finite_positive());
  ranks->needs(mbs);
  mbs->needs(ranks);
  sub->footer("Example:\n  ppsched list --ranks 8 --microbatches 16");
  commands.push_back({sub, [opt] {
                        std::optional<ListConfig> config;
                        if (opt->ranks) {
                          if (!within_list_budget(*opt)) return kExitUsage;
                          set_doing("building every family's schedule for --ranks and --microbatches");
                          config = ListConfig{opt->ranks, opt->microbatches, opt->stages_per_rank};
                        }
                        const std::string table =
                            opt->format == "json" ? family_table_json(config) : family_table_text(config);
                        write_output("-", [&](ByteSink& out) { out.write(table); });
                        return kExitOk;
                      }});
}

}  // namespace ppsched::cli
