#include "io/input_file.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "io/byte_sink.hpp"
#include "support/catch.hpp"

using namespace ppsched;
namespace fs = std::filesystem;

TEST_CASE("read_whole_input reads a file and enforces its size limit") {
  fs::path p = fs::temp_directory_path() / ("ppsched-input-" + std::to_string(::getpid()));
  std::ofstream(p, std::ios::binary) << std::string(100000, 'x');
  CHECK(read_whole_input(p.string()).size() == 100000);
  try {
    read_whole_input(p.string(), 1000);
    FAIL("no error for an input over the limit");
  } catch (const IoError& e) {
    CHECK(e.path() == p.string());
    CHECK(e.reason() == "input is larger than 1000 bytes");
  }
  fs::remove(p);
}

TEST_CASE("standard input is named <stdin> in messages") {
  CHECK(display_name("-") == "<stdin>");
  CHECK(display_name("a.csv") == "a.csv");
}

TEST_CASE("opening a missing file says why") {
  CHECK_THROWS_WITH(open_input("/nonexistent/in.csv"), "/nonexistent/in.csv: cannot open: No such file or directory");
}
