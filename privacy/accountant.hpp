// Accountant: turns a sequence of DpEvents into an (epsilon, delta) guarantee.
//
// Implementations: RdpAccountant ("rdp", Renyi DP of Mironov 2017 with the Mironov-Talwar-Zhang
// 2019 subsampled-Gaussian analysis), PldAccountant ("pld", privacy loss distributions of
// Koskela et al. 2020 / Doroshenko et al. 2022) and BestAccountant ("best": runs both and reports
// the smaller epsilon; both are valid upper bounds, so their minimum is too; falls back to RDP
// where PLD cannot evaluate).
// Edge behaviour, shared by all: epsilon() is never NaN and never 0 for a degenerate input; when no
// finite bound can be certified (zero or vanishing noise, delta below the truncated tail mass) it
// is +inf.
// Neighbouring relation: add or remove one unit (record, trajectory or expert, as the caller
// defines it). An accountant refuses, with ParamError naming the event, every event it cannot
// account exactly; nothing is composed in that case.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "privacy/dp_event.hpp"

namespace dprl::privacy {

class Accountant {
 public:
  virtual ~Accountant() = default;
  // "rdp", "pld" or "best"; recorded in run summaries.
  virtual std::string name() const = 0;
  // True when compose(event) would succeed.
  virtual bool supports(const DpEvent& event) const = 0;
  // Adds count repetitions of event. Throws ParamError (composing nothing) if unsupported.
  virtual void compose(const DpEvent& event, std::int64_t count = 1) = 0;
  // Smallest epsilon such that everything composed so far is (epsilon, delta)-DP; delta in
  // (0, 1). Returns +inf when no finite epsilon is certified (e.g. zero noise).
  virtual double epsilon(double delta) const = 0;
  virtual std::unique_ptr<Accountant> clone() const = 0;
};

// "rdp", "pld" or "best" ("best" is BestAccountant, best_accountant.hpp); anything else throws
// ParamError listing the valid names (check_accountant_name).
std::unique_ptr<Accountant> make_accountant(std::string_view name);

// Throws ParamError "<what> = '<name>' is unknown (valid: rdp, pld, best)" unless name is one of
// make_accountant's names.
void check_accountant_name(std::string_view name, std::string_view what = "accountant");

// Throws ParamError "<what> = <v> must be in (0, 1)" unless delta is in (0, 1).
void check_delta(double delta, std::string_view what = "delta");

}  // namespace dprl::privacy
