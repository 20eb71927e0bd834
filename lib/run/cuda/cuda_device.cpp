#include "cuda_device.hpp"

#include <cublas_v2.h>
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <string>

#include "kernels.hpp"

namespace ppsched::run::cuda {

namespace {

// cuBLAS's recommended workspace for Hopper (4 MiB suffices before it); given explicitly so it
// counts in fixed_bytes and each rank's compute stream has its own.
constexpr std::uint64_t kWorkspaceBytes = 32ull << 20;
// Copies without a big enough buffer on one side move through scratch, in chunks of at most this.
constexpr std::uint64_t kMaxStagingBytes = 64ull << 20;
constexpr std::uint64_t kMinStagingBytes = 1ull << 20;

[[noreturn]] void contract(const std::string& message) { throw DeviceError(message); }

// The host-side range Nsight Systems shows for each launch, named like the action.
class NvtxRange {
 public:
  explicit NvtxRange(const char* name) { nvtxRangePushA(name); }
  ~NvtxRange() { nvtxRangePop(); }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

}  // namespace

struct CudaDevice::Operands {
  char* stash;  // 2 x layers activations (X per layer, then dY per layer), or null
  char* input;  // the received activation or gradient, or null
  char* scratch[2];
  std::uint64_t act;
  std::uint32_t layers;

