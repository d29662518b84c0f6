// Accountant: turns a sequence of DpEvents into an (epsilon, delta) guarantee.
//
// Implementations: RdpAccountant ("rdp", Renyi DP of Mironov 2017 with the Mironov-Talwar-Zhang
// 2019 subsampled-Gaussian analysis), PldAccountant ("pld", privacy loss distributions of
// Koskela et al. 2020 / Doroshenko et al. 2022) and BestAccountant ("best": runs both and reports
// the smaller epsilon; both are valid upper bounds, so their minimum is too; falls back to RDP
// where PLD cannot evaluate).
// Edge behaviour, shared by all: epsilon() is never NaN and never 0 for a degenerate input; when no
// finite bound can be certified (zero or vanishing noise, delta below the truncated tail mass) it
// is +inf. delta(epsilon) is the other side of the same curve: never NaN, 1 when nothing smaller is
// certified.
// Neighbouring relation: add or remove one unit (record, trajectory or expert, as the caller
// defines it). An accountant refuses, with ParamError naming the event, every event it cannot
// account exactly; nothing is composed in that case.
// Registry: accountants are made by name from accountant_registry(), filled from one explicit list
// (register_builtin_accountants, privacy/register_accountants.cpp). A new accountant is its file
// pair plus one line there: make_accountant, check_accountant_name, the `accountant` parameter of
// every private learner, `dprl privacy --accountant` and the Python module take their names and
// help from the registry. A program embedding dprl may add its own with
// accountant_registry().add(accountant_entry<MyAccountant>(...)).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/params.hpp"
#include "engine/registry.hpp"
#include "privacy/dp_event.hpp"

namespace dprl::privacy {

class Accountant {
 public:
  virtual ~Accountant() = default;
  // Its registry name ("rdp", "pld", "best", ...); recorded in run summaries.
  virtual std::string name() const = 0;
  // True when compose(event) would succeed.
  virtual bool supports(const DpEvent& event) const = 0;
  // Adds count repetitions of event. Throws ParamError (composing nothing) if unsupported.
  virtual void compose(const DpEvent& event, std::int64_t count = 1) = 0;
  // Smallest epsilon such that everything composed so far is (epsilon, delta)-DP; delta in
  // (0, 1). Returns +inf when no finite epsilon is certified (e.g. zero noise).
  virtual double epsilon(double delta) const = 0;
  // Smallest delta such that everything composed so far is (epsilon, delta)-DP; epsilon finite and
  // >= 0 (ParamError otherwise). 0 when nothing is composed, 1 when nothing smaller is certified
  // (e.g. zero noise). The inverse of epsilon(): epsilon(delta(e)) <= e up to rounding.
  virtual double delta(double epsilon) const = 0;
  virtual std::unique_ptr<Accountant> clone() const = 0;
};

using AccountantRegistry = Registry<Accountant>;

// The process-wide registry, filled with the built-in accountants on first use.
AccountantRegistry& accountant_registry();
// Adds the built-in accountants to r (what accountant_registry() does once): rdp, pld, best.
void register_builtin_accountants(AccountantRegistry& r);

// The parameters of an accountant made without any: a parameter given to it is refused by name.
struct NoAccountantParams {
  template <class V>
  void visit(V&) {}
};

// A registry entry for accountant A, constructed without parameters.
template <class A>
AccountantRegistry::Entry accountant_entry(std::string name, std::string summary,
                                           std::string reference) {
  AccountantRegistry::Entry e;
  e.name = name;
  e.summary = std::move(summary);
  e.reference = std::move(reference);
  e.make = [name](const ParamMap& m) -> std::unique_ptr<Accountant> {
    (void)read_params<NoAccountantParams>(m, name);
    return std::make_unique<A>();
  };
  e.describe = [] { return std::vector<ParamInfo>{}; };
  return e;
}

// The registered names joined by sep: "rdp, pld, best" (" | " for help text).
std::string accountant_names(std::string_view sep = ", ");
// The registered names as a parameter's choices (engine/params.hpp); the views point into the
// registry, so use them at once (a visit), never keep them.
Choices accountant_choices();

// A registered accountant ("best" is BestAccountant, best_accountant.hpp); anything else throws
// ParamError listing the valid names (check_accountant_name).
std::unique_ptr<Accountant> make_accountant(std::string_view name);

// Throws ParamError "<what> = '<name>' is unknown (valid: rdp, pld, best)" unless name is
// registered.
void check_accountant_name(std::string_view name, std::string_view what = "accountant");

// Throws ParamError "<what> = <v> must be in (0, 1)" unless delta is in (0, 1).
void check_delta(double delta, std::string_view what = "delta");

// Throws ParamError "<what> = <v> must be finite and >= 0" unless epsilon is.
void check_epsilon(double epsilon, std::string_view what = "epsilon");

}  // namespace dprl::privacy
