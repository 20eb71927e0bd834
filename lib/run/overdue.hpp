// What a multi-process device says when a wait for the GPU passes its deadline, or NCCL reports
// an error while it waits: which launch had not finished, and why the wait stopped.
//
//   rank 2: '3RECV_F5' had not finished after 60 s: a peer died or hangs
//   rank 2: '3RECV_F5' had not finished when ncclCommGetAsyncError reported ncclRemoteError: ...
//
// Header only, and free of CUDA: the CUDA backend (a module that links no ppsched library) uses
// it, and the unit tests check it on machines without a GPU.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace ppsched::run {

/// "60 s", "0.5 s", "0.125 s": seconds as a person writes them.
inline std::string seconds_text(double s) {
  std::string t = std::to_string(s);  // fixed, six decimals
  t.erase(t.find_last_not_of('0') + 1);
  if (t.back() == '.') t.pop_back();
  return t + " s";
}

/// A launch as a device remembers it, in the order it was enqueued.
struct LaunchRef {
  std::uint32_t span = 0;
  std::uint32_t rank = 0;
  std::string_view label;  ///< "3RECV_F5"
};

/// The first of `launched` (in launch order) that `finished(span)` says has not finished, or null.
/// Launch order is the host's topological order, so what it names is the earliest work still
/// waiting: usually the receive from the peer that died, not the launches queued behind it.
template <class Finished>
const LaunchRef* first_unfinished(std::span<const LaunchRef> launched, Finished&& finished) {
  for (const LaunchRef& l : launched)
    if (!finished(l.span)) return &l;
  return nullptr;
}

/// "rank 2: '3RECV_F5'", or `fallback` when no launch is known.
inline std::string launch_text(const LaunchRef* l, std::string_view fallback) {
  if (!l) return std::string(fallback);
  return "rank " + std::to_string(l->rank) + ": '" + std::string(l->label) + "'";
}

/// Why a wait for `what` stopped: past `timeout_s`, or because NCCL reported `nccl_error` (not
/// empty) first.
inline std::string overdue_message(std::string_view what, double timeout_s, std::string_view nccl_error) {
  std::string m(what);
  if (!nccl_error.empty()) return m + " had not finished when " + std::string(nccl_error);
  return m + " had not finished after " + seconds_text(timeout_s) + ": a peer died or hangs";
}

}  // namespace ppsched::run