  char* x(std::uint32_t l) const { return stash + l * act; }
  char* dy(std::uint32_t l) const { return stash + (layers + l) * act; }
};

CudaDevice::CudaDevice(const std::vector<int>& ordinals) {
  try {
    open_gpus(ordinals);
  } catch (...) {
    close_gpus();  // the destructor does not run for a constructor that throws
    throw;
  }
}

CudaDevice::CudaDevice(int ordinal, const Member& member, std::unique_ptr<NcclComm> comm)
    : member_(member), comm_(std::move(comm)) {
  try {
    open_gpus({ordinal});
  } catch (...) {
    close_gpus();
    throw;
  }
  memory_.peak_buffer_bytes.assign(member_.device_count, 0);
  memory_.fixed_bytes.assign(member_.device_count, 0);
}

CudaDevice::~CudaDevice() {
  abort_if_busy();
  release();
  close_gpus();
}

void CudaDevice::use(int gpu, const Where& where) {
  if (gpu == current_) return;
  check(cudaSetDevice(gpus_[gpu].ordinal), "cudaSetDevice", where);
  current_ = gpu;
}

void CudaDevice::open_gpus(const std::vector<int>& ordinals) {
  const auto n = static_cast<int>(ordinals.size());
  gpus_.resize(ordinals.size());
  for (int i = 0; i < n; ++i) {
    gpus_[i].ordinal = ordinals[i];
    gpus_[i].peer.assign(ordinals.size(), false);
  }
  // Peer access first: it decides which pools other GPUs may map.
  for (int i = 0; i < n; ++i) {
    const Where where{"open", Where::kNone, ordinals[i]};
    use(i, where);
    for (int j = 0; j < n; ++j) {
      if (j == i || ordinals[j] == ordinals[i]) continue;
      int can = 0;
      check(cudaDeviceCanAccessPeer(&can, ordinals[i], ordinals[j]), "cudaDeviceCanAccessPeer", where);
      if (!can) continue;
      const cudaError_t e = cudaDeviceEnablePeerAccess(ordinals[j], 0);
      if (e == cudaErrorPeerAccessAlreadyEnabled) {
        (void)cudaGetLastError();
      } else if (e == cudaErrorTooManyPeers) {
        // Past the hardware's peer limit copies still work, staged by the driver: not fatal.
        (void)cudaGetLastError();
        continue;
      } else {
        check(e, "cudaDeviceEnablePeerAccess", where);
      }
      gpus_[i].peer[j] = true;
    }
  }
  for (int i = 0; i < n; ++i) {
    const Where where{"open", Where::kNone, ordinals[i]};
    Gpu& g = gpus_[i];
    use(i, where);
    check(cublasCreate(&g.blas), "cublasCreate", where);

    // Our own pool rather than the device's default one, so its high-water mark counts the
    // plan's buffers and nothing else.
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypeNone;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = g.ordinal;
    check(cudaMemPoolCreate(&g.pool, &props), "cudaMemPoolCreate", where);
    // Keep freed memory for the next iteration instead of returning it to the driver at every
    // synchronization: allocation cost then stays out of the measured iterations.
    std::uint64_t threshold = std::numeric_limits<std::uint64_t>::max();
    check(cudaMemPoolSetAttribute(g.pool, cudaMemPoolAttrReleaseThreshold, &threshold), "cudaMemPoolSetAttribute",
          where);
    // Reusing memory freed on another stream would make the pool insert waits the schedule does
    // not have, and so change its timing; reuse across streams only where an event orders them.
    int off = 0;
    check(cudaMemPoolSetAttribute(g.pool, cudaMemPoolReuseAllowInternalDependencies, &off), "cudaMemPoolSetAttribute",
          where);
    // Peer access does not extend to pool memory: GPUs that map this one map its pool too, so a
    // copy reading another rank's buffer goes peer to peer.
    std::vector<cudaMemAccessDesc> access;
    for (int j = 0; j < n; ++j) {
      if (!gpus_[j].peer[i]) continue;
      cudaMemAccessDesc d{};
      d.location.type = cudaMemLocationTypeDevice;
      d.location.id = gpus_[j].ordinal;
      d.flags = cudaMemAccessFlagsProtReadWrite;
      access.push_back(d);
    }
    if (!access.empty())
      check(cudaMemPoolSetAccess(g.pool, access.data(), access.size()), "cudaMemPoolSetAccess", where);
  }
  memory_.peak_buffer_bytes.assign(gpus_.size(), 0);
  memory_.fixed_bytes.assign(gpus_.size(), 0);
}

void CudaDevice::close_gpus() noexcept {
  for (Gpu& g : gpus_) {
    if (cudaSetDevice(g.ordinal) != cudaSuccess) continue;
    if (g.blas) cublasDestroy(g.blas);
    if (g.pool) cudaMemPoolDestroy(g.pool);
    g.blas = nullptr;
    g.pool = nullptr;
  }
  current_ = -1;
  (void)cudaGetLastError();
}

// Frees everything setup() made. Errors are ignored: this runs in the destructor, and before a
// new setup, whose own calls report a device that is really broken.
void CudaDevice::release() noexcept {
  for (Gpu& g : gpus_) {
    if (!g.used) continue;
    if (cudaSetDevice(g.ordinal) == cudaSuccess) cudaDeviceSynchronize();
  }
  current_ = -1;
  for (std::size_t b = 0; b < buffer_.size(); ++b)
    if (buffer_live_[b] && buffer_[b]) cudaFree(buffer_[b]);  // left by an iteration that failed
  // Null where another process owns the rank (multi-process mode).
  for (cudaEvent_t e : span_start_)
    if (e) cudaEventDestroy(e);
  for (cudaEvent_t e : span_end_)
    if (e) cudaEventDestroy(e);
  for (cudaEvent_t e : events_)
    if (e) cudaEventDestroy(e);
  for (cudaStream_t s : streams_)
    if (s) cudaStreamDestroy(s);
  for (void* p : allocations_) cudaFree(p);
  for (Gpu& g : gpus_) {
    if (g.iteration_start) cudaEventDestroy(g.iteration_start);
    if (g.used && g.pool) cudaMemPoolTrimTo(g.pool, 0);
    g.iteration_start = nullptr;
    g.first_stream = -1;
    g.used = false;
  }
  (void)cudaGetLastError();
  span_start_.clear();
  span_end_.clear();
  span_launched_.clear();
  launched_.clear();
  last_on_stream_.clear();
  events_.clear();
  streams_.clear();
  allocations_.clear();
  stages_.clear();
  ranks_.clear();
  buffer_.clear();
  buffer_live_.clear();
  gpu_of_rank_.clear();
  std::fill(memory_.peak_buffer_bytes.begin(), memory_.peak_buffer_bytes.end(), 0);
  std::fill(memory_.fixed_bytes.begin(), memory_.fixed_bytes.end(), 0);
}

void CudaDevice::validate(const DevicePlan& plan) const {
  const auto ranks = plan.device_of_rank.size();
  const auto streams = plan.stream_count();
  if (comm_) {
    validate_member(plan);
  } else {
    if (!plan.process_of_rank.empty())
      contract("setup: the plan places its ranks in several processes, but this device was opened for one");
    for (std::size_t r = 0; r < ranks; ++r)
      if (plan.device_of_rank[r] < 0 || static_cast<std::size_t>(plan.device_of_rank[r]) >= gpus_.size())
        contract("setup: rank " + std::to_string(r) + " is placed on device " + std::to_string(plan.device_of_rank[r]) +
                 ", but only " + std::to_string(gpus_.size()) + " were opened");
  }
  for (std::size_t s = 0; s < plan.rank_of_stage.size(); ++s)
    if (plan.rank_of_stage[s] >= ranks)
      contract("setup: stage " + std::to_string(s) + " is held by rank " + std::to_string(plan.rank_of_stage[s]) +
               ", but the plan has " + std::to_string(ranks) + " ranks");
  if (plan.event_stream.size() != plan.event_count || plan.span_stream.size() != plan.span_count)
    contract("setup: the plan gives a stream for " + std::to_string(plan.event_stream.size()) + " of " +
             std::to_string(plan.event_count) + " events and " + std::to_string(plan.span_stream.size()) + " of " +
             std::to_string(plan.span_count) + " spans");
  for (std::uint32_t s : plan.event_stream)
    if (s >= streams) contract("setup: an event is recorded on stream " + std::to_string(s) + ", which does not exist");
  for (std::uint32_t s : plan.span_stream)
    if (s >= streams) contract("setup: a span is launched on stream " + std::to_string(s) + ", which does not exist");
  for (std::size_t b = 0; b < plan.buffers.size(); ++b)
    if (plan.buffers[b].rank >= ranks)
      contract("setup: buffer " + std::to_string(b) + " belongs to rank " + std::to_string(plan.buffers[b].rank) +
               ", which does not exist");
  const GemmShape& s = plan.shape;
  constexpr auto kMaxDim = static_cast<std::uint32_t>(std::numeric_limits<int>::max());
  if (s.element_bytes != 2 && s.element_bytes != 4)
    contract("setup: element size " + std::to_string(s.element_bytes) + " bytes is neither bf16 (2) nor fp32 (4)");
  if (s.layers == 0 || s.hidden == 0 || s.tokens == 0 || s.hidden > kMaxDim || s.tokens > kMaxDim)
    contract("setup: GEMM shape " + std::to_string(s.layers) + " layers x " + std::to_string(s.hidden) + " hidden x " +
             std::to_string(s.tokens) + " tokens is empty or too large for cuBLAS");
}

char* CudaDevice::device_alloc(int gpu, std::uint64_t bytes) {
  const Where where{"setup", Where::kNone, gpus_[gpu].ordinal};
  use(gpu, where);
  void* p = nullptr;
  check(cudaMalloc(&p, bytes), "cudaMalloc", where);
  allocations_.push_back(p);
  memory_.fixed_bytes[memory_slot(gpu)] += bytes;
  return static_cast<char*>(p);
}

void CudaDevice::setup(const DevicePlan& plan) {
  abort_if_busy();
  release();
  validate(plan);
  plan_ = plan;
  const GemmShape& shape = plan_.shape;
  const bool gemm = plan_.workload == Workload::Gemm;
  activation_bytes_ = shape.boundary_bytes();
  const auto ranks = static_cast<std::uint32_t>(plan_.device_of_rank.size());
  // Multi-process mode: this process's ranks are on its one GPU; the others get -1 and nothing
  // below (streams, events, weights, scratch) is made for them.
  if (comm_) {
    gpu_of_rank_.assign(ranks, -1);
    for (std::uint32_t r = 0; r < ranks; ++r)
      if (plan_.here(r)) gpu_of_rank_[r] = 0;
  } else {
    gpu_of_rank_.assign(plan_.device_of_rank.begin(), plan_.device_of_rank.end());
  }
  for (int g : gpu_of_rank_)
    if (g >= 0) gpus_[g].used = true;

  streams_.reserve(plan_.stream_count());
  for (std::uint32_t s = 0; s < plan_.stream_count(); ++s) {
    const int g = gpu_of_rank_[rank_of_stream(s)];
    if (g < 0) {
      streams_.push_back(nullptr);
      continue;
    }
    use(g, {"setup", rank_of_stream(s)});
    cudaStream_t st = nullptr;
    check(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "cudaStreamCreateWithFlags",
          {"setup", rank_of_stream(s)});
    streams_.push_back(st);
    if (gpus_[g].first_stream < 0) gpus_[g].first_stream = s;
  }
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    if (!gpus_[i].used) continue;
    const Where where{"setup", Where::kNone, gpus_[i].ordinal};
    use(static_cast<int>(i), where);
    check(cudaEventCreate(&gpus_[i].iteration_start), "cudaEventCreate", where);
  }
  events_.reserve(plan_.event_count);
  for (std::uint32_t e = 0; e < plan_.event_count; ++e) {
    const std::uint32_t rank = rank_of_stream(plan_.event_stream[e]);
    if (!here(rank)) {
      events_.push_back(nullptr);
      continue;
    }
    use(gpu_of_rank_[rank], {"setup", rank});
    cudaEvent_t ev = nullptr;
    check(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), "cudaEventCreateWithFlags", {"setup", rank});
    events_.push_back(ev);
  }
  span_start_.reserve(plan_.span_count);
  span_end_.reserve(plan_.span_count);
  for (std::uint32_t s = 0; s < plan_.span_count; ++s) {
    const std::uint32_t rank = rank_of_stream(plan_.span_stream[s]);
    if (!here(rank)) {
      span_start_.push_back(nullptr);
      span_end_.push_back(nullptr);
      continue;
    }
    use(gpu_of_rank_[rank], {"setup", rank});
    for (auto* list : {&span_start_, &span_end_}) {
      cudaEvent_t ev = nullptr;
      check(cudaEventCreate(&ev), "cudaEventCreate", {"setup", rank});
      list->push_back(ev);
    }
  }
  span_launched_.assign(plan_.span_count, false);
  last_on_stream_.assign(plan_.stream_count(), kNoSpan);
  if (comm_) launched_.reserve(plan_.span_count);

