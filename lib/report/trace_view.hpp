// The trace view: a simulated schedule as Chrome trace event JSON, for Perfetto
// (ui.perfetto.dev) and chrome://tracing. Layout as docs conventions §2.4 recommends:
//
//   {"traceEvents":[
//   {"ph":"M","name":"process_name","pid":1,"args":{"name":"rank 0 (stage 0)"}},
//   {"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"compute"}},
//   {"ph":"X","name":"0F0","cat":"compute","pid":1,"tid":1,"ts":0.000,"dur":1.000,
//    "args":{"stage":0,"microbatch":0,"kind":"F","step":0}},
//   {"ph":"X","name":"0SEND_F0","cat":"comm","pid":1,"tid":2,"ts":1.000,"dur":0.100,...},
//   {"ph":"s","name":"p2p","cat":"p2p","id":2,"pid":1,"tid":2,"ts":1.050},
//   {"ph":"f","bp":"e","name":"p2p","cat":"p2p","id":2,"pid":2,"tid":3,"ts":1.050},
//   {"ph":"C","name":"memory","pid":1,"ts":0.000,"args":{"activations":1}},
//   ...],"displayTimeUnit":"ms","otherData":{...}}
//
// How to read it: one process per rank (pid = rank + 1, named "rank N (stages ...)"), one
// thread per stream (tid 1 compute, 2 send, 3 recv; a stream a rank never uses gets no
// thread). Each timeline entry is one complete slice named with PyTorch's action text, so
// the viewer's search finds "2F5"; cat is the kind's class (compute, comm, fsdp) and args give
// stage, microbatch, kind, the program step and the entry that released it. An arrow (v1
// flow, cat and name "p2p", id = the SEND's entry index + 1) joins each SEND to its RECV; it
// starts inside the SEND where the transfer starts (both ends posted) and ends inside the RECV
// just before the transfer ends, so it never points back in time, however early the RECV was
// posted. A zero-length SEND or RECV (zero transfer costs) has no inside: its arrow end sits
// on the slice's start, where a viewer may leave it unbound; TraceFlows::V2 binds to the slices
// themselves, and since Perfetto draws that arrow from the SEND's end to the RECV's start, a
// RECV posted before its SEND ended is drawn as "<RECV> (waiting)" (cat "wait") up to that end,
// then the RECV proper. A compute-only timeline (no SEND or RECV: torchtitan's CSVs) gets an arrow
// ("transfer") for each implicit transfer between ranks, from inside the producing F, I or B
// just before it ends to inside the consumer just after it starts. With a memory profile, each
// rank gets a "memory" counter track ("weights_and_activations_MiB" when the profile is in
// bytes, which count the rank's weights too, else "activations_microbatches"), one point per
// change.
//
// Times: timeline times are multiplied by TraceOptions::time_scale to give microseconds and
// written in whole nanoseconds (3 decimals). The output is streamed into the sink in chunks
// (no DOM); its size per action and its speed are in docs/bench.md, "Traces and SVG"
// (bench/report_bench.cpp).
//
// Guarantees: no NaN or Inf is ever written (non-finite memory points are left out); slices
// on one (pid, tid) never overlap, because the timeline is checked first: two entries of one
// rank's stream that share time (after rounding to nanoseconds; partial overlap or one inside
// the other, as a stream runs one action at a time; touching or zero-length is fine), a
// non-finite or reversed interval, or a broken peer/step/rank_begin is a simulator bug and
// throws std::logic_error naming the entries, before anything is written.
#pragma once

#include <string>

#include "io/byte_sink.hpp"
#include "ir/schedule.hpp"
#include "sim/memory.hpp"
#include "sim/timeline.hpp"

namespace ppsched {

/// How send -> recv arrows are written.
enum class TraceFlows : std::uint8_t {
  None,  ///< no arrows
  V1,    ///< "s"/"f" events: Perfetto and chrome://tracing
  V2,    ///< Perfetto's bind_id/flow_out/flow_in on the slices: smaller, Perfetto only
};

/// Options of write_chrome_trace.
struct TraceOptions {
  double time_scale = 1.0;               ///< microseconds per timeline time unit (> 0, finite)
  TraceFlows flows = TraceFlows::V1;     ///< send -> recv arrows
  std::string display_time_unit = "ms";  ///< "ms" or "ns": how the legacy viewer shows time
  std::string label;                     ///< free text for otherData.label (empty: none)
  std::string thread_prefix;             ///< before each stream's thread name ("gpu " for measured runs)
  /// What one timeline unit is: true for microseconds (measured or derived costs), false for
  /// the costs' own unit (unit costs, --cost), drawn as time_scale us. otherData says which.
  bool times_in_us = false;
};

/// Writes the trace of `t` (the timeline of `s`) to `out`. `memory` may be null. Throws
/// std::invalid_argument for bad options or a timeline of another schedule, and
/// std::logic_error for a timeline the simulator should never produce (see above). All three
/// are the caller's bugs, not a user's error (UserError): no flag sets the time scale or the
/// display unit, and simulate and run pass the timeline of the schedule they ran, so the CLI
/// reports them as internal errors.
void write_chrome_trace(const Schedule& s, const Timeline& t, const MemoryProfile* memory, ByteSink& out,
                        const TraceOptions& opt = {});

}  // namespace ppsched
