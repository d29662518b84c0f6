#include "privacy/calibration.hpp"

#include <fmt/format.h>

#include <cmath>

#include "engine/error.hpp"
#include "privacy/accountant.hpp"
#include "privacy/dp_event.hpp"
#include "privacy/root_finding.hpp"

namespace dprl::privacy {

double dpsgd_epsilon(const DpsgdSpec& spec, double delta, std::string_view accountant) {
  spec.validate();
  check_delta(delta);
  auto acc = make_accountant(accountant);
  acc->compose(dpsgd_event(spec));
  return acc->epsilon(delta);
}

void CalibrationSpec::validate() const {
  if (!(target_epsilon > 0.0) || !std::isfinite(target_epsilon)) {
    throw ParamError(
        fmt::format("calibration: target_epsilon = {} must be finite and > 0", target_epsilon));
  }
  check_delta(delta, "calibration: delta");
  if (!(sampling_rate > 0.0 && sampling_rate <= 1.0)) {
    throw ParamError(
        fmt::format("calibration: sampling_rate = {} must be in (0, 1]", sampling_rate));
  }
  if (steps < 1) throw ParamError(fmt::format("calibration: steps = {} must be >= 1", steps));
}

double calibrate_noise_multiplier(const CalibrationSpec& spec, std::string_view accountant,
                                  double rel_tol) {
  spec.validate();
  if (!(rel_tol > 0.0 && rel_tol <= 0.1)) {
    throw ParamError(fmt::format("rel_tol = {} must be in (0, 0.1]", rel_tol));
  }
  (void)make_accountant(accountant);  // validates the name before any work
  const double target = spec.target_epsilon, q = spec.sampling_rate, delta = spec.delta;
  const std::int64_t steps = spec.steps;
  auto eps = [&](double z) {
    return dpsgd_epsilon({.noise_multiplier = z, .sampling_rate = q, .steps = steps}, delta,
                         accountant);
  };
  constexpr double kMaxZ = 1e6, kMinZ = 1e-6;
  auto meets = [&](double z) { return eps(z) <= target; };  // NaN: not met
  const auto b = bracket_geometric(meets, 1.0, kMinZ, kMaxZ);
  if (!b) {
    throw ParamError(
        fmt::format("no noise multiplier <= {} reaches epsilon = {} (q = {}, T = {}, delta = {})",
                    kMaxZ, target, q, steps, delta));
  }
  if (b->lo == 0.0) return b->hi;  // target reachable with (almost) no noise
  // residual log(epsilon / target): positive at lo, <= 0 at hi; Illinois steps use its values
  auto f = [&](double z) {
    const double e = eps(z);
    return e <= 0.0 ? -1e300 : std::log(e / target);
  };
  RootOptions opt;
  opt.rel_tol = rel_tol;
  opt.illinois = true;
  opt.max_steps = 200;
  return find_boundary(f, b->lo, b->hi, opt).hi;
}

std::int64_t steps_within_budget(const DpEvent& step, double budget, double delta,
                                 const Accountant& spent, std::int64_t max_steps) {
  if (!(budget > 0.0) || !std::isfinite(budget)) {
    throw ParamError(fmt::format("budget epsilon = {} must be finite and > 0", budget));
  }
  check_delta(delta);
  if (max_steps < 0) throw ParamError(fmt::format("max_steps = {} must be >= 0", max_steps));
  if (!spent.supports(step)) {
    throw ParamError(
        fmt::format("accountant {} does not support event {}", spent.name(), step.describe()));
  }
  // n more steps exceed the budget: monotone in n. A NaN epsilon, and a composition the
  // accountant refuses to evaluate (PLD's grid limits, reached only beyond some n), count as
  // exceeding: only a certified epsilon <= budget fits.
  auto exceeds = [&](double n) {
    auto acc = spent.clone();
    try {
      if (n >= 1.0) acc->compose(step, static_cast<std::int64_t>(n));
      return !(acc->epsilon(delta) <= budget);
    } catch (const ParamError&) {
      return true;
    }
  };
  if (max_steps == 0 || exceeds(0.0)) return 0;
  // the first power of two that exceeds, from 1 up (cheap evaluations first)
  const double cap = static_cast<double>(max_steps);
  double lo, hi;
  if (const auto b = bracket_geometric(exceeds, 1.0, 1.0, cap)) {
    if (b->hi <= 1.0) return 0;
    lo = b->lo;
    hi = b->hi;
  } else {
    if (!exceeds(cap)) return max_steps;
    lo = std::ldexp(1.0, std::ilogb(cap));  // the largest power of two tried: it fits
    hi = cap;
  }
  RootOptions opt;
  opt.integers = true;
  return static_cast<std::int64_t>(
      find_boundary([&](double n) { return exceeds(n) ? -1.0 : 1.0; }, lo, hi, opt).lo);
}

std::int64_t steps_within_budget(const DpEvent& step, double budget, double delta,
                                 std::string_view accountant, std::int64_t max_steps) {
  return steps_within_budget(step, budget, delta, *make_accountant(accountant), max_steps);
}

}  // namespace dprl::privacy
