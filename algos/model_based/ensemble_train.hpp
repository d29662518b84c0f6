// Training the probabilistic ensemble: TDP MODEL ENSEMBLE TRAINING (PriMORL Algorithms 1-3) and
// the non-private pooled training of the MOPO baseline.
//
// TDP (PriMORL, "Differentially Private Deep Model-Based Reinforcement Learning", Alg. 2): for
// t = 0..T-1, Poisson-sample the training units (one trajectory each) at rate q from the
// NoiseSource (secret sampling); for each sampled unit, start from the current ensemble theta(t),
// run E local epochs over the unit's transitions (shuffled by a stream derived from (seed, t,
// the unit's id), never from its position in the table, so adding or removing another unit
// changes no client's stream; batches of B, the last one smaller), each step
// theta <- theta - lr grad L(theta; b) (plain SGD, Alg. 2 line 12; or Adam with fresh moments per
// client), then projected theta <- theta_start + ENSEMBLECLIP(theta - theta_start; C) after EVERY
// step (Alg. 2 line 13); the server adds sum_k Delta_k / (qK) + N(0, (zC/qK)^2)
// (privacy/dp_fedavg.hpp). Clients run in parallel on a ThreadPool; each writes its own slot and
// the sum runs in sampled order, so the result is identical at any thread count.
//
// Accounting: the rounds up to the next evaluation (eval_every) are charged to the RDP ledger as
// self-composed poisson_sampled(q, gaussian(z)) before the first of them runs, so every released
// test figure and model is paid for before it exists; a persistent ledger (the run directory's)
// makes the charge durable first. With a budget a block holds only the rounds it affords, and
// training stops before the first round it cannot afford (as round-by-round charging). The PLD
// ledger is charged ahead in blocks of pld_block rounds (a PLD charge costs up to ~0.3 s), so it
// never lags a release and over-counts by less than a block if training stops early.
// Variants: dp (clip and noise, z > 0), no_noise (clip only, z = 0: no finite epsilon),
// no_clip (neither; PriMORL App. E: diverges on Cartpole and Pendulum).
// Selection: every eval_every rounds the mean over members of the public test split's MSE is
// measured; the best snapshot (public data: free) is returned when select_best is set. The
// reported epsilon is at the rounds actually run.
//
// Pooled (MOPO, Yu et al. 2020, and its code's defaults): minibatches of all training
// transitions, Adam (lr 1e-3, batch 256), one epoch = one pass; stop after `patience` epochs
// without a 1% relative improvement of the test MSE, keeping the best snapshot.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "algos/model_based/model_data.hpp"
#include "algos/model_based/prob_ensemble.hpp"
#include "engine/thread_pool.hpp"

namespace dprl::privacy {
class NoiseSource;
class Ledger;
class ReleaseTap;
}  // namespace dprl::privacy

namespace dprl::algos::model_based {

struct TdpConfig {
  std::string variant = "dp";  // dp | no_noise | no_clip
  double q = 1e-3;
  double z = 0.52;
  double clip_norm = 1.0;
  std::string clipping = "per_layer";  // flat | per_layer
  std::int64_t rounds = 7000;
  int local_epochs = 1;
  int batch_size = 16;
  double lr = 1e-3;
  std::string local_optimizer = "sgd";  // sgd | adam
  std::int64_t eval_every = 100;
  bool select_best = true;
  std::int64_t pld_block = 500;
  // K, the public figure the fixed denominator q K uses (0: the table's units, then declared
  // public). It need not equal the table's count: the sample is drawn from the table's units at
  // rate q whatever K is, so K only sets the scale (no check compares it with the private count).
  // An audit sets it to the run's units plus its canaries, so that q K does not depend on which
  // canaries are included.
  std::int64_t units = 0;
};

struct TdpProgress {
  std::int64_t round = 0;   // rounds done
  double test_mse = 0;      // mean over members
  double test_std = 0;      // mean predicted standard deviation on the public split
  double epsilon = 0;       // RDP ledger (inf when not private)
  double mean_norm = 0;     // mean unclipped client update norm since the last report
  double clipped = 0;       // fraction of clients whose update was projected
  double mean_clients = 0;  // mean sampled clients per round since the last report
};

struct TrainResult {
  std::int64_t rounds = 0;  // rounds (TDP) or epochs (pooled) run
  std::int64_t best_round = 0;
  double best_test_mse = 0;
  double final_test_mse = 0;
  std::int64_t clients = 0;     // sampled clients over all rounds
  double mean_norm = 0;         // mean unclipped client update norm
  double clipped_fraction = 0;  // clients projected at least once
  bool stopped_by_budget = false;
  // the PLD ledger (informational, no budget) could not bound epsilon (e.g. z = 1e-4): its
  // charging stopped and the PLD epsilon is infinite
  bool pld_unbounded = false;
  double released_noise_std = 0;  // sd drawn per parameter (inflated for a secure source)
  double sampler_tv_per_round = 0;  // the release's SecurePlan::sampler_tv (secure_release.hpp)
  std::vector<TdpProgress> curve;
};

// The stream of a client's local shuffles in round t: derived from (seed, t, the unit's user id).
std::uint64_t client_stream(std::uint64_t seed, std::int64_t round, std::int64_t unit_id);

// Throws ParamError naming tdp.* keys (q K < 1, clip_norm <= 0, ...).
void check_tdp(const TdpConfig& cfg, std::size_t units, const ProbEnsemble& model);
// check_tdp, then the per-parameter noise sd a round draws (0 without noise; with a secure source
// inflated to cover the snapping; ParamError when the snapping cannot be covered).
double tdp_released_noise_std(const TdpConfig& cfg, std::size_t units, const ProbEnsemble& model,
                              bool secure);

// rdp_ledger / pld_ledger may be null (no accounting: the no_noise and no_clip variants).
TrainResult train_ensemble_tdp(ProbEnsemble& model, const TransitionTable& train,
                               const TransitionTable& test, const TdpConfig& cfg,
                               std::uint64_t seed, privacy::NoiseSource& source,
                               privacy::Ledger* rdp_ledger, privacy::Ledger* pld_ledger,
                               ThreadPool& pool,
                               const std::function<void(const TdpProgress&)>& on_eval = {},
                               privacy::ReleaseTap* tap = nullptr);

struct PooledConfig {
  int batch_size = 256;
  double lr = 1e-3;
  int max_epochs = 200;
  int patience = 5;
};

TrainResult train_ensemble_pooled(ProbEnsemble& model, const TransitionTable& train,
                                  const TransitionTable& test, const PooledConfig& cfg,
                                  std::uint64_t seed,
                                  const std::function<void(const TdpProgress&)>& on_eval = {});

// Mean over members of the MSE of the means on a table (chunks of 8192 columns).
double test_mse(const ProbEnsemble& model, const float* params, const TransitionTable& t);
// Mean over members, outputs and samples of the predicted standard deviation exp(logvar / 2).
double test_std(const ProbEnsemble& model, const float* params, const TransitionTable& t);

}  // namespace dprl::algos::model_based
