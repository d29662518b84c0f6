// HIV treatment: choosing two drugs over time for a patient model (Adams et al. 2004, as used by
// Ernst et al. 2006 for structured treatment interruptions).
//
// Matches rlpy's HIVTreatment domain (rlpy/rlpy commit af25d2011fff, rlpy/Domains/HIVTreatment.py)
// with the paper settings of Sharma et al., "Preserving Expert-Level Privacy in Offline
// Reinforcement Learning" (TMLR), appendix B.1 (20 days per step, 50 steps,
// drug penalties and efficacy noise as parameters). rlpy steps SciPy's odeint (LSODA, rtol = atol
// = 1.49e-8); we integrate the same ODE with our own Dormand-Prince 5(4) (envs/ode.hpp) and agree
// with odeint to a relative 1e-5 over whole episodes (tested at 1e-4 in tests/envs/hiv_test.cpp on
// fixtures from tools/fixtures/gen_hiv_fixtures.py). The Jacobian has eigenvalues down to about
// -18 per day, so the explicit method is stability-limited to steps of about 0.2 days (roughly
// 600-1300 right-hand-side evaluations per 20-day step, about 17 ns each with the solver's
// overhead); docs/envs_lunar_hiv.md has the throughput against odeint.
//
// State (float64, per ml) [T1, T2, T1*, T2*, V, E]: uninfected CD4+ T cells, uninfected
// macrophages, the infected versions of both, free virus, cytotoxic T lymphocytes. This is rlpy's
// vector order (its state_names label list differs from it). Reset: the deterministic "unhealthy
// steady state" [163573, 5, 11945, 46, 63919, 24] (or the healthy equilibrium
// [967839, 621, 76, 6, 415, 353108] with initial_state: healthy).
// Action: Discrete(4) -> efficacies (eps1, eps2): 0 none (0, 0), 1 RTI (0.7, 0), 2 PI (0, 0.3),
// 3 both (0.7, 0.3); constant over the step's days_per_step days.
// Reward, from the raw state after the step:
//   -0.1 V - drug1_penalty eps1^2 - drug2_penalty eps2^2 + 1000 E.
// Observation: log10 of the six components, Box(-5, 8) as rlpy's statespace_limits (raw values in
// Box(0, 1e8) with log_observations: false). Never terminates; truncates at max_episode_steps
// (the episode_steps; rlpy's episodeCap).
// Efficacy noise (efficacy_noise_std > 0, the paper's 0.01 variant): each step draws two standard
// normals from the episode's Rng (always both, so the stream does not depend on the actions) and
// adds std * z to the efficacy of each administered drug, clipped to [0, 1]; a drug not given keeps
// efficacy 0. The noisy efficacies drive the ODE and the reward's penalty terms.
// state() is the six raw concentrations; set_state() takes six finite values in (0, 1e15) and
// restarts the step counter (the noise stream continues from the episode's Rng).
//
// | parameter          | default   | range         | meaning                                    |
// |--------------------|-----------|---------------|--------------------------------------------|
// | drug1_penalty      | 20000     | [0, 1e9]      | reward penalty on eps1^2 (RTI)             |
// | drug2_penalty      | 2000      | [0, 1e9]      | reward penalty on eps2^2 (PI)              |
// | days_per_step      | 20        | (0, 1000]     | days integrated per step (rlpy: 5)         |
// | max_episode_steps  | 50        | [1, 1e6]      | steps per episode (rlpy: 200)              |
// | efficacy_noise_std | 0         | [0, 1]        | Gaussian noise on administered efficacies  |
// | initial_state      | unhealthy | unhealthy, healthy | reset state                           |
// | log_observations   | true      | bool          | log10 observations (rlpy's logspace)       |
// | ode_rtol           | 1e-6      | [1e-14, 1e-4] | Dormand-Prince relative tolerance          |
// | ode_atol           | 1e-6      | [1e-14, 1]    | Dormand-Prince absolute tolerance (per ml) |
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/env.hpp"
#include "engine/params.hpp"
#include "engine/rng.hpp"
#include "envs/ode.hpp"

namespace dprl::envs {

struct HivParams {
  // paper 000 appendix B.1 defaults; rlpy's are 5 days x 200 steps (alias hiv-rlpy)
  double drug1_penalty = 20000;
  double drug2_penalty = 2000;
  double days_per_step = 20;
  int max_episode_steps = 50;
  double efficacy_noise_std = 0;
  std::string initial_state = "unhealthy";
  bool log_observations = true;
  // within 1e-5 of odeint over whole episodes; tighter values buy little accuracy against odeint
  // (itself only ~3e-5 accurate) and cost steps
  double ode_rtol = 1e-6;
  double ode_atol = 1e-6;

  template <class V>
  void visit(V& v) {
    v("drug1_penalty", drug1_penalty, Range::closed(0, 1e9),
      "reward penalty on eps1^2, the RTI efficacy squared (Ernst et al. 2006: 20000)");
    v("drug2_penalty", drug2_penalty, Range::closed(0, 1e9),
      "reward penalty on eps2^2, the PI efficacy squared (Ernst et al. 2006: 2000)");
    v("days_per_step", days_per_step, Range::left_open(0, 1000),
      "days of treatment integrated per step (rlpy: 5)");
    v("max_episode_steps", max_episode_steps, Range::closed(1, 1e6),
      "steps per episode; truncated on this step (rlpy's episodeCap: 200)");
    v("efficacy_noise_std", efficacy_noise_std, Range::closed(0, 1),
      "std of Gaussian noise added to each administered drug's efficacy (paper: 0 or 0.01)");
    v("initial_state", initial_state, Choices{{"unhealthy", "healthy"}},
      "reset state: rlpy's unhealthy steady state or the healthy equilibrium");
    v("log_observations", log_observations, "observe log10 of the state (rlpy's logspace)");
    v("ode_rtol", ode_rtol, Range::closed(1e-14, 1e-4), "integrator relative tolerance");
    v("ode_atol", ode_atol, Range::closed(1e-14, 1), "integrator absolute tolerance (per ml)");
  }
};

// The Adams et al. (2004) right-hand side with efficacies eps1 (RTI) and eps2 (PI); time in days.
void hiv_rhs(double eps1, double eps2, const std::array<double, 6>& s, std::array<double, 6>& ds);

class Hiv final : public Env {
 public:
  using Params = HivParams;
  using State = std::array<double, 6>;
  static constexpr State kUnhealthy = {163573, 5, 11945, 46, 63919, 24};
  static constexpr State kHealthy = {967839, 621, 76, 6, 415, 353108};
  static constexpr double kEfficacy1[4] = {0, 0.7, 0, 0.7};
  static constexpr double kEfficacy2[4] = {0, 0, 0.3, 0.3};

  explicit Hiv(const Params& p = Params{});

  std::vector<double> state() const override { return {s_.begin(), s_.end()}; }
  ParamMap params() const override { return dump_params(p_); }

 private:
  friend class Env;  // Env::step_as
  void do_reset(std::uint64_t seed, std::span<float> obs) override;
  StepResult do_step(std::int64_t action, std::span<float> obs) override;
  void do_set_state(std::span<const double> s) override;
  void do_sync_state(StateIo& io) override;

  void write_obs(std::span<float> obs) const;

  Params p_;
  ode::DopriOptions ode_;
  State s_ = kUnhealthy;
  ode::DopriResult last_solve_;
  Rng rng_;
};

}  // namespace dprl::envs
