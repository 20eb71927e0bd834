// NcclComm where nccl.h was not found when the backend was built: single-process runs work as
// ever, and a multi-process run stops at its start saying what to install.
#include "nccl_comm.hpp"

namespace ppsched::run::cuda {

namespace {

[[noreturn]] void no_nccl(const char* call) {
  throw DeviceError(std::string(call) +
                    ": multi-process CUDA runs need NCCL, but its headers (nccl.h) were missing when ppsched's "
                    "CUDA backend was built; install NCCL (it comes with the CUDA Toolkit) and rebuild");
}

}  // namespace

Bytes NcclComm::new_id() { no_nccl("ncclGetUniqueId"); }

NcclComm::NcclComm(const Bytes&, int, int, int, double) { no_nccl("ncclCommInitRank"); }

NcclComm::~NcclComm() = default;

void NcclComm::post(Way, int, std::span<const Piece>, cudaStream_t, const Where&) { no_nccl("ncclSend"); }

std::string NcclComm::async_error() { return {}; }

void NcclComm::abort() noexcept { aborted_ = true; }

}  // namespace ppsched::run::cuda
