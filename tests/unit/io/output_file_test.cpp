#include "io/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>

#include "support/catch.hpp"

using namespace ppsched;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "ppsched-test-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~TempDir() { fs::remove_all(path); }
  std::size_t entries() const {
    return static_cast<std::size_t>(std::distance(fs::directory_iterator(path), fs::directory_iterator()));
  }
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void spit(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

}  // namespace

TEST_CASE("a committed output replaces the file and leaves no temporary behind") {
  TempDir dir;
  fs::path target = dir.path / "out.csv";
  spit(target, "old");
  ::chmod(target.c_str(), 0640);
  {
    OutputFile out(target.string());
    CHECK(out.atomic());
    out.write("new ");
    out.write(std::string(3 << 20, 'x'));  // larger than the buffer
    CHECK(slurp(target) == "old");         // nothing visible before commit
    out.commit();
  }
  CHECK(slurp(target).size() == 4 + (3u << 20));
  CHECK(dir.entries() == 1);
  struct stat st {};
  ::stat(target.c_str(), &st);
  CHECK((st.st_mode & 0777) == 0640);  // the replaced file keeps its mode
}

TEST_CASE("an output abandoned before commit leaves the old file untouched") {
  TempDir dir;
  fs::path target = dir.path / "out.csv";
  spit(target, "precious");
  {
    OutputFile out(target.string());
    out.write("half-written");
  }  // e.g. an exception unwound past it
  CHECK(slurp(target) == "precious");
  CHECK(dir.entries() == 1);
}

TEST_CASE("a new file is created through a temporary too") {
  TempDir dir;
  fs::path target = dir.path / "fresh.json";
  OutputFile out(target.string());
  out.write("{}");
  out.commit();
  CHECK(slurp(target) == "{}");
}

TEST_CASE("a symlink to a regular file keeps the link and replaces its target") {
  TempDir dir;
  spit(dir.path / "real.csv", "old");
  fs::create_symlink("real.csv", dir.path / "link.csv");
  OutputFile out((dir.path / "link.csv").string());
  out.write("new");
  out.commit();
  CHECK(fs::is_symlink(dir.path / "link.csv"));
  CHECK(slurp(dir.path / "real.csv") == "new");
}

TEST_CASE("a FIFO is written in place, never renamed over") {
  TempDir dir;
  fs::path fifo = dir.path / "pipe";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  auto reader = std::async(std::launch::async, [&] { return slurp(fifo); });
  {
    OutputFile out(fifo.string());
    CHECK_FALSE(out.atomic());
    out.write("through the pipe");
    out.commit();
  }
  CHECK(reader.get() == "through the pipe");
  struct stat st {};
  REQUIRE(::lstat(fifo.c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));
}

TEST_CASE("an unwritable directory is an IoError naming the path") {
  CHECK_THROWS_WITH(OutputFile("/nonexistent-dir/x.csv"),
                    Catch::Matchers::StartsWith("/nonexistent-dir/x.csv: cannot create a temporary file"));
}

TEST_CASE("commit_together: a set of outputs is all new after it") {
  TempDir dir;
  spit(dir.path / "schedule.csv", "old csv");
  spit(dir.path / "torchtitan.toml", "old toml");
  OutputFile csv((dir.path / "schedule.csv").string()), toml((dir.path / "torchtitan.toml").string());
  csv.write("new csv");
  toml.write("new toml");
  commit_together({&csv, &toml});
  CHECK(slurp(dir.path / "schedule.csv") == "new csv");
  CHECK(slurp(dir.path / "torchtitan.toml") == "new toml");
  CHECK(dir.entries() == 2);  // no temporary and no kept old file left
}

TEST_CASE("commit_together: a failed rename puts back the files renamed before it (all old)") {
  TempDir dir;
  spit(dir.path / "schedule.csv", "old csv");
  spit(dir.path / "torchtitan.toml", "old toml");
  {
    OutputFile csv((dir.path / "schedule.csv").string()), toml((dir.path / "torchtitan.toml").string());
    csv.write("new csv");
    toml.write("new toml");
    // The second target becomes a directory that holds a file: neither kept nor replaced.
    fs::remove(dir.path / "torchtitan.toml");
    fs::create_directory(dir.path / "torchtitan.toml");
    spit(dir.path / "torchtitan.toml" / "x", "");
    CHECK_THROWS_AS(commit_together({&csv, &toml}), IoError);
  }
  CHECK(slurp(dir.path / "schedule.csv") == "old csv");  // the first went back
  CHECK(fs::is_directory(dir.path / "torchtitan.toml"));
  CHECK(dir.entries() == 2);  // the temporaries are gone with their OutputFiles
}

TEST_CASE("commit_together: a new file of a failed set is removed again") {
  TempDir dir;
  {
    OutputFile csv((dir.path / "schedule.csv").string()), toml((dir.path / "torchtitan.toml").string());
    csv.write("new csv");
    toml.write("new toml");
    fs::create_directory(dir.path / "torchtitan.toml");
    spit(dir.path / "torchtitan.toml" / "x", "");
    CHECK_THROWS_AS(commit_together({&csv, &toml}), IoError);
  }
  CHECK_FALSE(fs::exists(dir.path / "schedule.csv"));  // there was no old one: none now
  CHECK(dir.entries() == 1);
}
