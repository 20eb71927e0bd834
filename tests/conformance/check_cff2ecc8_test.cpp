// The validator on the second corpus's negative cases (tests/conformance/pytorch-cff2ecc8/negative):
// compute_comms runtime orders, UNSHARD/RESHARD/REDUCE_GRAD included, each with one communication
// mutation, and the two orders of pytorch/pytorch#172668. Every one must be flagged by the rule its
// mutation calls for. PyTorch's own simulator cannot judge most of them (it raises on the FSDP
// actions), so the expected rule comes from the mutation, as in check_test.cpp. The deadlock rule
// is then compared with the harness's dry runs of the same orders under three send semantics.
#include <iostream>
#include <map>
#include <optional>
#include <set>

#include "check/check.hpp"
#include "parse/pytorch_csv.hpp"
#include "support/catch.hpp"
#include "support/corpus.hpp"
#include "support/corpus_check.hpp"

using namespace ppsched;
using namespace ppsched::test;

namespace {

// What the validator reports for a file, checked against the manifest entry's sizes and placement:
// the rule ids of its errors, and the notes of its deadlock findings ("rank 0 waits at 0RECV_B0 for
// ..."), one per stuck action.
struct Findings {
  std::set<std::string> rules;
  std::vector<std::string> deadlock_notes;
  bool waits_at(std::size_t rank, const std::string& action) const {
    const std::string head = "rank " + std::to_string(rank) + " waits at " + action + " ";
    for (const auto& n : deadlock_notes)
      if (n.rfind(head, 0) == 0) return true;
    return false;
  }
};

Findings reported(const std::filesystem::path& file, const nlohmann::json& cfg) {
  Findings out;
  for (const auto& d : corpus_errors(file, cfg)) {
    out.rules.insert(d.rule);
    if (d.rule == "deadlock")
      for (const auto& n : d.notes) out.deadlock_notes.push_back(n.message);
  }
  return out;
}

std::string expected_rule(const std::string& mutation) {
  static const std::map<std::string, std::string> kRule = {
      {"drop_recv", "send-without-recv"},
      {"drop_send", "recv-without-send"},
      {"duplicate_send", "duplicate-action"},
      {"recv_before_send_deadlock", "deadlock"},
      {"send_before_compute", "send-before-compute"},
      // Every RECV deferred to its consumer without PyTorch's rank-parity flush, and that order with
      // SEND/RECV swapped on odd ranks: both hang across nodes (the issue), a SEND waiting for a
      // RECV its peer posts only after its own SEND.
      {"issue172668_defer_without_rank_parity", "deadlock"},
      {"issue172668_odd_ranks_recv_first", "deadlock"},
  };
  auto it = kRule.find(mutation);
  return it == kRule.end() ? "" : it->second;
}

// Where the ranks of the #172668 orders hang: the SENDs the harness's send_rendezvous dry run
// reports blocked (its chain, trimmed from the manifest), each inside the fragment of actions
// the issue's reporter saw that rank stuck at.
const std::map<std::string, std::vector<std::string>> kIssueStuckSends = {
    {"issue172668_defer_without_rank_parity", {"0SEND_F1", "1SEND_F0"}},
    {"issue172668_odd_ranks_recv_first", {"0SEND_F2", "3SEND_B0"}},
};

// The action a recv_before_send_deadlock moved ("moved 0RECV_B0 on rank 0 from index 7 to index 0 ...").
std::string moved_action(const nlohmann::json& n) {
  const std::string detail = n["mutation_detail"];
  const std::size_t b = detail.find("moved ") + 6;
  return detail.substr(b, detail.find(' ', b) - b);
}

// The rules reported for the config a negative was made from (its compute_comms order, unmutated),
// or nullopt when the manifest has no such file.
std::optional<std::set<std::string>> base_rules(const nlohmann::json& n) {
  for (const auto& c : cff2ecc8_manifest()["configs"])
    if (c["id"] == n["base_config"] && c["files"].contains("compute_comms"))
      return reported(cff2ecc8_file(c["files"]["compute_comms"]), c).rules;
  return std::nullopt;
}

bool harness_deadlock(const nlohmann::json& n, const char* model) {
  return n["harness_rendezvous_check"][model]["deadlock"].get<bool>();
}

}  // namespace

