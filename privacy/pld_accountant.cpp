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

// Phi(y) and 1 - Phi(y) through erfc: one libm call each, relative accuracy ~1 ulp down to
// ~1e-300. The differences below lose at most (term / result) ulps, which stays far below the
// grid error; the region where they would matter is where delta < 1e-300 (treated as 0).
inline double cdf(double y) { return 0.5 * std::erfc(-y * M_SQRT1_2); }
inline double sf(double y) { return 0.5 * std::erfc(y * M_SQRT1_2); }

// The remove-direction hockey-stick curve of the Poisson-subsampled Gaussian (P = (1-q) N(0, z^2)
// + q N(1, z^2), Q = N(0, z^2)): delta = P(x > x_eps) - e^eps Q(x > x_eps).
double delta_remove(double q, double z, double eps) {
  const double ee = std::exp(eps);
  if (ee <= 1.0 - q) return -std::expm1(eps);  // below the smallest loss
  const double c = ee - (1.0 - q);
  const double x = z * z * std::log(c / q) + 0.5;
  return q * sf((x - 1.0) / z) - c * sf(x / z);
}

// The add direction (P = N(0, z^2), Q = mixture): delta = P(x < x_eps) - e^eps Q(x < x_eps).
double delta_add(double q, double z, double eps) {
  const double em = std::exp(-eps);
  if (em <= 1.0 - q) return 0.0;  // above the largest loss -log(1 - q)
  const double x = z * z * std::log((em - (1.0 - q)) / q) + 0.5;
  const double ee = std::exp(eps);
  return (1.0 - ee * (1.0 - q)) * cdf(x / z) - q * ee * cdf((x - 1.0) / z);
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
  return c * cdf(x / z) - q * cdf((x - 1.0) / z);
}

double g_add(double q, double z, double eps) {
  const double em = std::exp(-eps);
  if (em <= 1.0 - q) return std::expm1(eps);
  const double x = z * z * std::log((em - (1.0 - q)) / q) + 0.5;
  const double ee = std::exp(eps);
  return ee * ((1.0 - q) * sf(x / z) + q * sf((x - 1.0) / z)) - sf(x / z);
}

double g_laplace(double scale, double eps) {
  const double e0 = 1.0 / scale;
  if (eps <= -e0) return 0.0;
  if (eps >= e0) return std::expm1(eps);
  return std::exp(eps) - std::exp((eps - e0) / 2.0);
}

// Connect-the-dots PLD on [lo, hi]. The masses are second differences of the curve, taken from
// delta for eps >= 0 and from g for eps < 0 (the linear part 1 - e^eps has second difference 0),
// so neither side suffers cancellation.
template <class D, class G>
Pld connect_dots(D delta, G g, double lo, double hi, double h) {
  Pld p;
  p.interval = h;
  const auto i_lo = static_cast<std::int64_t>(std::floor(lo / h));
  const auto i_hi = static_cast<std::int64_t>(std::ceil(hi / h));
  const std::size_t n = static_cast<std::size_t>(i_hi - i_lo + 1);
  std::vector<double> d(n), gv(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double e = double(i_lo + std::int64_t(i)) * h;
    if (e >= -2.0 * h) d[i] = std::max(0.0, delta(e));
    if (e <= 2.0 * h) gv[i] = std::max(0.0, g(e));
  }
  p.offset = i_lo;
  p.mass.assign(n, 0.0);
  p.infinity_mass = d[n - 1];
  const double eh = std::exp(h), em1 = std::expm1(h);
  double sum = 0.0;
  for (std::size_t i = 1; i < n; ++i) {
    const auto& c = double(i_lo + std::int64_t(i)) * h < 0.0 ? gv : d;
    const double below = (c[i - 1] - c[i]) * eh;
    const double above = i + 1 < n ? c[i] - c[i + 1] : 0.0;
    p.mass[i] = std::max(0.0, (below - above) / em1);
    sum += p.mass[i];
  }
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
  if (remove || q == 1.0) {
    auto loss = [&](double x) { return std::log1p(q * std::expm1((2.0 * x - 1.0) / (2 * z * z))); };
    return connect_dots([&](double e) { return delta_remove(q, z, e); },
                        [&](double e) { return g_remove(q, z, e); }, loss(-kTailSigmas * z),
                        loss(1.0 + kTailSigmas * z), h);
  }
  auto loss = [&](double x) { return -std::log1p(q * std::expm1((2.0 * x - 1.0) / (2 * z * z))); };
  return connect_dots([&](double e) { return delta_add(q, z, e); },
                      [&](double e) { return g_add(q, z, e); }, loss(kTailSigmas * z),
                      std::min(-std::log1p(-q), loss(-kTailSigmas * z)), h);
}

Pld pld_laplace(double scale, double h) {
  if (!(scale > 0.0) || !std::isfinite(scale)) {
    throw ParamError(fmt::format("pld: laplace scale = {} must be finite and > 0", scale));
  }
  check_interval(h);
  return connect_dots([&](double e) { return delta_laplace(scale, e); },
                      [&](double e) { return g_laplace(scale, e); }, -1.0 / scale, 1.0 / scale, h);
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
    Pld total;
    bool first = true;
    for (const auto& a : atoms_) {
      const Pld one = a.kind == 1 ? pld_laplace(a.value, interval_)
                                  : pld_subsampled_gaussian(a.q, a.value, remove, interval_);
      Pld composed = pld_self_compose(one, static_cast<std::int64_t>(a.count));
      total = first ? std::move(composed) : pld_compose(total, composed);
      first = false;
    }
    return total.epsilon(delta);
  };
  // the two directions are independent: the add direction runs on a second thread (the result
  // does not depend on scheduling)
  auto add = std::async(std::launch::async, direction, false);
  const double remove = direction(true);
  return std::max(remove, add.get());
}

}  // namespace dprl::privacy
