// The text of a preparation that PyTorch's passes rejected (sim/prepare.hpp): what asked for the
// lowering, PyTorch's verdict, its step grid with the failing step marked where PyTorch prints
// one, and each stuck rank's action.
#pragma once

#include <string>

#include "sim/prepare.hpp"

namespace ppsched {

/// "cannot lower the schedule (WHY): VERDICT" and the rest, for one error message.
std::string preparation_error_text(const PreparationError& e);

}  // namespace ppsched
