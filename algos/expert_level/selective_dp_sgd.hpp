// algos/expert_level/: paper 000, DataRelease, expert queries, selective DP-SGD (this file),
// the fixed-width PPO layers; docs/architecture.md.
//
// Selective DP-SGD (Algorithm 3) and expert-level DP-SGD (Algorithm 4) of Sharma, Vinod,
// Thakurta, Agarwal, Balle, Dann, Raghuveer, "Preserving Expert-Level Privacy in Offline
// Reinforcement Learning" (TMLR), on top of the offline learners (discrete_cql, discrete_bcq).
//
// Each iteration draws B ~ Bernoulli(p):
//   B = 1: one expert-level DP-SGD step on D_unst (Alg. 4): every expert sampled independently with
//          probability q0 = b / m (m = ALL experts of the original data, public), one transition
//          per sampled expert, the per-expert gradient over all trained networks clipped jointly to
//          C, Gaussian noise of std s C on the sum, divided by b (privacy/user_dp_sgd.hpp);
//   B = 0: one ordinary step on a uniform batch of b transitions of D_stable (post-processing of
//          the release: no privacy cost). With D_stable empty the iteration does nothing (spec
//          item 11) and is counted as skipped.
// Both kinds update the same networks and the same Adam state. The expert-level DP-SGD baseline
// is p = 1 with D_stable empty and D_unst = all the data.
//
// Training runs until the budget (epsilon2, delta2) is spent (paper sec. 6), by one of two
// accountings (privacy/calibration.hpp's steps_within_budget finds the step counts):
//   sound (default)  the Bernoulli draws are data-independent, so the analysis conditions on them:
//                    the run is K Poisson-subsampled Gaussian steps at q0 = b/m, K = the number of
//                    noisy steps; iterations continue until K reaches the largest count the budget
//                    affords. Valid whoever sees the intermediate models.
//   paper            N iterations each accounted as a Poisson-subsampled Gaussian at q = p b / m,
//                    N the largest count the budget affords (the paper's rule). It treats the coin
//                    as extra subsampling, which holds only if nobody can tell noisy from stable
//                    steps; when intermediate models are observable the true per-iteration
//                    profile is p delta_{q0}(eps) >= delta_{p q0}(eps), so the figure is
//                    optimistic (spec item 14). Reproduction only: the record says formal: false.
// With p = 0 (or epsilon2 = 0) no DP step runs and `stable_steps` ordinary steps are taken.
//
// Noise (as the offline learners, algos/core/private_noise.hpp and privacy/secure_release.hpp):
// `os-entropy` (default) draws the noise, the expert sampling and the coins from OS entropy and
// releases each noisy sum through the secure snapped release, whose noise std covers C + sqrt(n) g
// (n noised values, g the sampler's grid); `seeded` derives all of them from the seed and the
// privacy parameters: reproducible, not formal, and warned once per process on stderr.
//
// Guarantee (sound mode, OS-entropy noise): the trained networks and everything computed from
// them are (epsilon2, delta2)-DP at the expert level with respect to D_unst given D_stable:
// add/remove one expert together with all of its transitions (one clipped vector per step). The
// pipeline composes this with the release by basic composition: eps1 + eps2, delta1 + delta2
// (Thm. 5.6). Seeded noise makes the run reproducible and not formal.
//
// | param            | range            | meaning                                          |
// |------------------|------------------|--------------------------------------------------|
// | p                | [0, 1]           | probability of a DP step on D_unst               |
// | noise_multiplier | (0, 1e6]         | s: noise std / C                                 |
// | clip_norm        | (0, inf)         | C per sampled expert (paper: 1.0)                |
// | epsilon2         | [0, inf)         | budget of the DP-SGD part (> 0 when p > 0)       |
// | delta2           | [0, 1)           | its delta (> 0 when p > 0)                       |
// | accounting       | sound | paper    | see above                                        |
// | accountant       | pld | a registered accountant: rdp, pld, best (accountant.hpp)        |
// | noise            | os-entropy|seeded| noise, expert sampling and coin randomness       |
// | stable_steps     | [0, 1e12]        | ordinary steps when no DP step runs              |
// | max_iterations   | [1, 1e12]        | safety cap on iterations (sound mode, small p)   |
#pragma once

