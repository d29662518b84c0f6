// Timing of PriMORL's two hot loops (`dprl bench primorl`): one DP-FedAvg round (every sampled
// trajectory's local training with projection after each step, clipping, the sum and the server
// noise, and the ledger charge) and one batched model rollout step (all members' prediction, the
// penalty, member choice and Gaussian sampling). Synthetic data of the given shapes; one thread;
// the round's noise from a seeded source (continuous Gaussian) or OS entropy (the secure snapped
// release a private run uses); medians of `reps` repetitions of the calling thread's CPU time (the
// machine is shared).
#pragma once

#include <string>
#include <vector>

namespace dprl::algos::model_based {

struct PrimorlBenchConfig {
  int obs_dim = 3;  // Pendulum
  int act_dim = 1;
  std::vector<int> hidden{64, 64};
  int members = 3;
  int clients = 30;     // q K trajectories per round
  int traj_len = 200;   // transitions per trajectory
  int batch_size = 16;  // local batch
  std::string clipping = "per_layer";
  int rollout_batch = 50000;
  std::string penalty = "mpd";
  std::string noise = "seeded";  // seeded, or os-entropy (the snapped discrete release)
  int reps = 5;
};

struct PrimorlBenchResult {
  double round_ms = 0;         // one DP-FedAvg round
  double rollout_step_ms = 0;  // one model step of rollout_batch states
  double local_steps = 0;      // local SGD steps per round
  std::size_t params = 0;      // ensemble parameters (with padding)
};

PrimorlBenchResult bench_primorl(const PrimorlBenchConfig& cfg);

}  // namespace dprl::algos::model_based