  if (gemm) {
    const std::uint64_t weight_elems = static_cast<std::uint64_t>(shape.layers) * shape.hidden * shape.hidden;
    const std::uint64_t weight_bytes = weight_elems * shape.element_bytes;
    // Keeps activations about the size of their inputs through the layers: 1/sqrt(fan-in).
    const float scale = 1.0f / std::sqrt(static_cast<float>(shape.hidden));
    stages_.resize(plan_.rank_of_stage.size());
    for (std::size_t st = 0; st < stages_.size(); ++st) {
      if (!here(plan_.rank_of_stage[st])) continue;
      const int g = gpu_of_rank_[plan_.rank_of_stage[st]];
      stages_[st].w = device_alloc(g, weight_bytes);
      stages_[st].dw = device_alloc(g, weight_bytes);
      const Where where{"setup", plan_.rank_of_stage[st]};
      check(fill_small(stages_[st].w, weight_elems, shape.element_bytes, scale, nullptr), "fill kernel launch", where);
      check(cudaMemsetAsync(stages_[st].dw, 0, weight_bytes, nullptr), "cudaMemsetAsync", where);
    }
  }
  // Scratch: GEMM operands when a launch has no buffer, and the staging area of copies, whose
  // largest possible size is the largest buffer.
  std::uint64_t largest = 0;
  for (const BufferSpec& b : plan_.buffers) largest = std::max(largest, b.bytes);
  const std::uint64_t staging = std::clamp(largest, kMinStagingBytes, kMaxStagingBytes);
  // A transfer through scratch is cut into pieces of a scratch half, and NCCL matches a send only
  // with a receive of the same size: every process computes this from the whole plan (all ranks'
  // buffers), so sender and receiver cut alike.
  transfer_piece_ = std::max(gemm ? activation_bytes_ : 0, staging);
  ranks_.resize(ranks);
  for (std::uint32_t r = 0; r < ranks; ++r) {
    if (!here(r)) continue;
    Rank& rank = ranks_[r];
    const int g = gpu_of_rank_[r];
    rank.half_bytes = transfer_piece_;
    rank.scratch = device_alloc(g, 2 * rank.half_bytes);
    const std::uint64_t elems = 2 * rank.half_bytes / shape.element_bytes;
    check(fill_small(rank.scratch, elems, shape.element_bytes, 1.0f, nullptr), "fill kernel launch", {"setup", r});
    if (gemm) rank.workspace = device_alloc(g, kWorkspaceBytes);
  }
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    if (!gpus_[i].used) continue;
    const Where where{"setup", Where::kNone, gpus_[i].ordinal};
    use(static_cast<int>(i), where);
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize", where);
  }
  buffer_.assign(plan_.buffers.size(), nullptr);
  buffer_live_.assign(plan_.buffers.size(), false);
}

