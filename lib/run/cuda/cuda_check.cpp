#include "cuda_check.hpp"

#include "run/device.hpp"

namespace ppsched::run::cuda {

std::string error_text(cudaError_t e) { return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e); }

std::string error_text(cublasStatus_t s) {
  return std::string(cublasGetStatusName(s)) + ": " + cublasGetStatusString(s);
}

std::string failure(std::string_view call, const std::string& error, const Where& where) {
  std::string m(call);
  m += " failed (" + error + ")";
  if (!where.what.empty()) m += " in " + std::string(where.what);
  if (where.rank != Where::kNone)
    m += " on rank " + std::to_string(where.rank);
  else if (where.device >= 0)
    m += " on device " + std::to_string(where.device);
  return m;
}

void throw_failure(cudaError_t e, std::string_view call, const Where& where) {
  // Clears the runtime's last error, so a caller that catches this and goes on (the command
  // reporting it) is not shown the same error again by an unrelated later call. Sticky errors
  // (a kernel fault) stay: every later call reports them, which is right.
  (void)cudaGetLastError();
  throw DeviceError(failure(call, error_text(e), where));
}

void throw_failure(cublasStatus_t s, std::string_view call, const Where& where) {
  throw DeviceError(failure(call, error_text(s), where));
}

}  // namespace ppsched::run::cuda
