#include "report/trace_view.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "support/built_timeline.hpp"
#include "support/catch.hpp"

using namespace ppsched;
using nlohmann::json;

namespace {

using Built = test::BuiltTimeline;

Action act(ActionKind k, std::uint16_t stage, std::uint32_t mb = Action::kNoMicrobatch) {
  return Action::make(k, stage, mb);
}

using test::small_pipeline;

std::string write(const Schedule& s, const Timeline& t, const MemoryProfile* m = nullptr,
                  const TraceOptions& opt = {}) {
  std::string text;
  StringSink sink(text);
  write_chrome_trace(s, t, m, sink, opt);
  return text;
}

std::vector<json> events(const json& trace, std::string_view ph) {
  std::vector<json> out;
  for (const json& e : trace.at("traceEvents"))
    if (e.at("ph") == ph) out.push_back(e);
  return out;
}

// The check every trace must pass to open in Perfetto (docs/conventions §2.3): on one
// (pid, tid), two X slices may nest or touch but never partially overlap. Returns a
// description of the first offending pair, or "" when there is none.
std::string partial_overlap(const json& trace) {
  std::map<std::pair<long long, long long>, std::vector<std::tuple<double, double, std::string>>> tracks;
  for (const json& e : events(trace, "X")) {
    const double ts = e.at("ts").get<double>(), dur = e.at("dur").get<double>();
    tracks[{e.at("pid").get<long long>(), e.at("tid").get<long long>()}].emplace_back(ts, ts + dur,
                                                                                      e.at("name").get<std::string>());
  }
  for (auto& [track, slices] : tracks) {
    std::sort(slices.begin(), slices.end(),
              [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
    for (std::size_t i = 0; i < slices.size(); ++i)
      for (std::size_t j = i + 1; j < slices.size() && std::get<0>(slices[j]) < std::get<1>(slices[i]); ++j) {
        const bool nested = std::get<1>(slices[j]) <= std::get<1>(slices[i]);
        if (!nested)
          return "pid " + std::to_string(track.first) + " tid " + std::to_string(track.second) + ": " +
                 std::get<2>(slices[i]) + " and " + std::get<2>(slices[j]);
      }
  }
  return "";
}

bool inside(double x, const json& slice) {
  const double ts = slice.at("ts").get<double>();
  return ts < x && x < ts + slice.at("dur").get<double>();
}

// Finds the X slice with this name.
json slice(const json& trace, std::string_view name) {
  for (const json& e : events(trace, "X"))
    if (e.at("name") == name) return e;
  FAIL("no slice " << name);
  return {};
}

// A synthetic 1F1B run with explicit comms: every rank's streams run back to back, so it has
// many slices and flows but no overlap.
Built synthetic(std::uint32_t ranks, std::uint32_t mbs) {
  Built b(ranks);
  for (std::uint32_t r = 0; r < ranks; ++r) {
    const auto st = static_cast<std::uint16_t>(r);
    double now = r;
    auto fwd = [&](std::uint32_t m) {
      if (r > 0) {
        b.run(r, act(ActionKind::RecvF, st, m), now, now + 0.25, Stream::Recv);
        now += 0.25;
      }
      b.run(r, act(ActionKind::F, st, m), now, now + 1);
      now += 1;
      if (r + 1 < ranks) b.run(r, act(ActionKind::SendF, st, m), now, now + 0.25, Stream::Send);
    };
    auto bwd = [&](std::uint32_t m) {
      if (r + 1 < ranks) {
        b.run(r, act(ActionKind::RecvB, st, m), now, now + 0.25, Stream::Recv);
        now += 0.25;
      }
      b.run(r, act(ActionKind::B, st, m), now, now + 2);
      now += 2;
      if (r > 0) b.run(r, act(ActionKind::SendB, st, m), now, now + 0.25, Stream::Send);
    };
    const std::uint32_t warmup = std::min(ranks - 1 - r, mbs);
    std::uint32_t f = 0, bw = 0;
    while (f < warmup) fwd(f++);
    while (f < mbs) {
      fwd(f++);
      bwd(bw++);
    }
    while (bw < mbs) bwd(bw++);
  }
  return b;
}

}  // namespace

TEST_CASE("chrome trace: processes per rank, threads per used stream, sorted") {
  Built b = small_pipeline();
  const json trace = json::parse(write(b.s, b.build()));
  CHECK(trace.at("displayTimeUnit") == "ms");
  CHECK(trace.at("otherData").at("generator") == "ppsched");
  CHECK(trace.at("otherData").at("actions") == 8);

  std::map<long long, std::string> process;
  std::map<long long, long long> process_sort;
  std::map<std::pair<long long, long long>, std::string> thread;
  std::map<std::pair<long long, long long>, long long> thread_sort;
  for (const json& e : events(trace, "M")) {
    const long long pid = e.at("pid");
    if (e.at("name") == "process_name") process[pid] = e.at("args").at("name");
    if (e.at("name") == "process_sort_index") process_sort[pid] = e.at("args").at("sort_index");
    if (e.at("name") == "thread_name") thread[{pid, e.at("tid")}] = e.at("args").at("name");
    if (e.at("name") == "thread_sort_index") thread_sort[{pid, e.at("tid")}] = e.at("args").at("sort_index");
  }
  CHECK(process == std::map<long long, std::string>{{1, "rank 0 (stage 0)"}, {2, "rank 1 (stage 1)"}});
  CHECK(process_sort == std::map<long long, long long>{{1, 0}, {2, 1}});
  const std::map<std::pair<long long, long long>, std::string> names = {
      {{1, 1}, "compute"}, {{1, 2}, "send"}, {{1, 3}, "recv"}, {{2, 1}, "compute"}, {{2, 2}, "send"}, {{2, 3}, "recv"}};
  CHECK(thread == names);
  for (const auto& [key, index] : thread_sort) CHECK(index == key.second);
  CHECK(thread_sort.size() == 6);
}

TEST_CASE("chrome trace: a complete slice per entry, named with the action text") {
  Built b = small_pipeline();
  const json trace = json::parse(write(b.s, b.build()));
  CHECK(events(trace, "X").size() == 8);
  const json f = slice(trace, "1F0");
  CHECK(f.at("cat") == "compute");
  CHECK(f.at("pid") == 2);
  CHECK(f.at("tid") == 1);
  CHECK(f.at("ts").get<double>() == 1.5);
  CHECK(f.at("dur").get<double>() == 1.0);
  CHECK(f.at("args") == json::parse(R"({"stage":1,"microbatch":0,"kind":"F","step":1,
                                        "released_by":"rank 1 1RECV_F0"})"));
  const json send = slice(trace, "0SEND_F0");
  CHECK(send.at("cat") == "comm");
  CHECK(send.at("tid") == 2);
  CHECK(slice(trace, "0RECV_B0").at("tid") == 3);
  CHECK(slice(trace, "0F0").at("args").contains("released_by") == false);
  // Three decimals: whole nanoseconds, so the slice text is exactly what was simulated.
  CHECK(write(b.s, b.build()).find("\"ts\":1.500,\"dur\":1.000") != std::string::npos);
  CHECK(partial_overlap(trace).empty());
}

TEST_CASE("chrome trace: an arrow from each SEND to its RECV") {
  Built b = small_pipeline();
  const json trace = json::parse(write(b.s, b.build()));
  const auto starts = events(trace, "s"), finishes = events(trace, "f");
  REQUIRE(starts.size() == 2);
  REQUIRE(finishes.size() == 2);
  std::set<long long> ids;
  for (const json& s : starts) {
    CHECK(s.at("cat") == "p2p");
    CHECK(s.at("name") == "p2p");
    CHECK(s.at("id").is_number_integer());
    ids.insert(s.at("id").get<long long>());
  }
  CHECK(ids.size() == 2);
  // Each start lies strictly inside a SEND slice on its own thread, its end strictly inside the
  // matching RECV, bound to the enclosing slice.
  const std::map<std::string, std::string> pairs = {{"0SEND_F0", "1RECV_F0"}, {"1SEND_B0", "0RECV_B0"}};
  for (const auto& [send_name, recv_name] : pairs) {
    const json send = slice(trace, send_name), recv = slice(trace, recv_name);
    const json* s = nullptr;
    for (const json& e : starts)
      if (e.at("pid") == send.at("pid") && e.at("tid") == send.at("tid") && inside(e.at("ts"), send)) s = &e;
    REQUIRE(s);
    const json* f = nullptr;
    for (const json& e : finishes)
      if (e.at("id") == s->at("id")) f = &e;
    REQUIRE(f);
    CHECK(f->at("bp") == "e");
    CHECK(f->at("cat") == s->at("cat"));
    CHECK(f->at("name") == s->at("name"));
    CHECK(f->at("pid") == recv.at("pid"));
    CHECK(f->at("tid") == recv.at("tid"));
    CHECK(inside(f->at("ts"), recv));
  }

  TraceOptions none;
  none.flows = TraceFlows::None;
  const json plain = json::parse(write(b.s, b.build(), nullptr, none));
  CHECK(events(plain, "s").empty());
  CHECK(events(plain, "f").empty());

  TraceOptions v2;
  v2.flows = TraceFlows::V2;
  const json bound = json::parse(write(b.s, b.build(), nullptr, v2));
  CHECK(events(bound, "s").empty());
  const json send = slice(bound, "0SEND_F0"), recv = slice(bound, "1RECV_F0");
  CHECK(send.at("flow_out") == true);
  CHECK(recv.at("flow_in") == true);
  CHECK(send.at("bind_id") == recv.at("bind_id"));
}

TEST_CASE("chrome trace: a memory counter track per rank, one point per change") {
  Built b = small_pipeline();
  MemoryProfile m;
  m.per_rank = {{{0, 0}, {0, 1}, {6, 0}},  // two changes at time 0: only the last is written
                {{0, 0}, {1.5, 0.5}, {3.5, 0}}};
  m.peak = {1, 0.5};
  m.peak_time = {0, 1.5};
  const json trace = json::parse(write(b.s, b.build(), &m));
  const auto counters = events(trace, "C");
  REQUIRE(counters.size() == 5);
  std::map<long long, std::vector<std::pair<double, double>>> by_pid;
  for (const json& c : counters) {
    CHECK(c.at("name") == "memory");
    by_pid[c.at("pid")].emplace_back(c.at("ts").get<double>(),
                                     c.at("args").at("activations_microbatches").get<double>());
  }
  CHECK(by_pid[1] == std::vector<std::pair<double, double>>{{0, 1}, {6, 0}});
  CHECK(by_pid[2] == std::vector<std::pair<double, double>>{{0, 0}, {1.5, 0.5}, {3.5, 0}});

  m.in_bytes = true;
  m.per_rank = {{{0, 3 * 1048576.0}}, {}};
  const auto bytes = events(json::parse(write(b.s, b.build(), &m)), "C");
  REQUIRE(bytes.size() == 1);
  CHECK(bytes[0].at("args").at("weights_and_activations_MiB") == 3);  // bytes count the weights too
}

TEST_CASE("chrome trace: NaN and Inf are never written") {
  Built b = small_pipeline();
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  MemoryProfile m;
  m.per_rank = {{{0, nan}, {1, inf}, {2, -inf}, {3, 1}, {inf, 2}, {nan, 2}}, {{0, 1}, {0, nan}}};
  Timeline t = b.build();
  t.makespan = inf;
  const std::string text = write(b.s, t, &m);
  for (const char* bad : {"nan", "NaN", "inf", "Inf", "null"}) CHECK(text.find(bad) == std::string::npos);
  const json trace = json::parse(text);  // nlohmann refuses NaN and Infinity literals
  const auto counters = events(trace, "C");
  // Rank 0 keeps only (3, 1); rank 1 keeps (0, 1): the NaN at the same time is dropped, not
  // allowed to hide the finite value.
  REQUIRE(counters.size() == 2);
  CHECK(counters[0].at("args").at("activations_microbatches") == 1);
  CHECK(counters[1].at("args").at("activations_microbatches") == 1);
  CHECK_FALSE(trace.at("otherData").contains("makespan_us"));
  CHECK_FALSE(trace.at("otherData").contains("makespan"));

  Timeline bad = b.build();
  bad.end[1] = nan;
  std::string out;
  StringSink sink(out);
  CHECK_THROWS_AS(write_chrome_trace(b.s, bad, nullptr, sink, {}), std::logic_error);
  CHECK(out.empty());
}

TEST_CASE("chrome trace: overlapping slices on one stream are a simulator bug, named, nothing written") {
  Built b(1);
  b.run(0, act(ActionKind::F, 0, 0), 0, 2).run(0, act(ActionKind::F, 0, 1), 1, 3);
  std::string out;
  StringSink sink(out);
  try {
    write_chrome_trace(b.s, b.build(), nullptr, sink, {});
    FAIL("no exception");
  } catch (const std::logic_error& e) {
    const std::string what = e.what();
    CHECK(what.find("entry 0 (rank 0 0F0, compute, 0 to 2)") != std::string::npos);
    CHECK(what.find("entry 1 (rank 0 0F1, compute, 1 to 3)") != std::string::npos);
    CHECK(what.find("overlap") != std::string::npos);
  }
  CHECK(out.empty());

  // Out of program order in time is fine as long as the slices do not overlap.
  Built sorted_late(1);
  sorted_late.run(0, act(ActionKind::F, 0, 0), 5, 6).run(0, act(ActionKind::F, 0, 1), 0, 1);
  CHECK(partial_overlap(json::parse(write(sorted_late.s, sorted_late.build()))).empty());
  // Out of order and overlapping is still caught.
  Built unsorted(1);
  unsorted.run(0, act(ActionKind::F, 0, 0), 5, 7)
      .run(0, act(ActionKind::F, 0, 1), 0, 1)
      .run(0, act(ActionKind::F, 0, 2), 6, 8);
  CHECK_THROWS_AS(write(unsorted.s, unsorted.build()), std::logic_error);
  // The same times on different streams or ranks are fine.
  Built streams(1);
  streams.run(0, act(ActionKind::F, 0, 0), 0, 2).run(0, act(ActionKind::SendF, 0, 0), 1, 3, Stream::Send);
  CHECK_NOTHROW(write(streams.s, streams.build()));
}

TEST_CASE("chrome trace: touching, zero-length and rounding-noise slices are not overlaps") {
  Built b(1);
  b.run(0, act(ActionKind::Unshard, 0), 0, 0)  // zero length at the start of the next slice
      .run(0, act(ActionKind::F, 0, 0), 0, 1)
      .run(0, act(ActionKind::F, 0, 1), 1, 2)         // touching
      .run(0, act(ActionKind::Reshard, 0), 1.5, 1.5)  // zero length inside a slice
      .run(0, act(ActionKind::F, 0, 2), 2.0000000000001, 3)
      .run(0, act(ActionKind::F, 0, 3), 2.9999999999999, 4);  // below a nanosecond: touching once written
  const json trace = json::parse(write(b.s, b.build()));
  CHECK(events(trace, "X").size() == 6);
  CHECK(partial_overlap(trace).empty());
  CHECK(slice(trace, "0UNSHARD").at("cat") == "fsdp");
  CHECK(slice(trace, "0UNSHARD").at("args") == json::parse(R"({"stage":0,"kind":"UNSHARD","step":0})"));
}

TEST_CASE("chrome trace: the overlap check itself finds partial overlaps and allows nesting") {
  const json partial = json::parse(R"({"traceEvents":[
    {"ph":"X","name":"a","pid":1,"tid":1,"ts":0,"dur":2},
    {"ph":"X","name":"b","pid":1,"tid":1,"ts":1,"dur":2}]})");
  CHECK(partial_overlap(partial) == "pid 1 tid 1: a and b");
  const json nested = json::parse(R"({"traceEvents":[
    {"ph":"X","name":"a","pid":1,"tid":1,"ts":0,"dur":3},
    {"ph":"X","name":"b","pid":1,"tid":1,"ts":1,"dur":1},
    {"ph":"X","name":"c","pid":1,"tid":2,"ts":1,"dur":5},
    {"ph":"X","name":"d","pid":1,"tid":1,"ts":3,"dur":1}]})");
  CHECK(partial_overlap(nested).empty());
}

