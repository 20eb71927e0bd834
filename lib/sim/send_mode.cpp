#include "sim/send_mode.hpp"

#include <fmt/format.h>

#include <charconv>

namespace ppsched {

std::optional<SendMode> parse_send_mode(std::string_view text) {
  if (text == "rendezvous") return SendMode{};
  constexpr std::string_view kEager = "eager";
  if (text.substr(0, kEager.size()) != kEager) return std::nullopt;
  text.remove_prefix(kEager.size());
  SendMode mode{SendMode::Kind::Eager};
  if (text.empty()) return mode;
  if (text.front() != ':') return std::nullopt;
  text.remove_prefix(1);
  // A whole number of bytes, digits only (no sign, no exponent), as NCCL_BUFFSIZE is written.
  std::uint64_t bytes = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, bytes);
  if (text.empty() || ec != std::errc{} || ptr != end) return std::nullopt;
  mode.eager_max_bytes = static_cast<double>(bytes);
  return mode;
}

std::string send_mode_name(const SendMode& mode) {
  if (!mode.eager()) return "rendezvous";
  if (!mode.needs_sizes()) return "eager";
  return fmt::format("eager:{:.0f}", mode.eager_max_bytes);
}

std::string send_mode_summary(const SendMode& mode) {
  if (!mode.eager()) return {};
  if (!mode.needs_sizes()) return "eager sends (every send completes without its receive)";
  return fmt::format("eager sends up to {:.0f} bytes (larger ones wait for their receive)", mode.eager_max_bytes);
}

}  // namespace ppsched
