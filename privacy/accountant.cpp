#include "privacy/accountant.hpp"

#include <fmt/format.h>

#include "engine/error.hpp"
#include "privacy/best_accountant.hpp"
#include "privacy/pld_accountant.hpp"
#include "privacy/rdp_accountant.hpp"
#include "privacy/special_math.hpp"

namespace dprl::privacy {

void check_delta(double delta, std::string_view what) {
  if (!(delta > 0.0 && delta < 1.0)) {
    throw ParamError(fmt::format("{} = {} must be in (0, 1)", what, delta));
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

BestAccountant::Parts BestAccountant::epsilon_parts(double delta) const {
  check_delta(delta);
  Parts p{rdp_.epsilon(delta), math::kInf, ""};
  if (pld_.uses_rdp_bound()) {
    p.pld_error = "pld has no proven privacy loss distribution for the discrete Gaussian";
    return p;
  }
  try {
    p.pld = pld_.epsilon(delta);
  } catch (const ParamError& e) {
    p.pld_error = e.what();  // PLD's grid limits; RDP stays a valid bound
  }
  return p;
}

void check_accountant_name(std::string_view name, std::string_view what) {
  if (name != "rdp" && name != "pld" && name != "best") {
    throw ParamError(fmt::format("{} = '{}' is unknown (valid: rdp, pld, best)", what, name));
  }
}

std::unique_ptr<Accountant> make_accountant(std::string_view name) {
  check_accountant_name(name);
  if (name == "rdp") return std::make_unique<RdpAccountant>();
  if (name == "pld") return std::make_unique<PldAccountant>();
  return std::make_unique<BestAccountant>();
}

}  // namespace dprl::privacy
