#include "privacy/accountant.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "engine/error.hpp"
#include "privacy/pld_accountant.hpp"
#include "privacy/rdp_accountant.hpp"

namespace dprl::privacy {

void check_delta(double delta, std::string_view what) {
  if (!(delta > 0.0 && delta < 1.0)) {
    throw ParamError(fmt::format("{} = {} must be in (0, 1)", what, delta));
  }
}

namespace {

// Runs RDP and PLD side by side and reports the smaller epsilon (both are valid bounds).
class BestAccountant final : public Accountant {
 public:
  std::string name() const override { return "best"; }
  bool supports(const DpEvent& e) const override { return rdp_.supports(e) && pld_.supports(e); }
  void compose(const DpEvent& e, std::int64_t count) override {
    if (!supports(e)) {
      throw ParamError(fmt::format(
          "best accountant does not support event {} (it must be supported by both rdp and pld)",
          e.describe()));
    }
    rdp_.compose(e, count);
    pld_.compose(e, count);
  }
  double epsilon(double delta) const override {
    return std::min(rdp_.epsilon(delta), pld_.epsilon(delta));
  }
  std::unique_ptr<Accountant> clone() const override {
    return std::make_unique<BestAccountant>(*this);
  }

 private:
  RdpAccountant rdp_;
  PldAccountant pld_;
};

}  // namespace

std::unique_ptr<Accountant> make_accountant(std::string_view name) {
  if (name == "rdp") return std::make_unique<RdpAccountant>();
  if (name == "pld") return std::make_unique<PldAccountant>();
  if (name == "best") return std::make_unique<BestAccountant>();
  throw ParamError(fmt::format("accountant = '{}' is unknown (valid: rdp, pld, best)", name));
}

}  // namespace dprl::privacy
