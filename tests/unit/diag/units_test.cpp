// human_bytes: sizes as people read them.
#include "diag/units.hpp"

#include "support/catch.hpp"

using namespace ppsched;

TEST_CASE("human_bytes: binary units, three significant digits") {
  CHECK(human_bytes(0) == "0 B");
  CHECK(human_bytes(512) == "512 B");
  CHECK(human_bytes(1023) == "1023 B");
  CHECK(human_bytes(1024) == "1.00 KiB");
  CHECK(human_bytes(1536) == "1.50 KiB");
  CHECK(human_bytes(2.6e9) == "2.42 GiB");
  CHECK(human_bytes(17179869184.0) == "16.0 GiB");  // the 1.71799e+10
  CHECK(human_bytes(9.0454e10) == "84.2 GiB");
  CHECK(human_bytes(300.0 * (1ull << 30)) == "300 GiB");
  CHECK(human_bytes(1023.9 * (1ull << 20)) == "1.00 GiB");  // rounds up into the next unit
  CHECK(human_bytes(-2048) == "-2.00 KiB");
  CHECK(human_bytes(3.0 * (1ull << 40)) == "3.00 TiB");
}
