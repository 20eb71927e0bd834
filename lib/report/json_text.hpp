// How every JSON report is written: indented by two, one document per output, a final newline.
// Text from the input (file names, cells, source lines in snippets) may hold bytes that are not
// UTF-8; JSON cannot carry them, so they are written as U+FFFD rather than failing the report.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace ppsched {

template <class Json>
std::string json_text(const Json& doc) {
  return doc.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace ppsched
