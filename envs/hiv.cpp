#include "envs/hiv.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "engine/error.hpp"
#include "envs/env_util.hpp"

namespace dprl::envs {
namespace {

// Adams et al. (2004) parameters as in rlpy (per day, per ml)
constexpr double lambda1 = 1e4, lambda2 = 31.98;
constexpr double d1 = 0.01, d2 = 0.01;
constexpr double f = 0.34;
constexpr double k1 = 8e-7, k2 = 1e-4;
constexpr double delta = 0.7;
constexpr double m1 = 1e-5, m2 = 1e-5;
constexpr double NT = 100.0;
constexpr double c = 13.0;
constexpr double rho1 = 1.0, rho2 = 1.0;
constexpr double lambdaE = 1.0, bE = 0.3, Kb = 100.0, d_E = 0.25, Kd = 500.0, deltaE = 0.1;

constexpr double kMaxConcentration = 1e15;

// The right-hand side with the efficacy factors folded in once per step.
struct HivRhs {
  double a1;  // (1 - eps1) k1: infection rate of T1
  double a2;  // (1 - f eps1) k2: infection rate of T2
  double pv;  // (1 - eps2) NT delta: virions per dying infected cell
  HivRhs(double eps1, double eps2)
      : a1((1.0 - eps1) * k1), a2((1.0 - f * eps1) * k2), pv((1.0 - eps2) * NT * delta) {}

  [[gnu::always_inline]] void operator()(double, const std::array<double, 6>& s,
                                         std::array<double, 6>& ds) const {
    const double T1 = s[0], T2 = s[1], T1s = s[2], T2s = s[3], V = s[4], E = s[5];
    const double infect1 = a1 * V * T1;
    const double infect2 = a2 * V * T2;
    const double infected = T1s + T2s;
    const double ib = infected + Kb, id = infected + Kd;
    ds[0] = lambda1 - d1 * T1 - infect1;
    ds[1] = lambda2 - d2 * T2 - infect2;
    ds[2] = infect1 - delta * T1s - m1 * E * T1s;
    ds[3] = infect2 - delta * T2s - m2 * E * T2s;
    ds[4] = pv * infected - c * V - (rho1 * a1 * T1 + rho2 * a2 * T2) * V;
    ds[5] = lambdaE + (bE * infected / ib - d_E * infected / id) * E - deltaE * E;
  }
};

}  // namespace

void hiv_rhs(double eps1, double eps2, const std::array<double, 6>& s, std::array<double, 6>& ds) {
  HivRhs(eps1, eps2)(0.0, s, ds);
}

Hiv::Hiv(const Params& p) : p_(p) {
  validate_params(p_, "hiv");
  ode_.rtol = p_.ode_rtol;
  ode_.atol = p_.ode_atol;
  spec_.id = "hiv";
  spec_.observation = p_.log_observations ? Space::box(6, -5, 8) : Space::box(6, 0, 1e8);
  spec_.action = Space::discrete(4);
  spec_.max_episode_steps = p_.max_episode_steps;
  s_ = p_.initial_state == "healthy" ? kHealthy : kUnhealthy;
}

void Hiv::write_obs(std::span<float> obs) const {
  for (int i = 0; i < 6; ++i)
    obs[i] = static_cast<float>(p_.log_observations ? std::log10(s_[i]) : s_[i]);
}

void Hiv::do_reset(std::uint64_t seed, std::span<float> obs) {
  rng_.seed_with(seed);
  s_ = p_.initial_state == "healthy" ? kHealthy : kUnhealthy;
  write_obs(obs);
}

StepResult Hiv::do_step(std::int64_t action, std::span<float> obs) {
  if (action < 0 || action > 3) [[unlikely]]
    throw_bad_discrete_action(spec_, action);
  double eps1 = kEfficacy1[action];
  double eps2 = kEfficacy2[action];
  if (p_.efficacy_noise_std > 0) {
    // both draws every step, so the stream does not depend on the actions
    const double z1 = rng_.normal();
    const double z2 = rng_.normal();
    if (eps1 > 0) eps1 = std::clamp(eps1 + p_.efficacy_noise_std * z1, 0.0, 1.0);
    if (eps2 > 0) eps2 = std::clamp(eps2 + p_.efficacy_noise_std * z2, 0.0, 1.0);
  }

  State y = s_;
  last_solve_ = ode::dopri5(HivRhs(eps1, eps2), 0.0, p_.days_per_step, y, ode_);
  if (!last_solve_.ok) [[unlikely]]
    throw Error(fmt::format("hiv: the ODE solver failed after {} steps from state [{}]",
                            last_solve_.accepted + last_solve_.rejected, fmt::join(s_, ", ")));
  s_ = y;

  StepResult r;
  const double V = s_[4], E = s_[5];
  r.reward =
      -0.1 * V - p_.drug1_penalty * (eps1 * eps1) - p_.drug2_penalty * (eps2 * eps2) + 1e3 * E;
  write_obs(obs);
  return r;
}

void Hiv::do_set_state(std::span<const double> s) {
  check_state(spec_, s, 6);
  for (std::size_t i = 0; i < 6; ++i)
    if (!(s[i] > 0 && s[i] < kMaxConcentration))
      throw ParamError(
          fmt::format("hiv: state component {} is {}; concentrations must be in "
                      "(0, 1e15)",
                      i, format_param(s[i])));
  std::copy(s.begin(), s.end(), s_.begin());
}

void Hiv::do_sync_state(StateIo& io) {
  io.section("hiv");
  io(s_);
  io(rng_);
}

}  // namespace dprl::envs