TEST_CASE("chrome trace: time scale, display unit and label") {
  Built b = small_pipeline();
  TraceOptions opt;
  opt.time_scale = 1000;  // costs in milliseconds
  opt.display_time_unit = "ns";
  opt.label = "quote \" backslash \\ newline \n tab \t bell \x07 done";
  const std::string text = write(b.s, b.build(), nullptr, opt);
  const json trace = json::parse(text);
  CHECK(trace.at("displayTimeUnit") == "ns");
  CHECK(trace.at("otherData").at("label") == opt.label);
  CHECK(trace.at("otherData").at("time_scale") == 1000);
  // Unit costs: the makespan in their own unit, and the unit said (6 units drawn as 1000 us each).
  CHECK(trace.at("otherData").at("makespan") == 6);
  CHECK_FALSE(trace.at("otherData").contains("makespan_us"));
  CHECK(trace.at("otherData").at("time_unit") == "the costs' unit, drawn as 1000 us");
  opt.times_in_us = true;
  const json measured = json::parse(write(b.s, b.build(), nullptr, opt));
  CHECK(measured.at("otherData").at("makespan_us") == 6);
  CHECK(measured.at("otherData").at("time_unit") == "us");
  CHECK(slice(trace, "1F0").at("ts").get<double>() == 1500);
  CHECK(slice(trace, "1F0").at("dur").get<double>() == 1000);

  opt.time_scale = 0;
  CHECK_THROWS_AS(write(b.s, b.build(), nullptr, opt), std::invalid_argument);
  opt.time_scale = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_AS(write(b.s, b.build(), nullptr, opt), std::invalid_argument);
  opt.time_scale = 1;
  opt.display_time_unit = "s";
  CHECK_THROWS_AS(write(b.s, b.build(), nullptr, opt), std::invalid_argument);
}