void CudaDevice::begin_iteration() {
  // The GPUs start together: nothing of the last iteration is still running anywhere.
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    if (!gpus_[i].used) continue;
    const Where where{"begin_iteration", Where::kNone, gpus_[i].ordinal};
    use(static_cast<int>(i), where);
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize", where);
  }
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    Gpu& g = gpus_[i];
    if (!g.used) continue;
    const Where where{"begin_iteration", Where::kNone, g.ordinal};
    const int gi = static_cast<int>(i);
    use(gi, where);
    std::uint64_t zero = 0;  // resets the high-water mark to what is in use now (nothing)
    check(cudaMemPoolSetAttribute(g.pool, cudaMemPoolAttrUsedMemHigh, &zero), "cudaMemPoolSetAttribute", where);
    // Every stream of this GPU starts after iteration_start, so span times count from it.
    check(cudaEventRecord(g.iteration_start, streams_[g.first_stream]), "cudaEventRecord", where);
    for (std::size_t s = 0; s < streams_.size(); ++s)
      if (gpu_of_rank_[rank_of_stream(s)] == gi && static_cast<std::int64_t>(s) != g.first_stream)
        check(cudaStreamWaitEvent(streams_[s], g.iteration_start, 0), "cudaStreamWaitEvent", where);
  }
  std::fill(span_launched_.begin(), span_launched_.end(), false);
  std::fill(last_on_stream_.begin(), last_on_stream_.end(), kNoSpan);
  launched_.clear();
}

