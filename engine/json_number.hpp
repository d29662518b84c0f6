// A double as dprl's JSON files write it. JSON has no infinity, so +inf and -inf are the strings
// "inf" and "-inf" (the readers of summaries, metrics and parameters take them back); NaN, which
// no well-formed result holds, is null.
// Internal: exposes nlohmann types, so it is not installed (DPRL_INTERNAL_HEADERS).
#pragma once

#include <cmath>
#include <nlohmann/json.hpp>

namespace dprl {

inline nlohmann::ordered_json json_number(double v) {
  if (std::isnan(v)) return nullptr;
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

}  // namespace dprl