TEST_CASE("chrome trace: a timeline that does not fit its schedule is refused") {
  Built b = small_pipeline();
  Timeline t = b.build();
  Built three(3);
  CHECK_THROWS_AS(write(three.s, t), std::invalid_argument);
  Timeline bad_step = t;
  bad_step.step[2] = 40;
  CHECK_THROWS_AS(write(b.s, bad_step), std::logic_error);
  Timeline one_sided = t;
  one_sided.peer[one_sided.peer[1]] = Timeline::kNone;  // the RECV forgets its SEND
  CHECK_THROWS_AS(write(b.s, one_sided), std::logic_error);
  Timeline short_array = t;
  short_array.peer.pop_back();
  CHECK_THROWS_AS(write(b.s, short_array), std::logic_error);
}

TEST_CASE("chrome trace: a container's slice, and a rank with many stages") {
  Built b(1);
  const Action fb[] = {act(ActionKind::F, 0, 7), act(ActionKind::B, 9, 3)};
  const std::uint32_t group = b.s.sub_actions.add(fb);
  b.run(0, Action::container(ActionKind::OverlapFB, group), 0, 2);
  for (std::uint16_t st = 1; st < 12; ++st) b.run(0, act(ActionKind::F, st, 0), st + 1.0, st + 2.0);
  const json trace = json::parse(write(b.s, b.build()));
  const json o = slice(trace, "(0F7;9B3)OVERLAP_F_B");
  CHECK(o.at("cat") == "compute");
  CHECK(o.at("args") == json::parse(R"({"kind":"OVERLAP_F_B","step":0})"));
  for (const json& e : events(trace, "M"))
    if (e.at("name") == "process_name")
      CHECK(e.at("args").at("name") == "rank 0 (stages 0, 1, 2, 3, 4, 5, 6, 7, ... 12 in all)");
}

