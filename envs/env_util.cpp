#include "envs/env_util.hpp"

#include <fmt/format.h>

#include <cmath>

#include "engine/error.hpp"
#include "engine/params.hpp"

namespace dprl::envs {

void throw_bad_discrete_action(const EnvSpec& spec, std::int64_t action) {
  throw InvalidAction(
      fmt::format("{}: action {} is outside {}", spec.id, action, spec.action.describe()));
}

void check_continuous_action(const EnvSpec& spec, std::span<const double> action) {
  if (action.size() != spec.action.dim())
    throw InvalidAction(fmt::format("{}: action has {} values; {} needs {}", spec.id, action.size(),
                                    spec.action.describe(), spec.action.dim()));
  for (std::size_t i = 0; i < action.size(); ++i)
    if (std::isnan(action[i]))
      throw InvalidAction(fmt::format("{}: action component {} is NaN", spec.id, i));
}

void check_state(const EnvSpec& spec, std::span<const double> s, std::size_t n) {
  if (s.size() != n)
    throw ParamError(fmt::format("{}: state has {} values; expected {}", spec.id, s.size(), n));
  for (std::size_t i = 0; i < n; ++i)
    if (!std::isfinite(s[i]))
      throw ParamError(fmt::format("{}: state component {} is not finite", spec.id, i));
}

std::int64_t check_index_state(const EnvSpec& spec, std::span<const double> s, std::int64_t n) {
  check_state(spec, s, 1);
  const double v = s[0];
  if (v != std::floor(v) || v < 0 || v >= static_cast<double>(n))
    throw ParamError(
        fmt::format("{}: state {} is not an integer in [0, {})", spec.id, format_param(v), n));
  return static_cast<std::int64_t>(v);
}

}  // namespace dprl::envs
