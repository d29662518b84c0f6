#include "privacy/pld_accountant.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <future>
#include <optional>
#include <unsupported/Eigen/FFT>

#include "engine/error.hpp"
#include "privacy/pld_curves.hpp"
#include "privacy/rdp_accountant.hpp"
#include "privacy/special_math.hpp"

namespace dprl::privacy {

using math::kInf;

namespace {

// A composed PLD has at most 2^24 points (128 MiB per FFT buffer); see pld_self_compose.
constexpr double kMaxComposedPoints = double(std::int64_t{1} << 24);

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
Pld pld_subsampled_gaussian(double q, double z, bool remove, double h) {
  return discretize(subsampled_gaussian_curve(q, z, remove), h);
}

Pld pld_laplace(double scale, double h) { return discretize(laplace_curve(scale), h); }

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

PldAccountant::PldAccountant(double interval) : interval_(interval) {
  check_pld_interval(interval);
}

bool PldAccountant::supports(const DpEvent& e) const {
  switch (e.kind()) {
    case DpEvent::Kind::kGaussian:
    case DpEvent::Kind::kDiscreteGaussian:
      return e.noise_multiplier() > 0.0;
    case DpEvent::Kind::kLaplace:
      return true;
    case DpEvent::Kind::kPoissonSampled:
      return (e.inner().kind() == DpEvent::Kind::kGaussian ||
              e.inner().kind() == DpEvent::Kind::kDiscreteGaussian) &&
             e.inner().noise_multiplier() > 0.0;
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
        "pld accountant does not support event {} (supported: gaussian(z > 0), "
        "discrete_gaussian(z > 0) through the rdp bound, laplace, poisson_sampled(gaussian or "
        "discrete_gaussian), and their compositions)",
        event.describe()));
  }
  add(event, static_cast<double>(count));
  events_.emplace_back(event, count);
}

void PldAccountant::add(const DpEvent& e, double count) {
  Atom a{};
  switch (e.kind()) {
    case DpEvent::Kind::kGaussian:
      a = {0, 1.0, e.noise_multiplier(), count};
      break;
    case DpEvent::Kind::kDiscreteGaussian:
      discrete_ = true;  // no proven PLD: epsilon() takes the RDP bound of everything
      return;
    case DpEvent::Kind::kLaplace:
      a = {1, 1.0, e.laplace_scale(), count};
      break;
    case DpEvent::Kind::kPoissonSampled:
      if (e.inner().kind() == DpEvent::Kind::kDiscreteGaussian) {
        discrete_ = true;
        return;
      }
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

RdpAccountant PldAccountant::rdp_bound() const {
  RdpAccountant rdp;
  for (const auto& [e, n] : events_) rdp.compose(e, n);
  return rdp;
}

std::optional<Pld> PldAccountant::compose_direction(bool remove, double max_infinity_mass) const {
  // the +inf masses first: when they alone exceed the limit, the caller's answer is decided
  // whatever the rest does, and nothing is built or composed (tiny noise puts most of the loss
  // there)
  std::vector<PldCurve> curves;
  double log_finite = 0.0;  // log P(no +inf loss in the whole composition)
  for (const auto& a : atoms_) {
    curves.push_back(a.kind == 1 ? laplace_curve(a.value)
                                 : subsampled_gaussian_curve(a.q, a.value, remove));
    log_finite += a.count * std::log1p(-discretized_infinity_mass(curves.back(), interval_));
  }
  if (-std::expm1(log_finite) > max_infinity_mass) return std::nullopt;
  Pld total;
  for (std::size_t i = 0; i < atoms_.size(); ++i) {
    if (!(atoms_[i].count <= 0x1p53)) {
      throw ParamError(fmt::format("pld: count = {} of event {} exceeds 2^53", atoms_[i].count, i));
    }
    Pld composed = pld_self_compose(discretize(curves[i], interval_),
                                    static_cast<std::int64_t>(atoms_[i].count));
    total = i == 0 ? std::move(composed) : pld_compose(total, composed);
  }
  return total;
}

double PldAccountant::epsilon(double delta) const {
  check_delta(delta);
  // the proven bound of the whole composition (rdp_accountant.hpp), never the continuous curve
  if (discrete_) return rdp_bound().epsilon(delta);
  if (atoms_.empty()) return 0.0;
  auto direction = [&](bool remove) {
    const std::optional<Pld> total = compose_direction(remove, delta);
    if (!total) return kInf;  // the +inf masses alone exceed delta
    const double eps = total->epsilon(delta);
    if (std::isnan(eps)) throw ParamError("pld: epsilon is NaN (numerical failure)");
    return eps;
  };
  // the two directions are independent: the add direction runs on a second thread (the result
  // does not depend on scheduling)
  auto add = std::async(std::launch::async, direction, false);
  const double remove = direction(true);
  return std::max(remove, add.get());
}

double PldAccountant::delta(double epsilon) const {
  check_epsilon(epsilon);
  if (discrete_) return rdp_bound().delta(epsilon);
  if (atoms_.empty()) return 0.0;
  auto direction = [&](bool remove) {
    // a limit of 1 never stops early: every +inf mass is part of delta
    const double d = compose_direction(remove, 1.0)->delta(epsilon);
    if (std::isnan(d)) throw ParamError("pld: delta is NaN (numerical failure)");
    return d;
  };
  auto add = std::async(std::launch::async, direction, false);
  const double remove = direction(true);
  return std::max(remove, add.get());
}

}  // namespace dprl::privacy