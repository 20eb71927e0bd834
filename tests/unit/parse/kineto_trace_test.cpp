// The Kineto trace reader (parse/kineto_trace.hpp) on small traces written here in the profiler's
// format: what it keeps of a pipeline action, gzip, and each refusal with its place.
#include "parse/kineto_trace.hpp"

#include <zlib.h>

#include "diag/render.hpp"
#include "support/catch.hpp"

using namespace ppsched;

namespace {

// Rank 1 of 2: one profiled step holding PP:1F0 (two kernels) and PP:1I0 (one), a cpu_op and a
// flow event the reader skips, and a kernel launched outside any PP range.
const char* const kTrace = R"({
  "schemaVersion": 1,
  "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}],
  "distributedInfo": {"backend": "nccl", "rank": 1, "world_size": 2},
  "traceEvents": [
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 10, "tid": 10, "ts": 1000.000, "dur": 900.000},
    {"ph": "X", "cat": "user_annotation", "name": "PP:1F0", "pid": 10, "tid": 10, "ts": 1010.000, "dur": 30.000},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 10, "tid": 10, "ts": 1012.000, "dur": 5.000, "args": {"External id": 4}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 10, "ts": 1013.000, "dur": 4.000, "args": {"correlation": 71}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 10, "ts": 1020.000, "dur": 4.000, "args": {"correlation": 72}},
    {"ph": "s", "id": 71, "pid": 10, "tid": 10, "ts": 1013.000, "cat": "ac2g", "name": "ac2g"},
    {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 1100.000, "dur": 40.000, "args": {"correlation": 71, "stream": 7}},
    {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 1150.000, "dur": 20.000, "args": {"correlation": 72, "stream": 7}},
    {"ph": "X", "cat": "user_annotation", "name": "PP:1I0", "pid": 10, "tid": 10, "ts": 1050.000, "dur": 20.000},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 10, "ts": 1055.000, "dur": 4.000, "args": {"correlation": 73}},
    {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 1200.000, "dur": 55.500, "args": {"correlation": 73, "stream": 7}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 10, "ts": 1500.000, "dur": 4.000, "args": {"correlation": 74}},
    {"ph": "X", "cat": "kernel", "name": "optimizer", "pid": 0, "tid": 7, "ts": 1600.000, "dur": 9.000, "args": {"correlation": 74}}
  ],
  "traceName": "rank1_trace.json"
})";

std::string gzip(const std::string& text) {
  z_stream z{};
  REQUIRE(deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&z, text.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::string errors(std::string_view text) {
  DiagnosticSink sink;
  CHECK_FALSE(read_kineto_trace_text("t.json", text, sink));
  return render_text(sink);
}

}  // namespace

TEST_CASE("kineto: a PP action's host range and its kernels' GPU span and busy time") {
  for (bool compressed : {false, true}) {
    INFO("gzip " << compressed);
    DiagnosticSink sink;
    const std::string text = compressed ? gzip(kTrace) : std::string(kTrace);
    auto r = read_kineto_trace_text("rank1_trace.json", text, sink);
    INFO(render_text(sink));
    REQUIRE(r);
    CHECK(r->rank == 1);
    CHECK(r->world_size == 2);
    REQUIRE(r->steps.size() == 1);
    CHECK(r->steps[0].number == 3);
    REQUIRE(r->actions.size() == 2);
    const MeasuredAction& f = r->actions[0];
    CHECK(f.action == Action::make(ActionKind::F, 1, 0));
    CHECK(f.cpu_start == 1010);
    CHECK(f.cpu_end == 1040);
    CHECK(f.has_gpu);
    CHECK(f.gpu_start == 1100);
    CHECK(f.gpu_end == 1170);
    CHECK(f.gpu_busy == Approx(60));  // 40 + 20: the gap between its kernels is not busy
    CHECK(r->actions[1].action == Action::make(ActionKind::I, 1, 0));
    CHECK(r->actions[1].gpu_busy == Approx(55.5));
  }
}

TEST_CASE("kineto: a truncated trace is an error at its line and column") {
  const std::string text(kTrace);
  const std::string cut = text.substr(0, text.find("\"PP:1I0\""));
  const std::string e = errors(cut);
  CHECK(e.find("t.json:") == 0);
  CHECK(e.find("invalid JSON") != std::string::npos);
  CHECK(e.find("[trace-file]") != std::string::npos);
}

TEST_CASE("kineto: a trace without PP ranges, rank or steps says what is missing and how to record it") {
  std::string no_pp(kTrace);
  for (std::size_t at; (at = no_pp.find("PP:1")) != std::string::npos;) no_pp.replace(at, 4, "xx:1");
  CHECK(errors(no_pp).find("no PP: ranges") != std::string::npos);
  CHECK(errors(no_pp).find("record_function") != std::string::npos);
  std::string no_rank(kTrace);
  no_rank.replace(no_rank.find("distributedInfo"), 15, "somethingElse00");
  CHECK(errors(no_rank).find("no distributedInfo") != std::string::npos);
  std::string no_step(kTrace);
  no_step.replace(no_step.find("ProfilerStep#3"), 14, "OtherRange#300");
  CHECK(errors(no_step).find("no ProfilerStep#N") != std::string::npos);
  std::string bad(kTrace);
  bad.replace(bad.find("PP:1I0"), 6, "PP:1Q0");
  CHECK(errors(bad).find("'PP:1Q0' is not a pipeline action") != std::string::npos);
  CHECK(errors("").find("invalid JSON") != std::string::npos);
  CHECK(errors(gzip(kTrace).substr(0, 60)).find("gzip") != std::string::npos);
}
