#include "privacy/dirichlet_teacher.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "engine/error.hpp"
#include "engine/state_io.hpp"
#include "privacy/dirichlet_mechanism.hpp"
#include "privacy/root_finding.hpp"

namespace dprl::privacy {

void DirichletTeacherParams::check() const {
  if (!(eta < 1.0 / actions))
    throw ParamError(fmt::format("eta = {}: must be in [0, 1/m) = [0, {:.6g}) for m = {} actions",
                                 eta, 1.0 / actions, actions));
  if (!(tau > 0.0 && tau <= eta))
    throw ParamError(fmt::format("tau = {}: must be in (0, eta] = (0, {}]", tau, eta));
}

namespace {

// The b-independent part of eq. 12.
double lgamma_part(double k, double eta, int m) {
  return (m - 1.0) * std::lgamma(k * eta) + std::lgamma(k * (1.0 - (m - 1.0) * eta)) -
         m * std::lgamma(k / m);
}

DirichletParams mechanism_params(const DirichletTeacherParams& p, double k) {
  DirichletParams d;
  d.k = k;
  d.eta = p.eta;
  d.tau = p.tau;
  d.actions = p.actions;
  d.lipschitz = (1.0 - p.actions * p.eta) * p.lipschitz;  // the floored map's constant
  d.adjacency = p.adjacency;
  return d;
}

// Hoeffding's (equally the Dvoretzky-Kiefer-Wolfowitz-Massart) half width at failure beta.
double hoeffding(std::int64_t n, double beta) {
  return std::sqrt(std::log(2.0 / beta) / (2.0 * static_cast<double>(n)));
}

}  // namespace

QueryCost dirichlet_query_cost(const DirichletTeacherParams& p0, double k, NoiseSource& mc_noise) {
  DirichletTeacherParams p = p0;
  validate_params(p, "dirichlet_teacher");
  if (!(k > 0.0 && std::isfinite(k)))
    throw ParamError(fmt::format("dirichlet_teacher: k = {} must be finite and > 0", k));
  const DirichletParams d = mechanism_params(p, k);
  QueryCost c;
  c.k = k;
  c.epsilon = dirichlet_epsilon(d);
  if (p.actions == 2) {
    c.delta = std::clamp(dirichlet_delta_exact_m2(k, p.eta, p.tau), 0.0, 1.0);
    c.delta_estimate = c.delta;
    c.delta_exact = true;
  } else {
    const DeltaEstimate e = dirichlet_delta_mc(d, p.delta_samples, mc_noise, p.delta_beta);
    c.delta = e.upper;
    c.delta_estimate = e.estimate;
  }
  if (std::isnan(c.epsilon) || std::isnan(c.delta))
    throw Error(fmt::format("dirichlet_teacher: (epsilon, delta) at k = {} is NaN", k));
  return c;
}

void eta_floor(std::span<const double> p, double eta, std::span<double> out) {
  DPRL_CHECK(p.size() == out.size());
  const double m = static_cast<double>(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) out[i] = (1.0 - m * eta) * p[i] + eta;
}

namespace {
DirichletTeacherParams validated(DirichletTeacherParams p) {
  validate_params(p, "dirichlet_teacher");
  return p;
}
}  // namespace

DirichletTeacher::DirichletTeacher(const DirichletTeacherParams& p, NoiseSource& mc_noise)
    : p_(validated(p)), mc_noise_(mc_noise), k_(p_.k0), alpha_(p_.actions) {}

const QueryCost& DirichletTeacher::current_cost() {
  if (j_ >= costs_.size()) {
    costs_.resize(j_ + 1);
    have_cost_.resize(j_ + 1, false);
  }
  if (!have_cost_[j_]) {
    costs_[j_] = dirichlet_query_cost(p_, k_, mc_noise_);
    have_cost_[j_] = true;
  }
  return costs_[j_];
}

double DirichletTeacher::current_k() const {
  if (switched_ || !(k_ > 0.0) || k_ < p_.k_floor) return 0.0;
  return k_;
}

void DirichletTeacher::advance() {
  ++j_;
  k_ *= p_.decay;
}

void DirichletTeacher::input_independent(std::span<double> out, NoiseSource& noise) const {
  const int m = p_.actions;
  if (p_.after_floor == "uniform") {
    std::fill(out.begin(), out.end(), 1.0 / m);
  } else if (p_.after_floor == "dirichlet_ones") {
    const std::vector<double> ones(m, 1.0);
    noise.dirichlet(ones, out);
  } else {  // one_hot
    const int a = std::min(m - 1, static_cast<int>(noise.uniform() * m));
    std::fill(out.begin(), out.end(), 0.0);
    out[a] = 1.0;
  }
}

DirichletTeacher::Answer DirichletTeacher::answer(std::span<const double> p, std::span<double> out,
                                                  NoiseSource& noise) {
  const int m = p_.actions;
  if (p.size() != static_cast<std::size_t>(m) || out.size() != p.size())
    throw ParamError(
        fmt::format("dirichlet_teacher: policy of {} entries, actions = {}", p.size(), m));
  ++queries_;
  auto switch_now = [&] {
    if (!switched_) switched_at_ = queries_ - 1;
    switched_ = true;
  };
  if (!switched_ && current_k() == 0.0) switch_now();
  if (!switched_ && (p_.budget_epsilon > 0 || p_.budget_delta > 0)) {
    const QueryCost& c = current_cost();
    if ((p_.budget_epsilon > 0 && eps_sum_ + c.epsilon > p_.budget_epsilon) ||
        (p_.budget_delta > 0 && delta_sum_ + c.delta > p_.budget_delta)) {
      budget_exhausted_ = true;
      switch_now();
    }
  }
  if (switched_) {
    if (p_.after_floor == "none") return {0.0, false, false};
    input_independent(out, noise);
    return {0.0, true, false};
  }
  double sum = 0.0;
  for (double v : p) {
    if (!(std::isfinite(v) && v >= 0.0))
      throw DataError(fmt::format("dirichlet_teacher: policy entry {} is not a probability", v));
    sum += v;
  }
  if (std::fabs(sum - 1.0) > 1e-6)
    throw DataError(fmt::format("dirichlet_teacher: policy sums to {}, not 1", sum));
  const QueryCost& c = current_cost();
  eta_floor(p, p_.eta, alpha_);
  for (double& a : alpha_) a *= k_;
  noise.dirichlet(alpha_, out);
  ++costs_[j_].queries;
  ++private_queries_;
  eps_sum_ += c.epsilon;
  delta_sum_ += c.delta;
  return {k_, true, true};
}

std::vector<QueryCost> DirichletTeacher::used_costs() const {
  std::vector<QueryCost> out;
  for (std::size_t j = 0; j < costs_.size(); ++j)
    if (have_cost_[j] && costs_[j].queries > 0) out.push_back(costs_[j]);
  return out;
}

PaperMatched paper_matched(const DirichletTeacherParams& p0, double target_epsilon,
                           double target_delta, NoiseSource& mc_noise) {
  DirichletTeacherParams p = p0;
  validate_params(p, "dirichlet_teacher");
  const int m = p.actions;
  const double k = p.k0;
  PaperMatched out;
  out.lgamma_part_k0 = lgamma_part(k, p.eta, m);
  // tau: the largest with delta(k0) <= target_delta (delta grows with tau)
  if (m == 2) {
    auto delta = [&](double tau) { return dirichlet_delta_exact_m2(k, p.eta, tau); };
    double lo = -700.0, hi = std::log(p.eta);  // log tau
    if (delta(std::exp(lo)) > target_delta) {
      out.note = "no tau in (0, eta] gives the target delta";
      return out;
    }
    if (delta(std::exp(hi)) <= target_delta) {
      lo = hi;
    } else {
      // bisection down to adjacent doubles (no tolerance), keeping delta(e^lo) <= target_delta
      const auto within = [&](double x) { return delta(std::exp(x)) <= target_delta ? 1.0 : -1.0; };
      lo = find_boundary(within, lo, hi, {.rel_tol = 0.0, .max_steps = 200}).lo;
    }
    out.tau = std::exp(lo);
    out.delta_k0 = delta(out.tau);
  } else {
    // one sample of the vertex's Dirichlet; the empirical CDF of min_i x_i is within t of the
    // truth at every tau at once with probability >= 1 - delta_beta (Dvoretzky-Kiefer-Wolfowitz
    // with Massart's constant), so the tau chosen from it keeps a certified delta
    std::vector<double> alpha(m, k * p.eta), x(m), mins(p.delta_samples);
    alpha[m - 1] = k * (1.0 - (m - 1) * p.eta);
    for (auto& v : mins) {
      mc_noise.dirichlet(alpha, x);
      v = *std::min_element(x.begin(), x.end());
    }
    std::sort(mins.begin(), mins.end());
    const double t = hoeffding(p.delta_samples, p.delta_beta);
    const auto n = static_cast<double>(p.delta_samples);
    const double allowed = std::floor((target_delta - t) * n);
    if (allowed < 0) {
      out.note = "the Monte Carlo half width alone exceeds the target delta";
      return out;
    }
    const auto c = static_cast<std::size_t>(allowed);
    out.tau = c < mins.size() ? std::min(mins[c], p.eta) : p.eta;
    const auto below = std::lower_bound(mins.begin(), mins.end(), out.tau) - mins.begin();
    out.delta_k0 = std::min(1.0, static_cast<double>(below) / n + t);
    if (!(out.tau > 0)) {
      out.note = "no tau in (0, eta] gives the target delta";
      return out;
    }
  }
  const double lf = (1.0 - m * p.eta) * p.lipschitz;
  const double room = target_epsilon - out.lgamma_part_k0;
  if (!(room > 0)) {
    out.note = fmt::format("the lgamma part of eq. 12 at k0 = {} is {:.4g} >= {}", k,
                           out.lgamma_part_k0, target_epsilon);
    return out;
  }
  out.adjacency = room / (std::sqrt(static_cast<double>(m)) * lf * k * std::log(1.0 / out.tau));
  out.attainable = true;
  return out;
}

void DirichletTeacher::sync_state(StateIo& io) {
  io.section("dirichlet_teacher");
  std::uint64_t j = j_;
  // the cost table grows to the index on the next query: bounded (one step per episode or
  // epoch; 4M of them is beyond any run)
  io.bounded(j, std::uint64_t{0}, std::uint64_t{1} << 22, "schedule index");
  j_ = static_cast<std::size_t>(j);
  io(k_);
  io(switched_);
  io(budget_exhausted_);
  constexpr std::int64_t kMax = std::int64_t{1} << 62;
  io.bounded(switched_at_, std::int64_t{-1}, kMax, "switched at query");
  io.bounded(queries_, std::int64_t{0}, kMax, "queries");
  io.bounded(private_queries_, std::int64_t{0}, kMax, "private queries");
  io(eps_sum_);
  io(delta_sum_);
  std::uint64_t n = costs_.size();
  io.bounded(n, std::uint64_t{0}, std::uint64_t{1} << 22, "query costs");
  if (io.loading()) {
    costs_.assign(n, QueryCost{});
    have_cost_.assign(n, false);
  }
  for (std::size_t i = 0; i < costs_.size(); ++i) {
    QueryCost& c = costs_[i];
    bool have = have_cost_[i];
    io(have);
    have_cost_[i] = have;
    io(c.k);
    io(c.epsilon);
    io(c.delta);
    io(c.delta_estimate);
    io(c.delta_exact);
    io.bounded(c.queries, std::int64_t{0}, kMax, "queries at a concentration");
  }
}

}  // namespace dprl::privacy
