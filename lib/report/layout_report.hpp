// The faces of `ppsched tune --gpus N` (tune/layouts.hpp): a ranked table of layouts, each with
// the best schedule of its pipeline, and the same as JSON.
//
//   # ppsched tune: 64 GPUs (8 per node) of h100, global batch 512 x 8192 tokens, memory cap 72.0 GiB per GPU
//   rank  layout                    schedule             iteration  tokens/s/GPU    MFU      peak  verdict
//      1  pp1 tp1 dp64 FSDP         1F1B v=1 m=4 b=2      54.69 s         1198  55.1%  50.0 GiB  best
//
// A rank is given only to the layouts that fit; the verdict says why each lost to the best.
#pragma once

#include <string>

#include "report/tune_report.hpp"
#include "tune/layouts.hpp"

namespace ppsched {

std::string layout_text(const LayoutRequest& request, const TuneSources& sources, const LayoutResult& result);
std::string layout_json(const LayoutRequest& request, const TuneSources& sources, const LayoutResult& result);

}  // namespace ppsched
