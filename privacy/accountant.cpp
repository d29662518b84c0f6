#include "privacy/accountant.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "engine/error.hpp"
#include "privacy/best_accountant.hpp"
#include "privacy/special_math.hpp"

namespace dprl::privacy {

void check_delta(double delta, std::string_view what) {
  if (!(delta > 0.0 && delta < 1.0)) {
    throw ParamError(fmt::format("{} = {} must be in (0, 1)", what, delta));
  }
}

void check_epsilon(double epsilon, std::string_view what) {
  if (!(epsilon >= 0.0) || !std::isfinite(epsilon)) {
    throw ParamError(fmt::format("{} = {} must be finite and >= 0", what, epsilon));
  }
}

void BestAccountant::compose(const DpEvent& e, std::int64_t count) {
  if (!supports(e)) {
    throw ParamError(fmt::format(
        "best accountant does not support event {} (it must be supported by both rdp and pld)",
        e.describe()));
  }
  rdp_.compose(e, count);
  pld_.compose(e, count);
}

namespace {

// Both accountants' figure: RDP's, and PLD's unless it has no proven curve for what was composed
// or cannot evaluate it (then `vacuous`, the figure that says nothing, and why).
template <class PldFigure>
BestAccountant::Parts best_parts_of(double rdp, double vacuous, const PldAccountant& pld,
                                 PldFigure pld_figure) {
  BestAccountant::Parts p{rdp, vacuous, ""};
  if (pld.uses_rdp_bound()) {
    p.pld_error = "pld has no proven privacy loss distribution for the discrete Gaussian";
    return p;
  }
  try {
    p.pld = pld_figure();
  } catch (const ParamError& e) {
    p.pld_error = e.what();  // PLD's grid limits; RDP stays a valid bound
  }
  return p;
}

}  // namespace

BestAccountant::Parts BestAccountant::epsilon_parts(double delta) const {
  check_delta(delta);
  return best_parts_of(rdp_.epsilon(delta), math::kInf, pld_, [&] { return pld_.epsilon(delta); });
}

BestAccountant::Parts BestAccountant::delta_parts(double epsilon) const {
  check_epsilon(epsilon);
  return best_parts_of(rdp_.delta(epsilon), 1.0, pld_, [&] { return pld_.delta(epsilon); });
}

AccountantRegistry& accountant_registry() {
  static AccountantRegistry* r = [] {
    auto* reg = new AccountantRegistry("accountant");
    register_builtin_accountants(*reg);
    return reg;
  }();
  return *r;
}

std::string accountant_names(std::string_view sep) {
  return fmt::format("{}", fmt::join(accountant_registry().names(), sep));
}

Choices accountant_choices() {
  Choices c;
  for (const auto& e : accountant_registry().entries()) c.names.push_back(e.name);
  return c;
}


void check_accountant_name(std::string_view name, std::string_view what) {
  if (!accountant_registry().find(name)) {
    throw ParamError(
        fmt::format("{} = '{}' is unknown (valid: {})", what, name, accountant_names()));
  }
}

std::unique_ptr<Accountant> make_accountant(std::string_view name) {
  check_accountant_name(name);
  return accountant_registry().make(name);
}

}  // namespace dprl::privacy