TEST_CASE("chrome trace: a larger run parses, pairs every transfer and never overlaps") {
  Built b = synthetic(8, 32);
  const Timeline t = b.build();
  const std::string text = write(b.s, t);
  const json trace = json::parse(text);
  CHECK(events(trace, "X").size() == t.size());
  std::size_t sends = 0;
  for (std::size_t e = 0; e < t.size(); ++e) sends += t.stream[e] == Stream::Send;
  CHECK(sends == 2 * 7 * 32);
  CHECK(events(trace, "s").size() == sends);
  CHECK(events(trace, "f").size() == sends);
  CHECK(partial_overlap(trace).empty());
  // Chunked writing: the same bytes whatever the sink.
  CHECK(text.size() > 65536 * 3);
}

TEST_CASE("chrome trace: an early-posted RECV still gets an arrow that goes forward in time") {
  // rank 1 posts 1RECV_F0 at 0, long before 0F0 ends and 0SEND_F0 posts at 2; the transfer runs
  // [2, 3]. The arrow's ends: inside the SEND where the transfer starts, inside the RECV just
  // before it ends; the midpoints of the two slices would point back in time (2.5 -> 1.5).
  Built b(2);
  b.run(0, act(ActionKind::F, 0, 0), 0, 2).run(0, act(ActionKind::SendF, 0, 0), 2, 3, Stream::Send);
  b.run(1, act(ActionKind::RecvF, 1, 0), 0, 3, Stream::Recv).run(1, act(ActionKind::F, 1, 0), 3, 4);
  const json trace = json::parse(write(b.s, b.build()));
  const auto s = events(trace, "s"), f = events(trace, "f");
  REQUIRE(s.size() == 1);
  REQUIRE(f.size() == 1);
  CHECK(s[0].at("ts").get<double>() <= f[0].at("ts").get<double>());
  CHECK(inside(s[0].at("ts"), slice(trace, "0SEND_F0")));
  CHECK(inside(f[0].at("ts"), slice(trace, "1RECV_F0")));
}

