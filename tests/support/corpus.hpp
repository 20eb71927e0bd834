// The PyTorch conformance corpus (tests/conformance/pytorch): PyTorch's own output for
// schedule configs and mutated negative cases, with its verdicts in manifest.json.
// Test files iterate over it; later issues add checks per verdict.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ppsched::test {

std::filesystem::path corpus_dir();
std::filesystem::path source_dir();
const nlohmann::json& manifest();

/// Every CSV a config lists under "files", as paths under configs/.
std::vector<std::filesystem::path> config_csv_files();
/// The CSV files of upstream-artifacts/ (PyTorch's test artifacts; LF line endings).
std::vector<std::filesystem::path> upstream_csv_files();
/// Negative cases (manifest entries) that have a file.
std::vector<nlohmann::json> negative_cases();

std::string read_file(const std::filesystem::path& p);

/// The second corpus, at PyTorch cff2ecc8 (tests/conformance/pytorch-cff2ecc8): its manifest, and
/// a file of it by name, or the first corpus's file of that name (files a keyword leaves
/// unchanged are stored once, there).
std::filesystem::path cff2ecc8_dir();
const nlohmann::json& cff2ecc8_manifest();
std::filesystem::path cff2ecc8_file(const std::string& name);
/// The second corpus's stored negative cases (manifest entries) that have a file, under
/// cff2ecc8_dir() / "negative": a subset of the full corpus's (its README says which).
std::vector<nlohmann::json> cff2ecc8_negative_cases();

/// Byte range [begin, end) of cell `index` of 0-based row `row` in CSV text (no quoting).
struct CellSpan {
  std::size_t line = 0;                    ///< 1-based
  std::size_t begin_col = 0, end_col = 0;  ///< 1-based, end exclusive
};
CellSpan locate_cell(const std::string& csv, std::size_t row, std::size_t index);

}  // namespace ppsched::test
