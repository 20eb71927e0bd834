#include "report/shell_text.hpp"

#include <stdexcept>

#include "ir/user_error.hpp"
#include "support/catch.hpp"

using namespace ppsched;

TEST_CASE("shell_quote: plain words stay, anything sh would act on is single-quoted") {
  CHECK(shell_quote("--parallelism.pipeline_parallel_degree") == "--parallelism.pipeline_parallel_degree");
  CHECK(shell_quote("activation-checkpoint:full") == "activation-checkpoint:full");
  CHECK(shell_quote("Et*4|t*5") == "'Et*4|t*5'");
  CHECK(shell_quote("") == "''");
  CHECK(shell_quote("a b") == "'a b'");
  CHECK(shell_quote("$(rm -rf ~) `id` $HOME") == "'$(rm -rf ~) `id` $HOME'");
  CHECK(shell_quote("it's") == "'it'\\''s'");
  CHECK(shell_quote("a\\b\"c") == "'a\\b\"c'");
  CHECK(shell_quote("x\ny") == "'x\ny'");          // a newline inside quotes is part of the word
  CHECK(shell_quote("~/a") == "'~/a'");            // no tilde expansion
  CHECK(shell_quote("#x") == "'#x'");              // no comment
  CHECK(shell_quote("A=b") == "'A=b'");            // never an assignment
  CHECK(shell_quote("\xff\xe9") == "'\xff\xe9'");  // bytes kept as they are
}

TEST_CASE("shell_quote: a NUL byte, which no argument can hold, is refused") {
  CHECK_THROWS_AS(shell_quote(std::string_view("a\0b", 3)), UserError);
}

TEST_CASE("shell_command and shell_assignment: words joined, values quoted") {
  CHECK(shell_command({"./run_train.sh", "--x", "a b", ""}) == "./run_train.sh --x 'a b' ''");
  CHECK(shell_command({}).empty());
  CHECK(shell_assignment("NGPU", "64") == "NGPU=64");
  CHECK(shell_assignment("PYTHONPATH", "/my dir/$x") == "PYTHONPATH='/my dir/$x'");
  CHECK_THROWS_AS(shell_assignment("1X", "v"), std::invalid_argument);
  CHECK_THROWS_AS(shell_assignment("A B", "v"), std::invalid_argument);
}

TEST_CASE("shell_comment: one line, whatever the text holds") {
  CHECK(shell_comment("model: llama") == "# model: llama\n");
  CHECK(shell_comment("x\nrm -rf /\x1b") == "# x\\x0Arm -rf /\\x1B\n");
}
