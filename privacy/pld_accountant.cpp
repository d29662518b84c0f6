#include "privacy/pld_accountant.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <future>
#include <unsupported/Eigen/FFT>

#include "engine/error.hpp"
#include "privacy/special_math.hpp"

namespace dprl::privacy {

using math::kInf;

namespace {

constexpr double kTailSigmas = 9.6;  // normal tail beyond this: < 1e-21
// Grid limits (see connect_dots and pld_self_compose): one mechanism's PLD has at most 2^22 points
// (32 MiB; a loss range of 419 at h = 1e-4), a composed one at most 2^24 (128 MiB per FFT buffer),
// and losses are clamped to [-1e6, 1e6] so that grid indices times counts stay far inside int64.
constexpr std::int64_t kMaxSinglePoints = std::int64_t{1} << 22;
constexpr double kMaxComposedPoints = double(std::int64_t{1} << 24);
constexpr double kMaxLoss = 1e6;

using math::normal_cdf;
using math::normal_sf;

// The remove-direction hockey-stick curve of the Poisson-subsampled Gaussian (P = (1-q) N(0, z^2)
// + q N(1, z^2), Q = N(0, z^2)): delta = P(x > x_eps) - e^eps Q(x > x_eps).
double delta_remove(double q, double z, double eps) {
  if (eps > 700.0) {
    // e^eps overflows beyond ~709 (and c sf(x/z) would be inf * 0): the same in log space,
    // log c = eps + log(1 - (1 - q) e^-eps)
    const double log_c = eps + std::log1p(-(1.0 - q) * std::exp(-eps));
    const double x = z * z * (log_c - std::log(q)) + 0.5;
    return q * normal_sf((x - 1.0) / z) - std::exp(log_c + math::log_normal_cdf(-x / z));
  }
  const double ee = std::exp(eps);
  if (ee <= 1.0 - q) return -std::expm1(eps);  // below the smallest loss
  const double c = ee - (1.0 - q);
  const double x = z * z * std::log(c / q) + 0.5;
  return q * normal_sf((x - 1.0) / z) - c * normal_sf(x / z);
}

// The add direction (P = N(0, z^2), Q = mixture): delta = P(x < x_eps) - e^eps Q(x < x_eps).
double delta_add(double q, double z, double eps) {
  const double em = std::exp(-eps);
  if (em <= 1.0 - q) return 0.0;  // above the largest loss -log(1 - q)
  const double x = z * z * std::log((em - (1.0 - q)) / q) + 0.5;
  const double ee = std::exp(eps);
  return (1.0 - ee * (1.0 - q)) * normal_cdf(x / z) - q * ee * normal_cdf((x - 1.0) / z);
}

double delta_laplace(double scale, double eps) {
  const double e0 = 1.0 / scale;
  if (eps >= e0) return 0.0;
  if (eps <= -e0) return -std::expm1(eps);
  return -std::expm1((eps - e0) / 2.0);
}

// g(eps) = delta(eps) - (1 - e^eps) = e^eps Q(L <= eps) - P(L <= eps) >= 0: the same curve minus a
// part linear in e^eps, computed without cancellation where delta is close to 1 - e^eps.
double g_remove(double q, double z, double eps) {
  const double ee = std::exp(eps);
  if (ee <= 1.0 - q) return 0.0;
  const double c = ee - (1.0 - q);
  const double x = z * z * std::log(c / q) + 0.5;
  return c * normal_cdf(x / z) - q * normal_cdf((x - 1.0) / z);
}

double g_add(double q, double z, double eps) {
  const double em = std::exp(-eps);
  if (em <= 1.0 - q) return std::expm1(eps);
  const double x = z * z * std::log((em - (1.0 - q)) / q) + 0.5;
  const double ee = std::exp(eps);
  return ee * ((1.0 - q) * normal_sf(x / z) + q * normal_sf((x - 1.0) / z)) - normal_sf(x / z);
}

double g_laplace(double scale, double eps) {
  const double e0 = 1.0 / scale;
  if (eps <= -e0) return 0.0;
  if (eps >= e0) return std::expm1(eps);
  return std::exp(eps) - std::exp((eps - e0) / 2.0);
}

// A curve value: rounding can take it a little below 0 (clamped); NaN is a numerical failure and
// is refused, never clamped to 0 (which would drop loss mass: an optimistic PLD).
double curve_value(double v, double eps) {
  if (std::isnan(v)) {
    throw ParamError(fmt::format("pld: the hockey-stick curve is NaN at epsilon = {}", eps));
  }
  return std::max(0.0, v);
}

// Connect-the-dots PLD on [lo, hi]. The masses are second differences of the curve, taken from
// delta for eps >= 0 and from g for eps < 0 (the linear part 1 - e^eps has second difference 0),
// so neither side suffers cancellation; the top point's mass is a first difference of delta.
// Any window is pessimistic: loss mass below the lowest point is moved up to it (mass[0]) and mass
// above the top point goes to +inf (infinity_mass = delta(top)). The window is clamped to
// [-kMaxLoss, kMaxLoss] and to kMaxSinglePoints points, keeping its top end (keep_top: where the
// mass of a pure-DP mechanism sits) or its bottom end (the subsampled Gaussian: the excess then
// lands in the +inf mass, which makes epsilon +inf for every delta below it).
template <class D, class G>
Pld connect_dots(D delta, G g, double lo, double hi, double h, bool keep_top) {
  DPRL_CHECK(!std::isnan(lo) && !std::isnan(hi) && hi >= lo);
  const double width = double(kMaxSinglePoints - 2) * h;
  double bottom = std::clamp(lo, -kMaxLoss, kMaxLoss);
  double top = std::clamp(hi, bottom, kMaxLoss);
  if (top - bottom > width) (keep_top ? bottom : top) = keep_top ? top - width : bottom + width;
  const auto i_lo = static_cast<std::int64_t>(std::floor(bottom / h));
  const auto i_hi = std::max(i_lo + 1, static_cast<std::int64_t>(std::ceil(top / h)));
  const auto n = static_cast<std::size_t>(i_hi - i_lo + 1);
  auto eps_at = [&](std::size_t i) { return double(i_lo + std::int64_t(i)) * h; };
  std::vector<double> d(n), gv(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double e = eps_at(i);
    if (e >= -2.0 * h) d[i] = curve_value(delta(e), e);
    if (e <= 2.0 * h) gv[i] = curve_value(g(e), e);
  }
  Pld p;
  p.interval = h;
  p.offset = i_lo;
  p.mass.assign(n, 0.0);
  const double eh = std::exp(h), em1 = std::expm1(h);
  double sum = 0.0;
  for (std::size_t i = 1; i + 1 < n; ++i) {
    const auto& c = eps_at(i) < 0.0 ? gv : d;
    p.mass[i] = std::max(0.0, ((c[i - 1] - c[i]) * eh - (c[i] - c[i + 1])) / em1);
    sum += p.mass[i];
  }
  // the top point: delta(top - h) - delta(top) = p_top (1 - e^-h), and delta(top) is the +inf
  // mass; below eps = 0 delta is g + 1 - e^eps
  const std::size_t t = n - 1;
  const double e_t = eps_at(t);
  const bool top_in_g = e_t < 0.0;
  p.infinity_mass = top_in_g ? gv[t] - std::expm1(e_t) : d[t];
  const double step =
      top_in_g ? (gv[t - 1] - gv[t]) + (std::exp(e_t) - std::exp(eps_at(t - 1))) : d[t - 1] - d[t];
  p.mass[t] = std::max(0.0, step * eh / em1);
  sum += p.mass[t];
  p.mass[0] = std::max(0.0, 1.0 - p.infinity_mass - sum);
  return p;
}

std::size_t fast_size(std::size_t n) {
  // smallest 2^a 3^b 5^c >= n with a >= 2 (Eigen's real FFT packs pairs when 4 | n)
  std::size_t best = std::size_t{1} << 62;
  for (std::size_t p2 = 4; p2 < 2 * n + 8; p2 *= 2) {
    for (std::size_t p3 = p2; p3 < 2 * n + 8; p3 *= 3) {
      for (std::size_t p5 = p3; p5 < 2 * n + 8; p5 *= 5) {
        if (p5 >= n && p5 < best) best = p5;
      }
    }
  }
  return best;
}

// log E[exp(lambda i)] over the PMF's index i.
double log_mgf(const std::vector<double>& m, double lambda) {
  const double top = lambda > 0 ? lambda * double(m.size() - 1) : 0.0;
  double s = 0.0;
  double f = std::exp(-top);
  const double step = std::exp(lambda);
  for (double v : m) {
    s += v * f;
    f *= step;
  }
  return top + std::log(s);
}

}  // namespace

static void check_interval(double h) {
  if (!(h >= 1e-6 && h <= 0.1)) {
    throw ParamError(
        fmt::format("pld: value_discretization_interval = {} must be in [1e-6, 0.1]", h));
  }
}

Pld pld_subsampled_gaussian(double q, double z, bool remove, double h) {
  if (!(q > 0.0 && q <= 1.0)) {
    throw ParamError(fmt::format("pld: sampling_probability = {} must be in (0, 1]", q));
  }
  if (!(z > 0.0) || !std::isfinite(z)) {
    throw ParamError(fmt::format("pld: noise_multiplier = {} must be finite and > 0", z));
  }
  check_interval(h);
  // the remove-direction loss log(1 - q + q e^((2x - 1) / (2 z^2))) at x, in log space (exact
  // for q = 1, where log1p(q expm1(y)) is -inf once e^y < 2^-53)
  auto loss = [&](double x) {
    return math::log_add(std::log1p(-q), std::log(q) + (2.0 * x - 1.0) / (2.0 * z * z));
  };
  if (remove || q == 1.0) {
    // the loss increases with x; P's mass lies in x in [-9.6 z, 1 + 9.6 z] ([1 - 9.6 z, ...]
    // when q = 1: P is N(1, z^2) alone, and its loss range is then 19.2 / z wide, not 1 / z^2)
    const double x_lo = q == 1.0 ? 1.0 - kTailSigmas * z : -kTailSigmas * z;
    return connect_dots([&](double e) { return delta_remove(q, z, e); },
                        [&](double e) { return g_remove(q, z, e); }, loss(x_lo),
                        loss(1.0 + kTailSigmas * z), h, false);
  }
  return connect_dots([&](double e) { return delta_add(q, z, e); },
                      [&](double e) { return g_add(q, z, e); }, -loss(kTailSigmas * z),
                      std::min(-std::log1p(-q), -loss(-kTailSigmas * z)), h, false);
}

Pld pld_laplace(double scale, double h) {
  if (!(scale > 0.0) || !std::isfinite(scale)) {
    throw ParamError(fmt::format("pld: laplace scale = {} must be finite and > 0", scale));
  }
  check_interval(h);
  return connect_dots([&](double e) { return delta_laplace(scale, e); },
                      [&](double e) { return g_laplace(scale, e); }, -1.0 / scale, 1.0 / scale, h,
                      true);
}

Pld pld_self_compose(const Pld& p, std::int64_t n, double tail_mass) {
  if (n == 1) return p;
  const double nn = static_cast<double>(n);
  const std::size_t len = p.mass.size();
  // Chernoff bounds on the composed index (relative to n * offset)
  double lo = 0.0, hi = nn * double(len - 1);
  for (int k = 1; k <= 20; ++k) {
    const double lam = k / double(len);
    hi = std::min(hi, std::ceil((nn * log_mgf(p.mass, lam) + std::log(2.0 / tail_mass)) / lam));
    lo = std::max(lo, std::floor((nn * log_mgf(p.mass, -lam) + std::log(2.0 / tail_mass)) / -lam));
  }
  // checked in double before any integer conversion: a window or an offset beyond the limits
  // is refused (the caller may fall back to RDP), never overflowed
  if (!(hi - lo + 1.0 <= kMaxComposedPoints) || !(std::fabs(nn * double(p.offset)) < 0x1p61) ||
      !(hi < 0x1p61)) {
    throw ParamError(fmt::format(
        "pld: {} compositions need a loss grid of {:.3g} points at interval {} (limit {:.3g}); "
        "use the rdp accountant or a coarser interval",
        n, hi - lo + 1.0, p.interval, kMaxComposedPoints));
  }
  const auto out_len = static_cast<std::size_t>(hi - lo) + 1;
  const std::size_t nfft = fast_size(std::max(out_len, len));
  Eigen::FFT<double> fft;
  fft.SetFlag(Eigen::FFT<double>::HalfSpectrum);
  std::vector<double> in(nfft, 0.0);
  std::copy(p.mass.begin(), p.mass.end(), in.begin());
  std::vector<std::complex<double>> spec;
  fft.fwd(spec, in);
  // c^n in polar form; entries with |c|^n below 1e-300 are exactly 0 for our purposes
  for (auto& c : spec) {
    const double log_r = 0.5 * std::log(std::norm(c)) * nn;
    if (log_r < -690.0) {
      c = 0.0;
      continue;
    }
    c = std::polar(std::exp(log_r), std::arg(c) * nn);
  }
  // inverse into the input buffer (no second 8N-byte allocation), then rotate the wanted window
  // [ilo, ilo + out_len) to the front
  fft.inv(in, spec, static_cast<Eigen::Index>(nfft));
  spec = {};
  const auto ilo = static_cast<std::int64_t>(lo);
  std::rotate(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(ilo % std::int64_t(nfft)),
              in.end());
  in.resize(out_len);
  for (double& v : in) v = std::max(0.0, v);
  Pld out;
  out.interval = p.interval;
  out.offset = n * p.offset + ilo;
  out.mass = std::move(in);
  out.infinity_mass = std::min(1.0, -std::expm1(nn * std::log1p(-p.infinity_mass)) + tail_mass);
  return out;
}

Pld pld_compose(const Pld& a, const Pld& b) {
  DPRL_CHECK(a.interval == b.interval);
  const double len = double(a.mass.size()) + double(b.mass.size()) - 1.0;
  if (!(len <= kMaxComposedPoints) || !(std::fabs(double(a.offset) + double(b.offset)) < 0x1p61)) {
    throw ParamError(fmt::format(
        "pld: the composition needs a loss grid of {:.3g} points at interval {} (limit {:.3g}); "
        "use the rdp accountant or a coarser interval",
        len, a.interval, kMaxComposedPoints));
  }
  const std::size_t out_len = a.mass.size() + b.mass.size() - 1;
  const std::size_t nfft = fast_size(out_len);
  Eigen::FFT<double> fft;
  fft.SetFlag(Eigen::FFT<double>::HalfSpectrum);
  std::vector<double> ia(nfft, 0.0), ib(nfft, 0.0);
  std::copy(a.mass.begin(), a.mass.end(), ia.begin());
  std::copy(b.mass.begin(), b.mass.end(), ib.begin());
  std::vector<std::complex<double>> sa, sb;
  fft.fwd(sa, ia);
  fft.fwd(sb, ib);
  for (std::size_t i = 0; i < sa.size(); ++i) sa[i] *= sb[i];
  std::vector<double> res;
  fft.inv(res, sa, static_cast<Eigen::Index>(nfft));
  Pld out;
  out.interval = a.interval;
  out.offset = a.offset + b.offset;
  out.mass.resize(out_len);
  for (std::size_t j = 0; j < out_len; ++j) out.mass[j] = std::max(0.0, res[j]);
  out.infinity_mass = 1.0 - (1.0 - a.infinity_mass) * (1.0 - b.infinity_mass);
  return out;
}

double Pld::delta(double eps) const {
  double d = infinity_mass;
  for (std::size_t i = 0; i < mass.size(); ++i) {
    const double l = double(offset + std::int64_t(i)) * interval;
    if (l > eps) d -= mass[i] * std::expm1(eps - l);
  }
  return std::min(1.0, d);
}

double Pld::epsilon(double delta_target) const {
  if (infinity_mass > delta_target) return kInf;
  // Scan down from the top atom. Before atom k is included, u = sum_{j > k} p_j and
  // v = sum_{j > k} p_j e^(l_k - l_j), so delta(l_k + s) = inf + u - e^s v for s in [0, h].
  const double eh = std::exp(-interval);
  double u = 0.0, v = 0.0;
  for (std::size_t k = mass.size(); k-- > 0;) {
    const double l = double(offset + std::int64_t(k)) * interval;
    if (infinity_mass + u - v > delta_target) {
      return std::max(0.0, l + std::log((infinity_mass + u - delta_target) / v));
    }
    if (l < 0.0) return 0.0;  // delta(l) <= target already at a negative loss
    u += mass[k];
    v = (v + mass[k]) * eh;
  }
  // below the lowest atom: delta(l_0 - h + s) = inf + u - e^s v
  if (v <= 0.0 || infinity_mass + u <= delta_target) return 0.0;
  const double l = double(offset - 1) * interval;
  return std::max(0.0, l + std::log((infinity_mass + u - delta_target) / v));
}

PldAccountant::PldAccountant(double interval) : interval_(interval) { check_interval(interval); }

bool PldAccountant::supports(const DpEvent& e) const {
  switch (e.kind()) {
    case DpEvent::Kind::kGaussian:
      return e.noise_multiplier() > 0.0;
    case DpEvent::Kind::kLaplace:
      return true;
    case DpEvent::Kind::kPoissonSampled:
      return e.inner().kind() == DpEvent::Kind::kGaussian && e.inner().noise_multiplier() > 0.0;
    case DpEvent::Kind::kSelfComposed:
      return supports(e.inner());
    case DpEvent::Kind::kComposed:
      return std::all_of(e.events().begin(), e.events().end(),
                         [&](const DpEvent& c) { return supports(c); });
  }
  return false;
}

void PldAccountant::compose(const DpEvent& event, std::int64_t count) {
  if (count < 1) throw ParamError(fmt::format("pld accountant: count = {} must be >= 1", count));
  if (!supports(event)) {
    throw ParamError(fmt::format(
        "pld accountant does not support event {} (supported: gaussian(z > 0), laplace, "
        "poisson_sampled(gaussian), and their compositions)",
        event.describe()));
  }
  add(event, static_cast<double>(count));
}

void PldAccountant::add(const DpEvent& e, double count) {
  Atom a{};
  switch (e.kind()) {
    case DpEvent::Kind::kGaussian:
      a = {0, 1.0, e.noise_multiplier(), count};
      break;
    case DpEvent::Kind::kLaplace:
      a = {1, 1.0, e.laplace_scale(), count};
      break;
    case DpEvent::Kind::kPoissonSampled:
      a = {0, e.sampling_probability(), e.inner().noise_multiplier(), count};
      break;
    case DpEvent::Kind::kSelfComposed:
      add(e.inner(), count * static_cast<double>(e.count()));
      return;
    case DpEvent::Kind::kComposed:
      for (const auto& c : e.events()) add(c, count);
      return;
  }
  for (auto& x : atoms_) {
    if (x.kind == a.kind && x.q == a.q && x.value == a.value) {
      x.count += a.count;
      return;
    }
  }
  atoms_.push_back(a);
}

double PldAccountant::epsilon(double delta) const {
  check_delta(delta);
  if (atoms_.empty()) return 0.0;
  auto direction = [&](bool remove) {
    // the single-mechanism PLDs first: when their +inf masses alone exceed delta, epsilon is +inf
    // whatever the rest does, and nothing is composed (tiny noise puts most loss there)
    std::vector<Pld> ones;
    double log_finite = 0.0;  // log P(no +inf loss in the whole composition)
    for (const auto& a : atoms_) {
      ones.push_back(a.kind == 1 ? pld_laplace(a.value, interval_)
                                 : pld_subsampled_gaussian(a.q, a.value, remove, interval_));
      log_finite += a.count * std::log1p(-ones.back().infinity_mass);
    }
    if (-std::expm1(log_finite) > delta) return kInf;
    Pld total;
    for (std::size_t i = 0; i < atoms_.size(); ++i) {
      if (!(atoms_[i].count <= 0x1p53)) {
        throw ParamError(
            fmt::format("pld: count = {} of event {} exceeds 2^53", atoms_[i].count, i));
      }
      Pld composed = pld_self_compose(ones[i], static_cast<std::int64_t>(atoms_[i].count));
      total = i == 0 ? std::move(composed) : pld_compose(total, composed);
    }
    const double eps = total.epsilon(delta);
    if (std::isnan(eps)) throw ParamError("pld: epsilon is NaN (numerical failure)");
    return eps;
  };
  // the two directions are independent: the add direction runs on a second thread (the result
  // does not depend on scheduling)
  auto add = std::async(std::launch::async, direction, false);
  const double remove = direction(true);
  return std::max(remove, add.get());
}

}  // namespace dprl::privacy
