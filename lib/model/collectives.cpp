#include "model/collectives.hpp"

namespace ppsched {

namespace {

double ring_phase_us(double bytes, std::uint32_t group, const Link& link) {
  if (group <= 1 || bytes <= 0) return 0;
  const double n = group;
  const double move = link.bytes_per_us > 0 ? (n - 1) / n * bytes / link.bytes_per_us : 0;
  return move + (n - 1) * link.latency_us;
}

}  // namespace

double all_gather_us(double bytes, std::uint32_t group, const Link& link) { return ring_phase_us(bytes, group, link); }

double reduce_scatter_us(double bytes, std::uint32_t group, const Link& link) {
  return ring_phase_us(bytes, group, link);
}

double all_reduce_us(double bytes, std::uint32_t group, const Link& link) {
  return 2 * ring_phase_us(bytes, group, link);
}

double all_to_all_us(double bytes, std::uint32_t group, const Link& link) {
  if (group <= 1 || bytes <= 0) return 0;
  const double n = group;
  return (link.bytes_per_us > 0 ? (n - 1) / n * bytes / link.bytes_per_us : 0) + link.latency_us;
}

Link scale_up_link(const GpuSpec& gpu) { return {5, gpu.scale_up_bytes_per_s / 1e6}; }
Link scale_out_link(const GpuSpec& gpu) { return {15, gpu.scale_out_bytes_per_s / 1e6}; }

}  // namespace ppsched
