#include "nccl_api.hpp"

#include <dlfcn.h>

#include <memory>
#include <mutex>

#include "run/device.hpp"

namespace ppsched::run::cuda {

namespace {

constexpr const char* kLibrary = "libnccl.so.2";

[[noreturn]] void not_loaded(const std::string& why) {
  throw DeviceError("NCCL could not be loaded: " + why + "; multi-process CUDA runs need " + kLibrary +
                    " (the CUDA Toolkit's, or set LD_LIBRARY_PATH)");
}

std::string last_dl_error(const char* fallback) {
  const char* e = dlerror();
  return e ? e : fallback;
}

// The loader's search path first (LD_LIBRARY_PATH, ld.so.cache), so a user's choice wins; then
// the toolkit ppsched was built with, whose lib/ a runfile install leaves out of ld.so.cache.
void* open_library() {
  (void)dlerror();
  if (void* h = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL)) return h;
  const std::string why = last_dl_error("dlopen failed");
#ifdef PPSCHED_NCCL_FALLBACK_DIR
  if (void* h = dlopen(PPSCHED_NCCL_FALLBACK_DIR "/libnccl.so.2", RTLD_NOW | RTLD_LOCAL)) return h;
#endif
  not_loaded(why);
}

template <class F>
void resolve(void* library, F& f, const char* name) {
  (void)dlerror();
  f = reinterpret_cast<F>(dlsym(library, name));
  if (!f) {
    const std::string why = last_dl_error(name);
    dlclose(library);
    not_loaded(why);
  }
}

// NCCL encodes 2.9 and later as 10000 * major + 100 * minor + patch, older ones with 1000.
std::string version_text(int v) {
  const int major = v >= 10000 ? v / 10000 : v / 1000;
  const int minor = v >= 10000 ? v % 10000 / 100 : v % 1000 / 100;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(v % 100);
}

std::unique_ptr<NcclApi> load() {
  void* lib = open_library();
  auto api = std::make_unique<NcclApi>();
  resolve(lib, api->get_version, "ncclGetVersion");
  resolve(lib, api->get_unique_id, "ncclGetUniqueId");
  resolve(lib, api->comm_init_rank, "ncclCommInitRank");
  resolve(lib, api->comm_destroy, "ncclCommDestroy");
  resolve(lib, api->comm_abort, "ncclCommAbort");
  resolve(lib, api->comm_get_async_error, "ncclCommGetAsyncError");
  resolve(lib, api->send, "ncclSend");
  resolve(lib, api->recv, "ncclRecv");
  resolve(lib, api->group_start, "ncclGroupStart");
  resolve(lib, api->group_end, "ncclGroupEnd");
  resolve(lib, api->get_error_string, "ncclGetErrorString");
  int v = 0;
  api->version = api->get_version(&v) == ncclSuccess ? version_text(v) : "unknown";
  return api;
}

const char* result_name(ncclResult_t r) {
  switch (r) {
    case ncclSuccess:
      return "ncclSuccess";
    case ncclUnhandledCudaError:
      return "ncclUnhandledCudaError";
    case ncclSystemError:
      return "ncclSystemError";
    case ncclInternalError:
      return "ncclInternalError";
    case ncclInvalidArgument:
      return "ncclInvalidArgument";
    case ncclInvalidUsage:
      return "ncclInvalidUsage";
    case ncclRemoteError:
      return "ncclRemoteError";
    case ncclInProgress:
      return "ncclInProgress";
    default:
      return nullptr;
  }
}

}  // namespace

const NcclApi& nccl() {
  // Never unloaded: communicators live in its code until the process ends.
  static std::mutex mutex;
  static std::unique_ptr<NcclApi> api;
  const std::lock_guard lock(mutex);
  if (!api) api = load();
  return *api;
}

std::string error_text(ncclResult_t r) {
  const char* name = result_name(r);
  std::string text = name ? name : "ncclResult_t " + std::to_string(static_cast<int>(r));
  // Only reached after a call through a loaded NcclApi.
  if (const char* s = nccl().get_error_string(r)) text += std::string(": ") + s;
  return text;
}

void throw_failure(ncclResult_t r, std::string_view call, const Where& where) {
  throw DeviceError(failure(call, error_text(r), where));
}

}  // namespace ppsched::run::cuda
