#include "privacy/rdp_accountant.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/error.hpp"
#include "privacy/special_math.hpp"

namespace dprl::privacy {

using math::kInf;

const std::vector<double>& default_rdp_orders() {
  static const std::vector<double> orders = [] {
    std::vector<double> o;
    for (int x = 1; x < 100; ++x) o.push_back(1.0 + x / 10.0);
    for (int a = 11; a < 64; ++a) o.push_back(a);
    for (double a : {128.0, 256.0, 512.0, 1024.0}) o.push_back(a);
    return o;
  }();
  return orders;
}

namespace {

// log(e^e - 1) for e = (i^2 - i) / (2 z^2) >= 0, also where e underflows (huge z): there
// log(i^2 - i) - log 2 - 2 log z, computed without forming e.
double log_expm1_exponent(double i, double inv_2z2, double log_z) {
  const double e = (i * i - i) * inv_2z2;
  if (e > 40.0) return e + std::log1p(-std::exp(-e));
  if (e > 1e-300) return std::log(std::expm1(e));
  return std::log(i * i - i) - M_LN2 - 2.0 * log_z;  // expm1(e) = e (1 + e/2 + ...), e < 1e-300
}

// log of A_a = 1 + sum_{i >= 2} C(a,i) q^i (1-q)^(a-i) w_i for integer a >= 2, a sum of
// positive terms taken in log space, so log A_a = log1p(A_a - 1) keeps its relative accuracy
// where A_a - 1 is far below the rounding of 1 (large z), instead of rounding to 0 there.
// Weights: w_i = e^((i^2 - i) / (2 z^2)) - 1 gives the exact binomial sum of the subsampled
// Gaussian (the binomial weights sum to 1); zhu_wang = true gives w_i = 3 e^((i^2 - i) / (2 z^2))
// - 1 for i >= 3, the generic bound (log_a_zhu_wang below).
double log_a_sum(double q, double z, int a, bool zhu_wang) {
  const double log_q = std::log(q);
  const double log_1mq = std::log1p(-q);
  const double inv_2z2 = 1.0 / (2.0 * z * z);
  const double log_z = std::log(z);
  // first pass: the terms; second pass: sum relative to the largest.
  double terms_max = -kInf;
  thread_local std::vector<double> terms;
  terms.assign(static_cast<std::size_t>(a) + 1, -kInf);
  double log_c = std::log(0.5 * a * (a - 1.0));  // log C(a, 2)
  for (int i = 2; i <= a; ++i) {
    double log_w;
    if (zhu_wang && i >= 3) {
      const double e = (double(i) * i - i) * inv_2z2;
      log_w = e > 40.0 ? e + std::log(3.0 - std::exp(-e)) : std::log(3.0 * std::expm1(e) + 2.0);
    } else {
      log_w = log_expm1_exponent(i, inv_2z2, log_z);
    }
    const double t = log_c + i * log_q + (a - i) * log_1mq + log_w;
    terms[i] = t;
    terms_max = std::max(terms_max, t);
    log_c += std::log(double(a - i)) - std::log(double(i + 1));
  }
  if (terms_max == kInf) return kInf;  // a term overflows: A_a exceeds every double
  double s = 0.0;
  for (int i = 2; i <= a; ++i) s += std::exp(terms[i] - terms_max);
  const double log_am1 = terms_max + std::log(s);
  return log_am1 < 0.0 ? std::log1p(std::exp(log_am1)) : log_am1 + std::log1p(std::exp(-log_am1));
}

// log A_a of the subsampled Gaussian for integer a >= 2 (exact).
double log_a_int(double q, double z, int a) { return log_a_sum(q, z, a, false); }

// log A_a for fractional a by the split binomial series; signed (exact) or with absolute values
// (dp_accounting's upper bound). Returns +inf if the series does not converge in 1000 terms.
double log_a_frac(double q, double z, double a, bool signed_terms) {
  const double log_q = std::log(q);
  const double log_1mq = std::log1p(-q);
  const double z0 = z * z * (std::log(1.0 / q - 1.0)) + 0.5;
  const double inv_2z2 = 1.0 / (2.0 * z * z);
  const double inv_sqrt2z = 1.0 / (M_SQRT2 * z);
  const double log_half = std::log(0.5);
  double pos = -kInf, neg = -kInf;  // log of positive and negative parts (both halves)
  double log_c = 0.0;
  double sign = 1.0;
  double prev0 = kInf, prev1 = kInf;
  for (int i = 0; i < 1000; ++i) {
    const double j = a - i;
    const double t0 = log_c + i * log_q + j * log_1mq;
    const double t1 = log_c + j * log_q + i * log_1mq;
    const double e0 = log_half + math::log_erfc((i - z0) * inv_sqrt2z);
    const double e1 = log_half + math::log_erfc((z0 - j) * inv_sqrt2z);
    const double s0 = t0 + (double(i) * i - i) * inv_2z2 + e0;
    const double s1 = t1 + (j * j - j) * inv_2z2 + e1;
    const double s = math::log_add(s0, s1);
    if (sign > 0 || !signed_terms) {
      pos = math::log_add(pos, s);
    } else {
      neg = math::log_add(neg, s);
    }
    const double total = signed_terms ? math::log_sub(pos, neg) : pos;
    const bool decreasing = s0 < prev0 && s1 < prev1;
    // dp_accounting stops 30 nats below the total; the signed series stops at 25 nats (1.4e-11
    // of A_a, far inside the 0.5% target) and adds the magnitude of the last term, which bounds
    // the alternating tail.
    const double stop = signed_terms ? 25.0 : 30.0;
    if (i > a && decreasing && std::max(s0, s1) < total - stop) {
      return signed_terms ? math::log_add(total, s) : total;
    }
    prev0 = s0;
    prev1 = s1;
    // C(a, i + 1) = C(a, i) (a - i) / (i + 1)
    const double f = a - i;
    if (f < 0) sign = -sign;
    log_c += std::log(std::fabs(f)) - std::log(double(i + 1));
  }
  return kInf;
}

double rdp_sg(double q, double z, double order, bool signed_terms) {
  // 1 / (2 z^2) overflows (z < ~1e-154): the RDP exceeds every double, +inf is its honest bound
  if (z == 0.0 || !std::isfinite(1.0 / (2.0 * z * z))) return kInf;
  if (q == 1.0) return std::max(order / (2.0 * z * z), std::numeric_limits<double>::denorm_min());
  constexpr double kMaxIntOrder = 100000;  // the exact sum's length
  const double rounded = std::round(order);
  double rdp;
  if (order == rounded && order < kMaxIntOrder) {
    rdp = log_a_int(q, z, static_cast<int>(rounded)) / (order - 1.0);
  } else {
    rdp = log_a_frac(q, z, order, signed_terms) / (order - 1.0);
    // The series sums terms near 1 in log space: below ~1e-12 its log A_a is rounding noise (it
    // can even be <= 0, and NaN if the series fails). RDP is non-decreasing in the order, so the
    // exact integer-order value at ceil(order) bounds it from above there (std::max(0, NaN)
    // would have been 0).
    const double up = std::ceil(order);
    if (!(rdp * (order - 1.0) >= 1e-12) && up < kMaxIntOrder) {
      rdp = log_a_int(q, z, static_cast<int>(up)) / (up - 1.0);
    }
    if (std::isnan(rdp)) return kInf;  // an upper bound; drops the order
  }
  // a positive RDP below the double range (z beyond ~1e150) rounds to 0; the smallest positive
  // double is its tightest upper bound (0 would make the KL shortcut certify epsilon = 0)
  return std::max(rdp, std::numeric_limits<double>::denorm_min());
}

// Zhu and Wang 2019 ("Poisson Subsampled Renyi Differential Privacy", ICML, Thm. 6, the bound
// for ANY mechanism with RDP curve eps(l)) at integer order a >= 2, for the base curve
// eps(l) = l / (2 z^2) of the discrete Gaussian:
//   A_a <= (1-q)^(a-1) (1 + (a-1) q) + C(a,2) q^2 (1-q)^(a-2) e^(eps(2))
//          + 3 sum_{l=3..a} C(a,l) q^l (1-q)^(a-l) e^((l-1) eps(l)),   RDP(a) = log(A_a) / (a-1).
// The first term is the binomial weight of l = 0 and l = 1, and the weights sum to 1, so A_a - 1
// is the positive sum of C(a,l) q^l (1-q)^(a-l) w_l with w_2 = e^(1/z^2) - 1 and
// w_l = 3 e^((l^2 - l) / (2 z^2)) - 1 (l >= 3), summed in log space (log_a_sum).
double log_a_zhu_wang(double q, double z, int a) { return log_a_sum(q, z, a, true); }

double rdp_sdg(double q, double z, double order) {
  if (z == 0.0 || !std::isfinite(1.0 / (2.0 * z * z))) return kInf;
  // the unsampled discrete Gaussian: a / (2 z^2) (CKS 2020); also a bound for every q, since
  // Poisson subsampling never raises a Renyi divergence (joint convexity)
  const double base = std::max(order / (2.0 * z * z), std::numeric_limits<double>::denorm_min());
  if (q == 1.0) return base;
  // Renyi divergences are non-decreasing in the order: a fractional order takes ceil(order)
  constexpr double kMaxIntOrder = 100000;
  const double up = std::ceil(order);
  if (up >= kMaxIntOrder) return base;
  const double zw = log_a_zhu_wang(q, z, static_cast<int>(up)) / (up - 1.0);
  if (std::isnan(zw)) return base;
  return std::max(std::min(base, zw), std::numeric_limits<double>::denorm_min());
}

void check_q_z(double q, double z) {
  if (!(q > 0.0 && q <= 1.0)) {
    throw ParamError(fmt::format("sampling_probability = {} must be in (0, 1]", q));
  }
  if (!(z >= 0.0) || !std::isfinite(z)) {
    throw ParamError(fmt::format("noise_multiplier = {} must be finite and >= 0", z));
  }
}

// A NaN would silently drop out of the minimum (every comparison with it is false): refuse it.
void check_rdp_curve(std::span<const double> orders, std::span<const double> rdp) {
  if (orders.size() != rdp.size()) {
    throw ParamError(
        fmt::format("rdp conversion: {} orders but {} rdp values", orders.size(), rdp.size()));
  }
  for (std::size_t i = 0; i < orders.size(); ++i) {
    if (std::isnan(rdp[i]) || !(orders[i] > 1.0)) {
      throw ParamError(fmt::format(
          "rdp conversion: rdp = {} at order {} (orders must be > 1, rdp must not be NaN)", rdp[i],
          orders[i]));
    }
  }
}

}  // namespace

double rdp_subsampled_gaussian(double q, double z, double order) {
  check_q_z(q, z);
  return rdp_sg(q, z, order, true);
}

double rdp_subsampled_gaussian_abs_series(double q, double z, double order) {
  check_q_z(q, z);
  return rdp_sg(q, z, order, false);
}

double rdp_subsampled_discrete_gaussian(double q, double z, double order) {
  check_q_z(q, z);
  if (!(order > 1.0) || !std::isfinite(order))
    throw ParamError(fmt::format("order = {} must be finite and > 1", order));
  return rdp_sdg(q, z, order);
}

double rdp_laplace(double b, double a) {
  const double eps = 1.0 / b;
  return eps +
         std::log1p((a - 1.0) * std::expm1(eps * (1.0 - 2.0 * a)) / (2.0 * a - 1.0)) / (a - 1.0);
}

RdpConversion rdp_to_epsilon(std::span<const double> orders, std::span<const double> rdp,
                             double delta) {
  check_delta(delta);
  check_rdp_curve(orders, rdp);
  RdpConversion best{kInf, 0.0};
  for (std::size_t i = 0; i < orders.size(); ++i) {
    const double a = orders[i];
    const double r = rdp[i];
    double eps;
    if (r < 0.0 || delta * delta + std::expm1(-r) > 0.0) {
      eps = 0.0;  // KL bound: delta >= sqrt(1 - exp(-KL)) already
    } else if (a > 1.01) {
      eps = r + std::log1p(-1.0 / a) - std::log(delta * a) / (a - 1.0);
    } else {
      eps = kInf;
    }
    if (eps < best.epsilon) best = {eps, a};
  }
  best.epsilon = std::max(0.0, best.epsilon);
  return best;
}

RdpDeltaConversion rdp_to_delta(std::span<const double> orders, std::span<const double> rdp,
                                double epsilon) {
  check_epsilon(epsilon);
  check_rdp_curve(orders, rdp);
  RdpDeltaConversion best{1.0, 0.0};
  double best_log = 0.0;
  for (std::size_t i = 0; i < orders.size(); ++i) {
    const double a = orders[i];
    const double r = std::max(0.0, rdp[i]);
    // KL bound sqrt(1 - exp(-rdp)); -inf for nothing composed
    double log_delta = r == 0.0 ? -kInf : 0.5 * std::log(-std::expm1(-r));
    if (a > 1.01) {
      log_delta =
          std::min(log_delta, (a - 1.0) * (r - epsilon + std::log1p(-1.0 / a)) - std::log(a));
    }
    if (log_delta < best_log) {
      best_log = log_delta;
      best.order = a;
    }
  }
  best.delta = std::min(1.0, std::exp(best_log));
  return best;
}

double rdp_to_epsilon_classical(std::span<const double> orders, std::span<const double> rdp,
                                double delta) {
  check_delta(delta);
  check_rdp_curve(orders, rdp);
  double best = kInf;
  for (std::size_t i = 0; i < orders.size(); ++i) {
    best = std::min(best, rdp[i] - std::log(delta) / (orders[i] - 1.0));
  }
  return std::max(0.0, best);
}

RdpAccountant::RdpAccountant(std::vector<double> orders) : orders_(std::move(orders)) {
  if (orders_.empty()) throw ParamError("rdp accountant: orders must not be empty");
  for (double a : orders_) {
    if (!(a > 1.0) || !std::isfinite(a)) {
      throw ParamError(fmt::format("rdp accountant: order {} must be finite and > 1", a));
    }
  }
  rdp_.assign(orders_.size(), 0.0);
}

bool RdpAccountant::supports(const DpEvent& e) const {
  switch (e.kind()) {
    case DpEvent::Kind::kGaussian:
    case DpEvent::Kind::kDiscreteGaussian:
    case DpEvent::Kind::kLaplace:
      return true;
    case DpEvent::Kind::kPoissonSampled:
      return e.inner().kind() == DpEvent::Kind::kGaussian ||
             e.inner().kind() == DpEvent::Kind::kDiscreteGaussian;
    case DpEvent::Kind::kSelfComposed:
      return supports(e.inner());
    case DpEvent::Kind::kComposed:
      return std::all_of(e.events().begin(), e.events().end(),
                         [&](const DpEvent& c) { return supports(c); });
  }
  return false;
}

void RdpAccountant::compose(const DpEvent& event, std::int64_t count) {
  if (count < 1) throw ParamError(fmt::format("rdp accountant: count = {} must be >= 1", count));
  if (!supports(event)) {
    throw ParamError(
        fmt::format("rdp accountant does not support event {} (supported: gaussian, "
                    "discrete_gaussian, laplace, poisson_sampled(gaussian or discrete_gaussian), "
                    "and their compositions)",
                    event.describe()));
  }
  add(event, static_cast<double>(count));
}

void RdpAccountant::add(const DpEvent& e, double count) {
  switch (e.kind()) {
    case DpEvent::Kind::kGaussian:
      for (std::size_t i = 0; i < orders_.size(); ++i) {
        rdp_[i] += count * rdp_sg(1.0, e.noise_multiplier(), orders_[i], true);
      }
      return;
    case DpEvent::Kind::kDiscreteGaussian:
      for (std::size_t i = 0; i < orders_.size(); ++i) {
        rdp_[i] += count * rdp_sdg(1.0, e.noise_multiplier(), orders_[i]);
      }
      return;
    case DpEvent::Kind::kLaplace:
      for (std::size_t i = 0; i < orders_.size(); ++i) {
        rdp_[i] += count * rdp_laplace(e.laplace_scale(), orders_[i]);
      }
      return;
    case DpEvent::Kind::kPoissonSampled:
      if (e.inner().kind() == DpEvent::Kind::kDiscreteGaussian) {
        for (std::size_t i = 0; i < orders_.size(); ++i) {
          rdp_[i] += count *
                     rdp_sdg(e.sampling_probability(), e.inner().noise_multiplier(), orders_[i]);
        }
        return;
      }
      for (std::size_t i = 0; i < orders_.size(); ++i) {
        rdp_[i] += count *
                   rdp_sg(e.sampling_probability(), e.inner().noise_multiplier(), orders_[i], true);
      }
      return;
    case DpEvent::Kind::kSelfComposed:
      add(e.inner(), count * static_cast<double>(e.count()));
      return;
    case DpEvent::Kind::kComposed:
      for (const auto& c : e.events()) add(c, count);
      return;
  }
}

RdpConversion RdpAccountant::epsilon_and_order(double delta) const {
  return rdp_to_epsilon(orders_, rdp_, delta);
}

double RdpAccountant::epsilon(double delta) const { return epsilon_and_order(delta).epsilon; }

RdpDeltaConversion RdpAccountant::delta_and_order(double epsilon) const {
  return rdp_to_delta(orders_, rdp_, epsilon);
}

double RdpAccountant::delta(double epsilon) const { return delta_and_order(epsilon).delta; }

double rdp_dpsgd_epsilon(const DpsgdSpec& spec, double delta) {
  RdpAccountant acc;
  acc.compose(dpsgd_event(spec));
  return acc.epsilon(delta);
}

}  // namespace dprl::privacy
