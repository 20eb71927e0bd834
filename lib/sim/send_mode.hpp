// How a SEND completes: the send semantics a schedule is simulated and checked under
// (docs/rules.md, "Send semantics"). The one home of the rule that both timed simulators apply
// (timed.cpp and aggregate.cpp; timed.hpp says how each times an eager pair), of its flag
// syntax (`--send-mode rendezvous|eager|eager:BYTES`) and of its text in reports.
//
//   rendezvous   (the default) a SEND completes only with its RECV: the transfer starts when both
//                ends have been posted on their ranks' comm queues. NCCL behaves so once a message
//                no longer fits its buffer.
//   eager        a SEND completes without waiting for its RECV: its transfer starts when it is
//                posted, and the RECV completes once it is posted and the data has arrived. NCCL
//                behaves so for a message that fits the buffer it copies into on the peer
//                (NCCL_BUFFSIZE). `eager:BYTES` makes only messages of at most BYTES bytes eager
//                (sizes from the stage spec: activation_bytes for SEND_F, gradient_bytes for
//                SEND_B); larger ones stay rendezvous. `eager` alone makes every SEND eager.
//
// A schedule that finishes under rendezvous finishes under any eager threshold (an eager SEND
// waits for less), so rendezvous is the strict case the validator checks by default.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "model/comm.hpp"

namespace ppsched {

/// NCCL's default buffer per peer and protocol, in bytes: DEFAULT_BUFFSIZE (1 << 22, 4 MiB) in
/// NCCL's src/init.cc, which the NCCL_BUFFSIZE environment variable overrides (recent NCCL
/// releases default to 1 MiB on ARM hosts). The threshold the manual's examples use.
inline constexpr double kNcclDefaultBuffSize = 4194304;

/// How SENDs complete (see the top of this file).
struct SendMode {
  enum class Kind : std::uint8_t { Rendezvous, Eager };
  Kind kind = Kind::Rendezvous;
  /// Eager: the largest message, in bytes, that completes without its RECV; infinity (`eager`
  /// alone) for every message, whatever its size.
  double eager_max_bytes = std::numeric_limits<double>::infinity();

  bool eager() const { return kind == Kind::Eager; }
  /// Eager with a threshold: whether a SEND is eager depends on its message's size.
  bool needs_sizes() const { return eager() && eager_max_bytes != std::numeric_limits<double>::infinity(); }
  friend bool operator==(const SendMode&, const SendMode&) = default;
};

/// Whether a SEND of stage `stage`'s forward output (forward = true) or input gradient completes
/// without waiting for its RECV: under eager, when its message (CommModel::message_bytes: 0
/// without a stage spec) is at most the threshold.
inline bool send_completes_eagerly(const SendMode& mode, const CommModel& comm, std::uint32_t stage, bool forward) {
  return mode.eager() && comm.message_bytes(stage, forward) <= mode.eager_max_bytes;
}

/// Reads "rendezvous", "eager" or "eager:BYTES" (BYTES a whole number, as NCCL_BUFFSIZE takes it);
/// nullopt when it is none of them.
std::optional<SendMode> parse_send_mode(std::string_view text);

/// The flag's spelling of `mode`: "rendezvous", "eager" or "eager:4194304".
std::string send_mode_name(const SendMode& mode);

/// One line for a report's time model: "eager sends (messages up to 4194304 bytes complete without
/// their receive)"; empty for rendezvous, the default that reports do not mention.
std::string send_mode_summary(const SendMode& mode);

}  // namespace ppsched
