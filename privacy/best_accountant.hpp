// BestAccountant ("best"): composes every event into an RdpAccountant and a PldAccountant and
// reports the smaller epsilon. Both are valid upper bounds under add/remove-one adjacency, so their
// minimum is too.
// When the PLD accountant cannot evaluate a composition (its loss grid would exceed its limits,
// which happens for very small noise multipliers or astronomically many steps; see
// pld_accountant.hpp) it throws ParamError; "best" then takes +inf for PLD and so reports RDP's
// epsilon, and epsilon_parts() says why. With a discrete_gaussian event composed (secure noise),
// PLD has no proven curve and "best" is the RDP bound (pld_error says so). Events must be supported
// by both accountants (ParamError otherwise, composing nothing).
// delta(epsilon) is the smaller of both deltas, with the same fallback (PLD's delta counts as 1
// where it cannot evaluate); delta_parts() returns both.
#pragma once

#include <memory>
#include <string>

#include "privacy/accountant.hpp"
#include "privacy/pld_accountant.hpp"
#include "privacy/rdp_accountant.hpp"

namespace dprl::privacy {

class BestAccountant final : public Accountant {
 public:
  // Both accountants' figure (an epsilon, or a delta for delta_parts).
  struct Parts {
    double rdp;             // RDP's figure
    double pld;             // PLD's; +inf (epsilon) or 1 (delta) when PLD could not evaluate
    std::string pld_error;  // why PLD could not evaluate ("" when it did)
    double best() const { return rdp < pld ? rdp : pld; }
  };

  std::string name() const override { return "best"; }
  bool supports(const DpEvent& e) const override { return rdp_.supports(e) && pld_.supports(e); }
  void compose(const DpEvent& e, std::int64_t count = 1) override;
  double epsilon(double delta) const override { return epsilon_parts(delta).best(); }
  Parts epsilon_parts(double delta) const;
  double delta(double epsilon) const override { return delta_parts(epsilon).best(); }
  Parts delta_parts(double epsilon) const;
  std::unique_ptr<Accountant> clone() const override {
    return std::make_unique<BestAccountant>(*this);
  }

 private:
  RdpAccountant rdp_;
  PldAccountant pld_;
};

}  // namespace dprl::privacy
