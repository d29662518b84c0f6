// DpEvent: a description of what a release did to private data, independent of any accountant.
//
// Source: the DpEvent algebra of Google's dp_accounting (python/dp_accounting/dp_event.py).
// Events form a tree:
//   gaussian(z)             Gaussian noise with standard deviation z * (L2 sensitivity)
//   discrete_gaussian(z)    exact discrete Gaussian noise (privacy/secure_sampling.hpp) on a
//                           grid, scale at least z * (snapped L2 sensitivity): proven
//                           (1/(2 z^2))-zCDP (Canonne, Kamath, Steinke 2020, Thm. 14), i.e. RDP
//                           a / (2 z^2) at every order a > 1, like gaussian(z); but its
//                           Poisson-subsampled privacy curve is not the continuous one, so
//                           accountants treat poisson_sampled(q, discrete_gaussian(z)) apart
//   laplace(b)              Laplace noise with scale b * (L1 sensitivity), i.e. (1/b)-DP
//   poisson_sampled(q, e)   e run on a Poisson subsample, each record kept with probability q
//   self_composed(e, n)     e run n times
//   composed({e1, e2, ..})  the events run in sequence (adaptively)
// Neighbouring relation: add or remove one record (the unit of privacy of the caller: record,
// trajectory or expert). Accountants (RdpAccountant, PldAccountant) refuse events they do not
// support with ParamError naming the event, instead of under-counting.
//
// Validation (ParamError, naming parameter and rule): noise_multiplier z >= 0 and finite
// (z = 0 means no noise: infinite epsilon); laplace scale b > 0 and finite; sampling probability
// q in (0, 1]; count >= 1; composed needs at least one event.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dprl::privacy {

class DpEvent {
 public:
  enum class Kind {
    kGaussian,
    kLaplace,
    kPoissonSampled,
    kSelfComposed,
    kComposed,
    kDiscreteGaussian
  };

  static DpEvent gaussian(double noise_multiplier);
  static DpEvent discrete_gaussian(double noise_multiplier);
  static DpEvent laplace(double scale);
  static DpEvent poisson_sampled(double sampling_probability, DpEvent event);
  static DpEvent self_composed(DpEvent event, std::int64_t count);
  static DpEvent composed(std::vector<DpEvent> events);

  Kind kind() const { return kind_; }
  double noise_multiplier() const { return value_; }          // kGaussian, kDiscreteGaussian
  double laplace_scale() const { return value_; }             // kLaplace
  double sampling_probability() const { return value_; }      // kPoissonSampled
  std::int64_t count() const { return count_; }               // kSelfComposed
  const DpEvent& inner() const { return children_.front(); }  // kPoissonSampled, kSelfComposed
  const std::vector<DpEvent>& events() const { return children_; }  // kComposed

  // One-line JSON ({"kind": "gaussian", "noise_multiplier": 1.1} ...), and back. from_json
  // throws DataError on malformed text and ParamError on invalid values.
  std::string to_json() const;
  static DpEvent from_json(std::string_view text);
  // Short human form: "poisson(q=0.001, gaussian(z=0.35)) x 7000".
  std::string describe() const;

  bool operator==(const DpEvent& o) const;

 private:
  DpEvent(Kind kind, double value, std::int64_t count, std::vector<DpEvent> children)
      : kind_(kind), value_(value), count_(count), children_(std::move(children)) {}
  Kind kind_;
  double value_ = 0.0;
  std::int64_t count_ = 1;
  std::vector<DpEvent> children_;
};

// T steps of DP-SGD: self_composed(poisson_sampled(q, gaussian(z)), T); discrete = true uses
// discrete_gaussian(z) (secure noise).
DpEvent dpsgd_event(double noise_multiplier, double sampling_probability, std::int64_t steps,
                    bool discrete = false);

// True when the event holds a discrete_gaussian anywhere (the PLD accountant has no proven
// curve for it when Poisson-subsampled; see pld_accountant.hpp).
bool contains_discrete_gaussian(const DpEvent& event);

}  // namespace dprl::privacy
