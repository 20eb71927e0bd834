// Reading inputs: a path or "-" for standard input.
#pragma once

#include <cstddef>
#include <string>

namespace ppsched {

/// Opens a path for reading ("-" gives a duplicate of standard input); throws IoError naming
/// the path. The caller owns and closes the descriptor.
int open_input(const std::string& path);

/// Reads a whole input into memory; throws IoError, also when it exceeds max_bytes.
std::string read_whole_input(const std::string& path, std::size_t max_bytes = std::size_t{1} << 31);

/// How an input is named in messages: "<stdin>" for "-".
std::string display_name(const std::string& path);

}  // namespace ppsched