void CudaDevice::wait(std::uint32_t stream, std::uint32_t event) {
  if (stream >= streams_.size() || event >= events_.size())
    contract("wait: stream " + std::to_string(stream) + " or event " + std::to_string(event) + " does not exist");
  if (!streams_[stream]) contract("wait: stream " + std::to_string(stream) + " belongs to a rank of another process");
  // An event another process records is never recorded here, and waiting on it would be CUDA's
  // no-op; what orders the two processes is NCCL matching the Recv with the peer's Send.
  if (!events_[event]) return;
  // Waiting across GPUs is allowed; no current device needed.
  check(cudaStreamWaitEvent(streams_[stream], events_[event], 0), "cudaStreamWaitEvent",
        {"wait", rank_of_stream(stream)});
}

void CudaDevice::record(std::uint32_t stream, std::uint32_t event) {
  if (stream >= streams_.size() || event >= events_.size())
    contract("record: stream " + std::to_string(stream) + " or event " + std::to_string(event) + " does not exist");
  if (!streams_[stream] || !events_[event])
    contract("record: stream " + std::to_string(stream) + " or event " + std::to_string(event) +
             " belongs to a rank of another process");
  const std::uint32_t planned = plan_.event_stream[event];
  if (gpu_of_rank_[rank_of_stream(planned)] != gpu_of_rank_[rank_of_stream(stream)])
    contract("record: event " + std::to_string(event) + " was made on the GPU of stream " + std::to_string(planned) +
             ", but stream " + std::to_string(stream) + " records it");
  const Where where{"record", rank_of_stream(stream)};
  use(gpu_of_rank_[rank_of_stream(stream)], where);
  check(cudaEventRecord(events_[event], streams_[stream]), "cudaEventRecord", where);
}

Where CudaDevice::where_of(const Work& work) const {
  const std::string_view label =
      work.label < plan_.labels.size() ? std::string_view(plan_.labels[work.label]) : std::string_view("a launch");
  return {label, work.rank};
}

char* CudaDevice::live_buffer(std::uint32_t buffer, std::uint64_t min_bytes) const {
  if (buffer >= buffer_.size() || !buffer_live_[buffer] || plan_.buffers[buffer].bytes < min_bytes) return nullptr;
  return static_cast<char*>(buffer_[buffer]);
}