#include <cstdint>
#include <string>

#include "algos/offline/offline_learner.hpp"
#include "engine/data/dataset.hpp"
#include "engine/run_dir.hpp"
#include "privacy/accountant.hpp"

namespace dprl::privacy {
class ReleaseTap;
}

namespace dprl::algos {

struct SelectiveDpSgdParams {
  double p = 1.0;
  double noise_multiplier = 10.0;
  double clip_norm = 1.0;
  double epsilon2 = 0.0;
  double delta2 = 0.0;
  std::string accounting = "sound";
  std::string accountant = "pld";
  std::string noise = "os-entropy";
  std::int64_t stable_steps = 0;
  std::int64_t max_iterations = 1000000000;

  template <class V>
  void visit(V& v) {
    v("p", p, Range::closed(0, 1), "probability of a DP step on the unstable data");
    v("noise_multiplier", noise_multiplier, Range::left_open(0, 1e6), "s: noise std / clip_norm");
    v("clip_norm", clip_norm, Range::positive(), "L2 bound per sampled expert");
    v("epsilon2", epsilon2, Range::non_negative(), "epsilon of the DP-SGD part");
    v("delta2", delta2, Range::right_open(0, 1), "delta of the DP-SGD part");
    v("accounting", accounting, Choices{{"sound", "paper"}},
      "sound: noisy steps at q = b/m; paper: every iteration at q = p b/m (optimistic)");
    v("accountant", accountant, privacy::accountant_choices(), "privacy accountant");
    v("noise", noise, Choices{{"os-entropy", "seeded"}},
      "noise, sampling and coin randomness (seeded: reproducible, not formal)");
    v("stable_steps", stable_steps, Range::closed(0, 1e12),
      "ordinary steps on the stable data when no DP step runs (p = 0 or epsilon2 = 0)");
    v("max_iterations", max_iterations, Range::closed(1, 1e12), "cap on iterations");
  }
  void check() const;
};

struct SelectiveResult {
  std::int64_t iterations = 0;     // Bernoulli draws (Alg. 3's n)
  std::int64_t noisy_steps = 0;    // DP-SGD steps on D_unst
  std::int64_t stable_steps = 0;   // ordinary steps on D_stable
  std::int64_t skipped = 0;        // B = 0 with D_stable empty
  std::int64_t planned_noisy = 0;  // sound: the noisy steps the budget affords
  double epsilon = 0;              // spent by the DP-SGD part (0 without DP steps)
  bool capped = false;             // max_iterations stopped the run before the budget was spent
  std::optional<PrivacyReport> report;  // the DP-SGD part's record (none without DP steps)
};

// What a privacy audit changes in a selective run (algos/run/selective_audit.hpp): the
// population gains extra_experts canary experts while q0 = b / m is kept (the expected batch grows
// to q0 (m + extra_experts); the accounting is unchanged), experts are clipped at clip_factor C,
// and every noisy step's release goes through the tap (privacy/release_tap.hpp; channel 0, round
// = the noisy step, sensitivity C).
struct SelectiveAudit {
  std::int64_t extra_experts = 0;
  double clip_factor = 1.0;
  privacy::ReleaseTap* tap = nullptr;
};

// Trains `learner` (already configured; its own dp section is not used) on the two datasets
// (either may be null = empty; both must share the env's spaces) with batch size b and m experts.
// Evaluates through ctx (metrics.csv rows with noisy_steps and stable_steps columns) and writes
// privacy_ledger.json into the run directory when DP steps ran.
SelectiveResult train_selective(OfflineLearner& learner, const Dataset* stable,
                                const Dataset* unstable, std::int64_t num_experts, int batch_size,
                                const SelectiveDpSgdParams& p, TrainContext& ctx,
                                const SelectiveAudit* audit = nullptr);

}  // namespace dprl::algos
