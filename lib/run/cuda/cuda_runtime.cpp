// The CUDA runtime of `ppsched run`, and the one symbol this module exports.
//
// ppsched dlopen()s this module (run/cuda_loader.cpp) only when a run asks for CUDA, and calls
// ppsched_make_cuda_runtime. Nothing here calls CUDA before discover(): not the constructor,
// not a static initializer, so loading the module on a machine without a driver is harmless.
// Nothing loads NCCL before new_comm_id() or open_member(): single-process runs never need it.
#include <cuda_runtime_api.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "cuda_check.hpp"
#include "cuda_device.hpp"
#include "nccl_comm.hpp"
#include "run/device.hpp"

namespace ppsched::run::cuda {

namespace {

// 13000 -> "13.0", as CUDA encodes versions (1000 * major + 10 * minor).
std::string version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

// Errors of cudaGetDeviceCount that mean "no usable driver" rather than "no GPU": none
// installed (cudaErrorInsufficientDriver, what a machine without one gives), one older than the
// runtime, or a kernel module that does not match the user-space driver.
bool is_driver_problem(cudaError_t e) {
  return e == cudaErrorInsufficientDriver || e == cudaErrorCallRequiresNewerDriver ||
         e == cudaErrorSystemDriverMismatch || e == cudaErrorCompatNotSupportedOnDevice || e == cudaErrorNotSupported;
}

class CudaRuntime final : public DeviceRuntime {
 public:
  Discovery discover() override {
    Discovery d;
    d.backend = "cuda";
    // Every rank has three streams, and CUDA feeds all streams of a device through 8 hardware
    // queues unless told otherwise: with more than 8 streams, launches of independent streams
    // queue behind each other. On an H200 that made 8 ranks of one-thread kernels run far behind
    // the simulated time, and close to it with 32 queues (docs/bench.md, "GPU"). It is read when
    // the first context is made, so before any CUDA call; a value the user set stays.
    if (const char* set = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS")) {
      d.settings = std::string("CUDA_DEVICE_MAX_CONNECTIONS=") + set + " (from the environment)";
    } else {
      setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
      d.settings = "CUDA_DEVICE_MAX_CONNECTIONS=32 (set by ppsched: each rank has " + std::to_string(kStreamsPerRank) +
                   " streams)";
    }
    // Each GEMM kernel fills the GPU, so ranks that share one take turns on it.
    d.compute_is_shared = true;
    int v = 0;
    d.runtime_version = cudaRuntimeGetVersion(&v) == cudaSuccess ? version_text(v) : "unknown";
    v = 0;
    // 0 when no driver is installed.
    d.driver_version = cudaDriverGetVersion(&v) == cudaSuccess && v > 0 ? version_text(v) : "none";

    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      d.status = is_driver_problem(e)     ? Discovery::Status::NoDriver
                 : e == cudaErrorNoDevice ? Discovery::Status::NoDevice
                                          : Discovery::Status::Error;
      d.message = failure("cudaGetDeviceCount", error_text(e), {}) + "; CUDA driver " + d.driver_version +
                  ", runtime " + d.runtime_version;
      return d;
    }
    if (count <= 0) {
      d.status = Discovery::Status::NoDevice;
      d.message = "cudaGetDeviceCount found no CUDA device (CUDA driver " + d.driver_version + ")";
      return d;
    }
    for (int i = 0; i < count; ++i) {
      cudaDeviceProp prop{};
      int sms = 0;
      const char* call = "cudaGetDeviceProperties";
      cudaError_t err = cudaGetDeviceProperties(&prop, i);
      if (err == cudaSuccess) {
        // CUDA 13 dropped most deprecated cudaDeviceProp fields; attributes are the stable way.
        call = "cudaDeviceGetAttribute(cudaDevAttrMultiProcessorCount)";
        err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, i);
      }
      if (err != cudaSuccess) {
        (void)cudaGetLastError();
        d.status = Discovery::Status::Error;
        d.message = failure(call, error_text(err), {"discovery", Where::kNone, i});
        d.devices.clear();
        return d;
      }
      d.devices.push_back({i, prop.name, static_cast<std::uint64_t>(prop.totalGlobalMem), sms});
    }
    d.status = Discovery::Status::Ok;
    return d;
  }

  std::unique_ptr<Device> open(const Discovery& discovery) override {
    if (discovery.status != Discovery::Status::Ok || discovery.devices.empty())
      throw DeviceError("open: CUDA discovery found no usable GPU" +
                        (discovery.message.empty() ? std::string() : " (" + discovery.message + ")"));
    std::vector<int> ordinals;
    ordinals.reserve(discovery.devices.size());
    for (const DeviceInfo& info : discovery.devices) ordinals.push_back(info.ordinal);
    return std::make_unique<CudaDevice>(ordinals);
  }

  Bytes new_comm_id() override { return NcclComm::new_id(); }

  std::unique_ptr<Device> open_member(const Discovery& discovery, const GroupMembership& member) override {
    if (discovery.status != Discovery::Status::Ok || discovery.devices.empty())
      throw DeviceError("open: CUDA discovery found no usable GPU" +
                        (discovery.message.empty() ? std::string() : " (" + discovery.message + ")"));
    if (!member.group) throw DeviceError("open: a multi-process run needs its process group");
    if (member.device < 0 || static_cast<std::size_t>(member.device) >= discovery.devices.size())
      throw DeviceError("open: this process was given device " + std::to_string(member.device) +
                        ", but discovery found " + std::to_string(discovery.devices.size()));
    const int ordinal = discovery.devices[member.device].ordinal;
    // NCCL binds the communicator to the device current when it is created.
    check(cudaSetDevice(ordinal), "cudaSetDevice", {"open", Where::kNone, ordinal});
    auto comm = std::make_unique<NcclComm>(member.comm_id, member.group->size(), member.group->rank(), ordinal,
                                           member.timeout_s);
    const CudaDevice::Member m{member.device, discovery.devices.size(), member.timeout_s};
    return std::make_unique<CudaDevice>(ordinal, m, std::move(comm));
  }
};

}  // namespace

}  // namespace ppsched::run::cuda

// The module's only exported symbol (exports.map): a new runtime, owned by the caller (delete).
extern "C" __attribute__((visibility("default"))) ppsched::run::DeviceRuntime* ppsched_make_cuda_runtime() {
  return new ppsched::run::cuda::CudaRuntime();
}
