#include "support/corpus.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace ppsched::test {

std::filesystem::path corpus_dir() { return PPSCHED_CORPUS_DIR; }
std::filesystem::path source_dir() { return PPSCHED_SOURCE_DIR; }

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + p.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const nlohmann::json& manifest() {
  static const nlohmann::json m = nlohmann::json::parse(read_file(corpus_dir() / "manifest.json"));
  return m;
}

std::vector<std::filesystem::path> config_csv_files() {
  std::vector<std::filesystem::path> out;
  for (const auto& c : manifest()["configs"])
    for (const auto& [key, name] : c["files"].items())
      out.push_back(corpus_dir() / "configs" / name.get<std::string>());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::filesystem::path> upstream_csv_files() {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::directory_iterator(corpus_dir() / "upstream-artifacts"))
    if (e.path().extension() == ".csv") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<nlohmann::json> negative_cases() {
  std::vector<nlohmann::json> out;
  for (const auto& n : manifest()["negative"])
    if (n.contains("file") && n["file"].is_string()) out.push_back(n);
  return out;
}

CellSpan locate_cell(const std::string& csv, std::size_t row, std::size_t index) {
  std::size_t pos = 0;
  for (std::size_t r = 0; r < row; ++r) pos = csv.find('\n', pos) + 1;
  std::size_t eol = csv.find_first_of("\r\n", pos);
  std::string line = csv.substr(pos, eol - pos);
  std::size_t b = 0;
  for (std::size_t i = 0; i < index; ++i) b = line.find(',', b) + 1;
  std::size_t e = line.find(',', b);
  if (e == std::string::npos) e = line.size();
  return {row + 1, b + 1, e + 1};
}

std::filesystem::path cff2ecc8_dir() { return corpus_dir().parent_path() / "pytorch-cff2ecc8"; }

const nlohmann::json& cff2ecc8_manifest() {
  static const nlohmann::json m = nlohmann::json::parse(read_file(cff2ecc8_dir() / "manifest.json"));
  return m;
}

std::filesystem::path cff2ecc8_file(const std::string& name) {
  auto p = cff2ecc8_dir() / "configs" / name;
  return std::filesystem::exists(p) ? p : corpus_dir() / "configs" / name;
}

std::vector<nlohmann::json> cff2ecc8_negative_cases() {
  std::vector<nlohmann::json> out;
  for (const auto& n : cff2ecc8_manifest()["negative"])
    if (n.contains("file") && n["file"].is_string()) out.push_back(n);
  return out;
}

}  // namespace ppsched::test