void CudaDevice::launch(std::uint32_t stream, const Work& work, std::uint32_t span) {
  const Where where = where_of(work);
  if (stream >= streams_.size() || span >= span_start_.size())
    contract("launch of " + std::string(where.what) + ": stream " + std::to_string(stream) + " or span " +
             std::to_string(span) + " does not exist");
  if (!streams_[stream] || !span_start_[span])
    contract("launch of " + std::string(where.what) + ": stream " + std::to_string(stream) + " or span " +
             std::to_string(span) + " belongs to a rank of another process");
  const int gpu = gpu_of_rank_[rank_of_stream(stream)];
  if (gpu_of_rank_[rank_of_stream(plan_.span_stream[span])] != gpu)
    contract("launch of " + std::string(where.what) + ": span " + std::to_string(span) +
             " was made on the GPU of stream " + std::to_string(plan_.span_stream[span]) + ", but runs on stream " +
             std::to_string(stream));
  const cudaStream_t st = streams_[stream];
  use(gpu, where);
  const NvtxRange range(where.what.data());  // labels are std::strings: NUL-terminated

  check(cudaEventRecord(span_start_[span], st), "cudaEventRecord", where);
  for (std::uint8_t i = 0; i < work.alloc_count && i < std::size(work.allocs); ++i) {
    const std::uint32_t b = work.allocs[i];
    if (b >= buffer_.size() || buffer_live_[b])
      contract("launch of " + std::string(where.what) + ": buffer " + std::to_string(b) +
               " does not exist or is already allocated");
    const BufferSpec& spec = plan_.buffers[b];
    // The buffer lives on its rank's GPU; that pool may belong to another GPU than the stream's.
    if (spec.bytes > 0)
      check(cudaMallocFromPoolAsync(&buffer_[b], spec.bytes, gpus_[gpu_of_rank_[spec.rank]].pool, st),
            "cudaMallocFromPoolAsync", where);
    buffer_live_[b] = true;
  }

  if (work.kind == WorkKind::Copy) {
    run_copy(stream, work, where);
  } else if (work.kind == WorkKind::Send || work.kind == WorkKind::SendDone || work.kind == WorkKind::Recv) {
    run_transfer(stream, work, where);
  } else if (plan_.workload == Workload::Synthetic) {
    if (work.expected_us > 0 && std::isfinite(work.expected_us))
      check(spin(static_cast<std::uint64_t>(std::llround(work.expected_us * 1000.0)), st), "spin kernel launch", where);
  } else if (work.kind != WorkKind::None) {
    run_gemms(stream, work, where);
  }

  for (std::uint8_t i = 0; i < work.free_count && i < std::size(work.frees); ++i) {
    const std::uint32_t b = work.frees[i];
    if (b >= buffer_.size() || !buffer_live_[b])
      contract("launch of " + std::string(where.what) + ": buffer " + std::to_string(b) +
               " does not exist or is not allocated");
    if (buffer_[b]) check(cudaFreeAsync(buffer_[b], st), "cudaFreeAsync", where);
    buffer_[b] = nullptr;
    buffer_live_[b] = false;
  }
  check(cudaEventRecord(span_end_[span], st), "cudaEventRecord", where);
  span_launched_[span] = true;
  if (comm_) {  // what a bounded wait polls, and names when it gives up
    launched_.push_back({span, work.rank, where.what});
    last_on_stream_[stream] = span;
  }
}