TEST_CASE("chrome trace: a compute-only timeline gets an arrow per transfer between ranks") {
  // 1F1B on 2 ranks, 2 microbatches, no SEND or RECV (a torchtitan CSV): 0F0 -> 1F0, 0F1 -> 1F1,
  // 1B0 -> 0B0, 1B1 -> 0B1, each from inside the producer to inside the consumer, forward.
  Built b(2);
  b.run(0, act(ActionKind::F, 0, 0), 0, 1).run(0, act(ActionKind::F, 0, 1), 1, 2);
  b.run(0, act(ActionKind::B, 0, 0), 5, 7).run(0, act(ActionKind::B, 0, 1), 8, 10);
  b.run(1, act(ActionKind::F, 1, 0), 1, 2).run(1, act(ActionKind::B, 1, 0), 2, 4);
  b.run(1, act(ActionKind::F, 1, 1), 4, 5).run(1, act(ActionKind::B, 1, 1), 5, 7);
  const json trace = json::parse(write(b.s, b.build()));
  const auto s = events(trace, "s"), f = events(trace, "f");
  REQUIRE(s.size() == 4);
  REQUIRE(f.size() == 4);
  const std::map<std::string, std::string> pairs = {{"0F0", "1F0"}, {"0F1", "1F1"}, {"1B0", "0B0"}, {"1B1", "0B1"}};
  for (const auto& [from, to] : pairs) {
    const json producer = slice(trace, from), consumer = slice(trace, to);
    const json* start = nullptr;
    for (const json& e : s)
      if (e.at("pid") == producer.at("pid") && inside(e.at("ts"), producer)) start = &e;
    REQUIRE(start);
    CHECK(start->at("name") == "transfer");
    const json* finish = nullptr;
    for (const json& e : f)
      if (e.at("id") == start->at("id")) finish = &e;
    REQUIRE(finish);
    CHECK(finish->at("pid") == consumer.at("pid"));
    CHECK(inside(finish->at("ts"), consumer));
    CHECK(start->at("ts").get<double>() <= finish->at("ts").get<double>());
  }
  // Ids are unique, and none collides with a SEND/RECV arrow's.
  std::set<long long> ids;
  for (const json& e : s) ids.insert(e.at("id").get<long long>());
  CHECK(ids.size() == 4);
}

