#include "privacy/steps_within_budget.hpp"

#include <fmt/format.h>

#include <cmath>

#include "engine/error.hpp"
#include "privacy/accountant.hpp"
#include "privacy/dp_event.hpp"

namespace dprl::privacy {

StepsWithinBudget steps_within_budget(double z, double q, double epsilon_budget, double delta,
                                      std::string_view accountant, std::int64_t max_steps) {
  if (!(z > 0.0) || !std::isfinite(z))
    throw ParamError(fmt::format("noise_multiplier = {} must be finite and > 0", z));
  if (!(q > 0.0 && q <= 1.0))
    throw ParamError(fmt::format("sampling rate q = {} must be in (0, 1]", q));
  if (!(epsilon_budget > 0.0) || !std::isfinite(epsilon_budget))
    throw ParamError(fmt::format("epsilon budget = {} must be finite and > 0", epsilon_budget));
  check_delta(delta);
  if (max_steps < 1) throw ParamError(fmt::format("max_steps = {} must be >= 1", max_steps));
  (void)make_accountant(accountant);  // validates the name before any work

  StepsWithinBudget out;
  auto eps = [&](std::int64_t n) {
    ++out.evaluations;
    auto acc = make_accountant(accountant);
    acc->compose(dpsgd_event(z, q, n));
    return acc->epsilon(delta);
  };
  // invariant: eps(lo) <= budget (lo = 0 means nothing affordable), eps(hi) > budget
  std::int64_t lo = 0, hi = 1;
  double eps_lo = 0.0;
  for (;;) {
    const double e = eps(hi);
    if (!(e <= epsilon_budget)) break;
    lo = hi;
    eps_lo = e;
    if (hi == max_steps) {
      out.steps = lo;
      out.epsilon = eps_lo;
      out.capped = true;
      return out;
    }
    hi = hi > max_steps / 2 ? max_steps : 2 * hi;
  }
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    const double e = eps(mid);
    if (e <= epsilon_budget) {
      lo = mid;
      eps_lo = e;
    } else {
      hi = mid;
    }
  }
  out.steps = lo;
  out.epsilon = eps_lo;
  return out;
}

}  // namespace dprl::privacy
