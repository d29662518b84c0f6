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
// Argument order: the sampling probability comes before the event it samples (poisson_sampled(q,
// e)), and every low-level helper taking both takes (q, z) in that order
// (rdp_subsampled_gaussian, pld_subsampled_gaussian, subsampled_gaussian_curve). The DP-SGD entry
// points (dpsgd_event, dpsgd_epsilon, rdp_dpsgd_epsilon) take a DpsgdSpec with named fields
// instead, so that z and q, two adjacent doubles, cannot be swapped silently.
// Accessors are checked against the kind: noise_multiplier() on a laplace event, say, throws
// std::logic_error naming both kinds (a bug in the caller, not bad input). children() is the
// unchecked view for code that walks the tree.
#pragma once

#include <cmath>
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
  // Each accessor names the kinds it belongs to and throws std::logic_error on any other.
  double noise_multiplier() const;             // kGaussian, kDiscreteGaussian
  double laplace_scale() const;                // kLaplace
  double sampling_probability() const;         // kPoissonSampled
  std::int64_t count() const;                  // kSelfComposed
  const DpEvent& inner() const;                // kPoissonSampled, kSelfComposed
  const std::vector<DpEvent>& events() const;  // kComposed
  // The sub-events of any kind: none for a leaf, the inner event of poisson_sampled and
  // self_composed, the list of composed.
  const std::vector<DpEvent>& children() const { return children_; }

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

// The kind's name as in JSON ("gaussian", "poisson_sampled", ...).
std::string_view kind_name(DpEvent::Kind kind);

// T steps of DP-SGD, by field name:
//   dpsgd_event(DpsgdSpec{.noise_multiplier = 1.1, .sampling_rate = 0.01, .steps = 1000})
// An omitted number is NaN or 0 and fails validate().
struct DpsgdSpec {
  double noise_multiplier = NAN;  // z = sigma / C
  double sampling_rate = NAN;     // Poisson rate q of the sampled unit
  std::int64_t steps = 0;         // T
  bool discrete = false;          // discrete_gaussian(z), the secure noise
  // ParamError naming the field: noise_multiplier finite and >= 0 (0: no noise, epsilon +inf),
  // sampling_rate in (0, 1], steps >= 1.
  void validate() const;
};

// self_composed(poisson_sampled(q, gaussian(z)), T), or discrete_gaussian(z) when
// spec.discrete; validates the spec first.
DpEvent dpsgd_event(const DpsgdSpec& spec);

// True when the event holds a discrete_gaussian anywhere (the PLD accountant has no proven
// curve for it when Poisson-subsampled; see pld_accountant.hpp).
bool contains_discrete_gaussian(const DpEvent& event);

}  // namespace dprl::privacy