TEST_CASE("chrome trace: bound arrows (v2) never point back in time: a RECV's wait is its own slice") {
  // 1RECV_F0 posted at 0, 0SEND_F0 ends at 3 (free transfer): the RECV proper starts at 3, and
  // [0, 3) is drawn as "1RECV_F0 (waiting)".
  Built b(2);
  b.run(0, act(ActionKind::F, 0, 0), 0, 3).run(0, act(ActionKind::SendF, 0, 0), 3, 3, Stream::Send);
  b.run(1, act(ActionKind::RecvF, 1, 0), 0, 3, Stream::Recv).run(1, act(ActionKind::F, 1, 0), 3, 4);
  TraceOptions v2;
  v2.flows = TraceFlows::V2;
  const json trace = json::parse(write(b.s, b.build(), nullptr, v2));
  const json send = slice(trace, "0SEND_F0"), recv = slice(trace, "1RECV_F0"),
             wait = slice(trace, "1RECV_F0 (waiting)");
  CHECK(wait.at("cat") == "wait");
  CHECK(wait.at("ts").get<double>() == 0);
  CHECK(wait.at("dur").get<double>() == 3);
  CHECK(recv.at("flow_in") == true);
  CHECK(send.at("ts").get<double>() + send.at("dur").get<double>() <= recv.at("ts").get<double>());
  CHECK(partial_overlap(trace).empty());
}
