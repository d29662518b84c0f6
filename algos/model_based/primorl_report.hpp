// The guarantee record and the side files of a PriMORL / MOPO run (see primorl.hpp for what the
// guarantee covers).
#pragma once

#include <cstdint>
#include <string>

#include "algos/model_based/ensemble_train.hpp"
#include "algos/model_based/primorl.hpp"
#include "engine/run_dir.hpp"

namespace dprl::algos::model_based {

// What the pipeline measured, for the record.
struct PipelineFacts {
  std::size_t train_units = 0;        // the training split's units
  std::size_t denominator_units = 0;  // K of q K: public_trajectories, or train_units
  std::size_t test_units = 0;
  std::size_t train_transitions = 0;
  std::int64_t rounds = 0;  // T actually run
  double epsilon_rdp = 0;   // the run directory's ledger: all its model trainings
  double epsilon_spent_before = 0;  // on that ledger before this model's training
  double epsilon_pld = 0;  // charged ahead in blocks: at the planned rounds of each block
  double epsilon_rdp_classical = 0;
  double noise_std = 0;           // z C / (q K)
  double released_noise_std = 0;  // drawn (inflated to cover snapping with a secure source)
  double sampler_tv = 0;  // summed over the rounds' releases (privacy/secure_release.hpp)
  std::string noise_source;
  bool stopped_by_budget = false;
};

// data_source: the experiment's `data:` path ("" = the pipeline's own DDPG collection, whose
// units are single trajectories; a dataset's units are its user ids).
PrivacyReport primorl_privacy_report(const PrimorlParams& p, const PipelineFacts& f,
                                     const std::string& data_source = "");

// round,test_mse,test_std,epsilon rows (the test-split curve of model training); with private
// stats (only for runs without a guarantee) also the mean sampled clients per round, the mean
// unclipped client update norm and the fraction of clipped clients, which are computed from
// private data without noise.
std::string model_curve_csv(const TrainResult& r, bool with_private_stats);

// Wall-clock and process CPU seconds per stage.
struct StageTimes {
  double data_s = 0, model_s = 0, policy_s = 0, eval_s = 0;
  double data_cpu_s = 0, model_cpu_s = 0, policy_cpu_s = 0;
};
std::string timing_json(const StageTimes& t);

}  // namespace dprl::algos::model_based
