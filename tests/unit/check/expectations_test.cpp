// resolve_context and parse_placement (check/expectations.cpp): what validate checks a file
// against, what it infers when a flag is missing, and the notes that say so.
#include "check/expectations.hpp"

#include <stdexcept>

#include "ir/user_error.hpp"
#include "parse/pytorch_csv.hpp"
#include "support/catch.hpp"

using namespace ppsched;

namespace {

// 2 ranks, stages 0..3 in V (rank 0 holds 0 and 3), 2 microbatches; a CSV states none of it.
constexpr const char* kZbvLike =
    "0F0,0F1,3F0,3B0,3F1,3B1,0B0,0B1\n"
    "1F0,1F1,2F0,2B0,2F1,2B1,1B0,1B1\n";

ParsedSchedule parse(const char* text) {
  DiagnosticSink sink;
  auto parsed = read_pytorch_csv_text("s.csv", text, CsvReadOptions{}, sink);
  REQUIRE(parsed);
  return std::move(*parsed);
}

std::vector<std::string> notes(const ResolvedContext& r) {
  std::vector<std::string> out;
  for (const Inference& i : r.inferred) out.push_back(i.what);
  return out;
}

}  // namespace

TEST_CASE("resolve_context: what no flag gives is read off the file, and each guess is noted with its flags") {
  const ParsedSchedule p = parse(kZbvLike);
  const ResolvedContext r = resolve_context(p.schedule, &p.source, "s.csv", Expectations{});
  const CheckContext& ctx = r.context;
  CHECK(ctx.schedule == &p.schedule);
  CHECK(ctx.source == &p.source);
  CHECK(ctx.file == "s.csv");
  CHECK(ctx.ranks == 2);
  CHECK(ctx.stages == 4);
  CHECK(ctx.microbatches == 2);
  CHECK(ctx.stage_to_rank == std::vector<std::uint32_t>{0, 1, 1, 0});  // the first rank that runs each
  CHECK(ctx.placement_inferred);
  CHECK_FALSE(ctx.has_comms);
  CHECK(notes(r) == std::vector<std::string>{"2 ranks (the row count)", "4 stages (the highest stage used)",
                                             "2 microbatches (the highest used)",
                                             "each stage on the first rank that runs it (PyTorch's inference)"});
  REQUIRE(r.inferred.size() == 4);
  CHECK(r.inferred[0].flags == std::vector<std::string_view>{"--ranks"});
  CHECK(r.inferred[1].flags == std::vector<std::string_view>{"--stages-per-rank"});
  CHECK(r.inferred[2].flags == std::vector<std::string_view>{"--microbatches"});
  CHECK(r.inferred[3].flags == std::vector<std::string_view>{"--placement", "--schedule"});
}

TEST_CASE("resolve_context: what the caller states wins, and nothing is noted") {
  const ParsedSchedule p = parse(kZbvLike);
  Expectations want;
  want.ranks = 2;
  want.stages_per_rank = 3;
  want.microbatches = 5;
  want.style = PlacementStyle::Loop;
  want.expect_compute_only = true;
  const ResolvedContext r = resolve_context(p.schedule, &p.source, "s.csv", want);
  CHECK(r.inferred.empty());
  CHECK(r.context.stages == 6);
  CHECK(r.context.microbatches == 5);
  CHECK(r.context.stage_to_rank == std::vector<std::uint32_t>{0, 1, 0, 1, 0, 1});
  CHECK_FALSE(r.context.placement_inferred);
  CHECK(r.context.expect_compute_only);

  want.style = PlacementStyle::V;
  CHECK(resolve_context(p.schedule, &p.source, "s.csv", want).context.stage_to_rank ==
        std::vector<std::uint32_t>{0, 1, 1, 0, 0, 1});
  // An explicit list wins over the style; a short one is padded with rank 0 up to the stages.
  want.stage_to_rank = {1, 0};
  CHECK(resolve_context(p.schedule, &p.source, "s.csv", want).context.stage_to_rank ==
        std::vector<std::uint32_t>{1, 0, 0, 0, 0, 0});
}

TEST_CASE("resolve_context: a v placement needs the stages to be a multiple of the ranks") {
  const ParsedSchedule p = parse(kZbvLike);
  Expectations want;
  want.ranks = 3;  // 4 stages (inferred) on 3 ranks
  want.style = PlacementStyle::V;
  CHECK_THROWS_WITH(resolve_context(p.schedule, &p.source, "s.csv", want),
                    "a v placement needs stages (4) to be a multiple of ranks (3)");
}

TEST_CASE("resolve_context: a source map without rows is no source map") {
  const ParsedSchedule p = parse(kZbvLike);
  const SourceMap empty;
  CHECK(resolve_context(p.schedule, &empty, "s.csv", {}).context.source == nullptr);
  CHECK(resolve_context(p.schedule, nullptr, "s.csv", {}).context.source == nullptr);
}

TEST_CASE("parse_placement: loop, v, a list of ranks, and the errors") {
  Expectations want;
  parse_placement("", want);
  CHECK(want.style == PlacementStyle::Unspecified);
  CHECK(want.stage_to_rank.empty());
  parse_placement("loop", want);
  CHECK(want.style == PlacementStyle::Loop);
  parse_placement("v", want);
  CHECK(want.style == PlacementStyle::V);
  Expectations list;
  parse_placement("0,1,1,0", list);
  CHECK(list.stage_to_rank == std::vector<std::uint32_t>{0, 1, 1, 0});
  CHECK(list.style == PlacementStyle::Unspecified);

  const std::pair<const char*, const char*> errors[] = {
      {"0,x", "--placement: 'x' is not a rank (give loop, v, or a list like 0,1,1,0)"},
      {",", "--placement: '' is not a rank (give loop, v, or a list like 0,1,1,0)"},
      {"V", "--placement: 'V' is not a rank (give loop, v, or a list like 0,1,1,0)"},
      {"99999999999999999999",
       "--placement: '99999999999999999999' is not a rank (give loop, v, or a list like 0,1,1,0)"},
  };
  for (const auto& [text, message] : errors) {
    INFO(text);
    Expectations bad;
    CHECK_THROWS_WITH(parse_placement(text, bad), message);
    CHECK_THROWS_AS(parse_placement(text, bad), UserError);
  }
}
