// What the timed simulator needs besides the schedule: its options (costs, comm model) and the
// memory model. Built by the commands from flags and files (app/sim_inputs.cpp), and by the tune
// engine per placement; consumed by simulate_timed/simulate_aggregates and the automatic search.
#pragma once

#include "sim/memory.hpp"
#include "sim/timed.hpp"

namespace ppsched {

struct SimInputs {
  TimedOptions sim;
  MemoryModel memory;
};

}  // namespace ppsched
