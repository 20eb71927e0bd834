// The faces of PyTorch's lock-step dry run (sim/pytorch_steps.hpp), as `simulate --model
// pytorch-steps` prints them. Text: PyTorch's step grid, then the step count:
//
//           Rank 0   Rank 1
//   Step 0: 0F0
//   Step 1: 0SEND_F0 1RECV_F0
//   Step 2:          1F0
//   steps: 3 (PyTorch's _simulate_comms_compute: one step per action, an empty cell where a rank waits)
//
// JSON: {"steps": N, "timeline": [[cell or null per step] per rank]}, the two members simulate adds
// to its document. A deadlock: PyTorch's verdict, the partial grid and each stuck rank's next action.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

#include "io/byte_sink.hpp"
#include "ir/schedule.hpp"
#include "sim/pytorch_steps.hpp"

namespace ppsched {

/// The number of lock steps: the longest rank of the simulated timeline.
std::size_t lock_step_count(const Schedule& timeline);

/// The text face, written to `out` as it is formatted; steps_text returns it whole.
void write_steps_text(const Schedule& timeline, ByteSink& out);
std::string steps_text(const Schedule& timeline);
/// Adds "steps" and "timeline" to `doc`.
void add_steps_json(const Schedule& timeline, nlohmann::ordered_json& doc);
/// The error text for a lock-step deadlock of `s` (the schedule that was simulated).
std::string steps_deadlock_text(const SimDeadlock& d, const Schedule& s);

}  // namespace ppsched