TEST_CASE("the cff2ecc8 conformance corpus: every negative case is flagged by the rule its mutation calls for") {
  const auto cases = cff2ecc8_negative_cases();
  std::size_t total = 0, flagged = 0, right_rule = 0, base_deadlocks = 0;
  std::map<std::string, std::size_t> per_mutation, also_reported;
  for (const auto& n : cases) {
    const std::string mutation = n["mutation"];
    const std::string want = expected_rule(mutation);
    INFO(n["id"].get<std::string>() << " expects " << want);
    REQUIRE_FALSE(want.empty());  // a mutation this test does not know
    ++total;
    const auto found = reported(cff2ecc8_dir() / "negative" / n["file"].get<std::string>(), n);
    const auto& ids = found.rules;
    CHECK_FALSE(ids.empty());
    CHECK(ids.count(want) == 1);
    flagged += !ids.empty();
    right_rule += ids.count(want);
    per_mutation[mutation] += ids.count(want);
    for (const auto& id : ids)
      if (id != want) ++also_reported[id];
    if (mutation == "recv_before_send_deadlock") {
      // The deadlock must be the mutation's, not one its config already had: the rule flags some
      // dpr1 base orders (docs/rules.md "Send semantics"), which would meet the expectation by
      // themselves. So the moved RECV must be one of the stuck actions.
      const std::uint32_t rank = n["stage_to_rank"][0];
      CHECK(found.waits_at(rank, moved_action(n)));
      auto base = base_rules(n);
      if (base && base->count("deadlock")) ++base_deadlocks;
    }
    if (auto it = kIssueStuckSends.find(mutation); it != kIssueStuckSends.end())
      for (std::size_t rank = 0; rank < it->second.size(); ++rank) CHECK(found.waits_at(rank, it->second[rank]));
  }
  std::cout << "conformance (PyTorch cff2ecc8): " << flagged << "/" << total << " negative cases flagged, "
            << right_rule << " by the expected rule (" << cases.size() << " stored of the full corpus's "
            << cff2ecc8_manifest()["counts"]["negative_files_in_full_corpus"] << ")\n";
  for (const auto& [m, count] : per_mutation)
    std::cout << "  " << m << ": " << count << " by " << expected_rule(m) << "\n";
  for (const auto& [id, count] : also_reported) std::cout << "  also reported: " << id << " x" << count << "\n";
  std::cout << "  recv_before_send_deadlock whose base order is already flagged deadlock: " << base_deadlocks
            << " (each still stuck at its moved RECV)\n";
  CHECK(total > 0);
  CHECK(flagged == total);
  CHECK(right_rule == total);
}

// The harness's dry runs (negatives_new.rendezvous_check, not PyTorch's) judge each negative under
// three send semantics. The deadlock rule's model (docs/rules.md "Send semantics": rendezvous sends,
// a rank's SENDs and RECVs in program order) is at least as strict as NCCL's per-pair streams, so
// every order that hangs there must be flagged. The harness's send_rendezvous model also runs a
// rank's computes in the same queue as its SEND/RECV, so a SEND ahead of its producing compute
// blocks that rank forever; the validator reports that order as send-before-compute (the SEND comes
// before the data it sends exists), and its deadlock rule, like NCCL's streams, lets the compute run
// and the SEND follow: counted apart, not a miss.
TEST_CASE(
    "the cff2ecc8 conformance corpus: the deadlock rule flags every negative the harness's NCCL pair-stream dry run "
    "hangs on") {
  std::size_t pair_hangs = 0, pair_flagged = 0, stricter = 0;
  std::size_t rendezvous_hangs = 0, rendezvous_flagged = 0, rendezvous_send_before_compute = 0;
  std::size_t early_recv_no_rendezvous_hang = 0, early_recv_flagged = 0;
  for (const auto& n : cff2ecc8_negative_cases()) {
    INFO(n["id"].get<std::string>());
    const auto ids = reported(cff2ecc8_dir() / "negative" / n["file"].get<std::string>(), n).rules;
    const bool deadlock = ids.count("deadlock") == 1;
    if (harness_deadlock(n, "nccl_pair_streams")) {
      ++pair_hangs;
      pair_flagged += deadlock;
      CHECK(deadlock);
    } else {
      stricter += deadlock;
    }
    if (harness_deadlock(n, "send_rendezvous")) {
      ++rendezvous_hangs;
      rendezvous_flagged += deadlock;
      if (!deadlock) {
        CHECK(n["mutation"] == "send_before_compute");
        CHECK(ids.count("send-before-compute") == 1);
        ++rendezvous_send_before_compute;
      }
    } else if (n["mutation"] == "recv_before_send_deadlock") {
      // A RECV moved first is only posted under send_rendezvous, so that model finishes; NCCL runs
      // it in order on the pair's stream, where it waits for a SEND queued behind the peer's RECV.
      ++early_recv_no_rendezvous_hang;
      early_recv_flagged += deadlock;
      CHECK(deadlock);
    }
  }
  std::cout << "conformance (PyTorch cff2ecc8): deadlock rule vs the harness's dry runs: " << pair_flagged << "/"
            << pair_hangs << " NCCL pair-stream hangs flagged (" << stricter
            << " more flagged, the rule being stricter); " << rendezvous_flagged << "/" << rendezvous_hangs
            << " send-rendezvous hangs flagged, " << rendezvous_send_before_compute
            << " reported as send-before-compute instead; " << early_recv_flagged << "/"
            << early_recv_no_rendezvous_hang
            << " recv_before_send_deadlock cases that send_rendezvous finishes flagged deadlock\n";
  CHECK(pair_hangs > 0);
  CHECK(pair_flagged == pair_hangs);
}