void CudaDevice::gemm(const Where& where, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                      const void* a, const void* b, void* c, float beta) {
  const cudaDataType_t type = plan_.shape.element_bytes == 2 ? CUDA_R_16BF : CUDA_R_32F;
  const float alpha = 1.0f;
  const int lda = ta == CUBLAS_OP_N ? m : k;
  const int ldb = tb == CUBLAS_OP_N ? k : n;
  check(cublasGemmEx(gpus_[current_].blas, ta, tb, m, n, k, &alpha, a, type, lda, b, type, ldb, &beta, c, type, m,
                     CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
        "cublasGemmEx", where);
}

// Row-major activations (tokens x hidden) are, to column-major cuBLAS, hidden x tokens; so
// Y = X W is Y' = W' X' with W's storage read as W': no transposes, m = hidden, n = tokens.
void CudaDevice::run_gemms(std::uint32_t stream, const Work& work, const Where& where) {
  const GemmShape& shape = plan_.shape;
  if (work.stage >= stages_.size() || !here(work.rank))
    contract("launch of " + std::string(where.what) + ": stage " + std::to_string(work.stage) + " or rank " +
             std::to_string(work.rank) + " does not exist here");
  if (gpu_of_rank_[plan_.rank_of_stage[work.stage]] != gpu_of_rank_[rank_of_stream(stream)])
    contract("launch of " + std::string(where.what) + ": stage " + std::to_string(work.stage) +
             "'s weights are on another GPU than stream " + std::to_string(stream));
  const int h = static_cast<int>(shape.hidden);
  const int t = static_cast<int>(shape.tokens);
  const std::uint32_t layers = shape.layers;
  const std::uint64_t weight_stride = static_cast<std::uint64_t>(shape.hidden) * shape.hidden * shape.element_bytes;
  const Stage& stage = stages_[work.stage];
  const Rank& rank = ranks_[work.rank];
  // A buffer too small for its GEMM (a transfer sized by the stage spec, not the shape) is not
  // read: scratch stands in, so every GEMM touches valid memory of its full size.
  const Operands op{live_buffer(work.stash, shape.stash_bytes()),
                    live_buffer(work.input, activation_bytes_),
                    {rank.scratch, rank.scratch + rank.half_bytes},
                    activation_bytes_,
                    layers};
  auto w = [&](std::uint32_t l) { return stage.w + l * weight_stride; };
  auto dw = [&](std::uint32_t l) { return stage.dw + l * weight_stride; };

  cublasHandle_t blas = gpus_[current_].blas;
  check(cublasSetStream(blas, streams_[stream]), "cublasSetStream", where);
  // cublasSetStream falls back to cuBLAS's own workspace; a rank's compute stream has its own,
  // which no other stream uses concurrently.
  if (is_compute_stream(stream) && rank_of_stream(stream) == work.rank && rank.workspace)
    check(cublasSetWorkspace(blas, rank.workspace, kWorkspaceBytes), "cublasSetWorkspace", where);

  const bool input_grad = work.kind == WorkKind::InputGrad || work.kind == WorkKind::FullBackward;
  const bool weight_grad = work.kind == WorkKind::WeightGrad || work.kind == WorkKind::FullBackward;
  if (work.kind == WorkKind::Forward) {
    // Each layer's input stays in the stash for the backward; the last output goes to scratch.
    for (std::uint32_t l = 0; l < layers; ++l) {
      const char* x = l == 0 && op.input ? op.input : op.stash ? op.x(l) : op.scratch[l % 2];
      char* y = op.stash ? (l + 1 < layers ? op.x(l + 1) : op.scratch[0]) : op.scratch[(l + 1) % 2];
      gemm(where, CUBLAS_OP_N, CUBLAS_OP_N, h, t, h, w(l), x, y, 0.0f);
    }
  }
  if (input_grad) {
    // dX = dY W^T, last layer first; each layer's dY stays in the stash for W.
    for (std::uint32_t l = layers; l-- > 0;) {
      const std::uint32_t i = layers - 1 - l;
      const char* dy = l + 1 == layers && op.input ? op.input : op.stash ? op.dy(l) : op.scratch[i % 2];
      char* dx = op.stash ? (l > 0 ? op.dy(l - 1) : op.scratch[0]) : op.scratch[(i + 1) % 2];
      gemm(where, CUBLAS_OP_T, CUBLAS_OP_N, h, t, h, w(l), dy, dx, 0.0f);
    }
  }
  if (weight_grad) {
    // dW += X^T dY, accumulated over microbatches as in training.
    for (std::uint32_t l = 0; l < layers; ++l) {
      const char* x = op.stash ? op.x(l) : op.scratch[0];
      const char* dy = op.stash ? op.dy(l) : op.scratch[1];
      gemm(where, CUBLAS_OP_N, CUBLAS_OP_T, h, h, t, dy, x, dw(l), 1.0f);
    }
  }
}

void CudaDevice::run_copy(std::uint32_t stream, const Work& work, const Where& where) {
  const std::uint64_t bytes = work.copy_bytes;
  if (bytes == 0) return;
  if (!here(work.copy_from) || !here(work.rank))
    contract("launch of " + std::string(where.what) + ": copy between ranks " + std::to_string(work.copy_from) +
             " and " + std::to_string(work.rank) + ", which do not both exist in this process");
  // A side without a buffer of copy_bytes moves through its rank's scratch, chunk by chunk; the
  // source half and destination half differ, so a copy within one rank never overlaps itself.
  char* src = live_buffer(work.input, bytes);
  char* dst = live_buffer(work.output, bytes);
  const int src_gpu = gpu_of_rank_[src ? plan_.buffers[work.input].rank : work.copy_from];
  const int dst_gpu = gpu_of_rank_[dst ? plan_.buffers[work.output].rank : work.rank];
  const Rank& from = ranks_[work.copy_from];
  const Rank& to = ranks_[work.rank];
  std::uint64_t chunk = bytes;
  if (!src) chunk = std::min(chunk, from.half_bytes);
  if (!dst) chunk = std::min(chunk, to.half_bytes);
  const cudaStream_t st = streams_[stream];
  for (std::uint64_t off = 0; off < bytes; off += chunk) {
    const std::uint64_t n = std::min(chunk, bytes - off);
    const char* s = src ? src + off : from.scratch;
    char* d = dst ? dst + off : to.scratch + to.half_bytes;
    if (src_gpu == dst_gpu)
      check(cudaMemcpyAsync(d, s, n, cudaMemcpyDeviceToDevice, st), "cudaMemcpyAsync", where);
    else
      check(cudaMemcpyPeerAsync(d, gpus_[dst_gpu].ordinal, s, gpus_[src_gpu].ordinal, n, st), "cudaMemcpyPeerAsync",
            where);
  }
}

double CudaDevice::end_iteration(std::span<double> span_start_us, std::span<double> span_end_us) {
  if (span_start_us.size() < span_start_.size() || span_end_us.size() < span_end_.size())
    contract("end_iteration: room for " + std::to_string(std::min(span_start_us.size(), span_end_us.size())) +
             " spans, but the plan has " + std::to_string(span_start_.size()));
  if (comm_) {
    await_iteration();  // never blocks past the deadline: a peer may be dead
  } else {
    for (std::size_t i = 0; i < gpus_.size(); ++i) {
      if (!gpus_[i].used) continue;
      const Where where{"the iteration", Where::kNone, gpus_[i].ordinal};
      use(static_cast<int>(i), where);
      // Also where a fault of any launch of the iteration surfaces.
      check(cudaDeviceSynchronize(), "cudaDeviceSynchronize", where);
    }
  }
  double latest = 0;
  for (std::size_t s = 0; s < span_start_.size(); ++s) {
    if (!span_start_[s]) {  // another process's launch: it measures it
      span_start_us[s] = span_end_us[s] = 0;
      continue;
    }
    if (!span_launched_[s])
      contract("end_iteration: span " + std::to_string(s) + " was not launched in this iteration");
    const Gpu& g = gpus_[gpu_of_rank_[rank_of_stream(plan_.span_stream[s])]];
    const Where where{"end_iteration", rank_of_stream(plan_.span_stream[s])};
    float start_ms = 0, end_ms = 0;
    check(cudaEventElapsedTime(&start_ms, g.iteration_start, span_start_[s]), "cudaEventElapsedTime", where);
    check(cudaEventElapsedTime(&end_ms, g.iteration_start, span_end_[s]), "cudaEventElapsedTime", where);
    span_start_us[s] = 1000.0 * start_ms;
    span_end_us[s] = 1000.0 * end_ms;
    latest = std::max(latest, span_end_us[s]);
  }
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    memory_.peak_buffer_bytes[memory_slot(i)] = 0;
    if (!gpus_[i].used) continue;
    std::uint64_t high = 0;
    check(cudaMemPoolGetAttribute(gpus_[i].pool, cudaMemPoolAttrUsedMemHigh, &high), "cudaMemPoolGetAttribute",
          {"end_iteration", Where::kNone, gpus_[i].ordinal});
    memory_.peak_buffer_bytes[memory_slot(i)] = high;
  }
  return latest;
}

}  // namespace ppsched::run::cuda
