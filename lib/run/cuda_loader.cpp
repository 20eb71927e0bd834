// make_cuda_runtime: loads the CUDA backend (libppsched_cuda.so, built beside the ppsched binary
// where nvcc exists) only when `ppsched run` asks for it. Every other command, and a binary
// copied to a machine without CUDA libraries, never loads cuBLAS or the CUDA runtime.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "run/device.hpp"

namespace ppsched::run {

namespace {

// A runtime that can only say why there is no GPU.
class UnavailableRuntime : public DeviceRuntime {
 public:
  UnavailableRuntime(Discovery::Status status, std::string message) {
    d_.status = status;
    d_.message = std::move(message);
    d_.backend = "cuda";
  }
  Discovery discover() override { return d_; }
  std::unique_ptr<Device> open(const Discovery&) override { throw DeviceError("open: " + d_.message); }
  Bytes new_comm_id() override { throw DeviceError("new_comm_id: " + d_.message); }
  std::unique_ptr<Device> open_member(const Discovery&, const GroupMembership&) override {
    throw DeviceError("open: " + d_.message);
  }

 private:
  Discovery d_;
};

#ifdef PPSCHED_HAVE_CUDA
std::string executable_dir() {
  std::string buf(4096, '\0');
  ssize_t n = readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  if (n <= 0) return ".";
  buf.resize(static_cast<std::size_t>(n));
  auto slash = buf.rfind('/');
  return slash == std::string::npos ? "." : buf.substr(0, slash);
}
#endif

}  // namespace

std::unique_ptr<DeviceRuntime> make_cuda_runtime() {
#ifndef PPSCHED_HAVE_CUDA
  return std::make_unique<UnavailableRuntime>(Discovery::Status::NotBuilt,
                                              "ppsched was built without CUDA (no nvcc when it was configured)");
#else
  // PPSCHED_CUDA_MODULE names another module (tests use it to simulate a missing one).
  const char* env = std::getenv("PPSCHED_CUDA_MODULE");
  const std::string path = env && *env ? env : executable_dir() + "/libppsched_cuda.so";
  // Never unloaded: devices it creates live in its code until the process ends.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    return std::make_unique<UnavailableRuntime>(
        Discovery::Status::NotBuilt, "the CUDA backend could not be loaded: " + std::string(why ? why : path));
  }
  using Factory = DeviceRuntime* (*)();
  auto factory = reinterpret_cast<Factory>(dlsym(handle, "ppsched_make_cuda_runtime"));
  if (!factory)
    return std::make_unique<UnavailableRuntime>(Discovery::Status::NotBuilt,
                                                path + " has no ppsched_make_cuda_runtime: not a ppsched CUDA backend");
  return std::unique_ptr<DeviceRuntime>(factory());
#endif
}

}  // namespace ppsched::run
