#include "tools/cli_util.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "engine/error.hpp"

namespace dprl::cli {

ParamMap parse_param_flags(const std::vector<std::string>& flags, const std::string& flag) {
  ParamMap out;
  for (const auto& f : flags) {
    const auto eq = f.find('=');
    if (eq == std::string::npos || eq == 0)
      throw ParamError(fmt::format("{} {}: expected name=value", flag, f));
    param_map_set(out, f.substr(0, eq), {f.substr(eq + 1), fmt::format("{} {}", flag, f)});
  }
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace dprl::cli
