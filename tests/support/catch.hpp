// The one place that includes Catch2, so a move to Catch2 v3 touches one file.
#pragma once
#include <catch2/catch.hpp>
