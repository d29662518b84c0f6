// A greedy (or epsilon-greedy) policy over a table of action values, and its checkpoint file.
//
// The observation must be a Discrete index (Taxi, chain). act_discrete returns the argmax of
// q[s, .] over allowed actions (the action mask when use_mask), lowest index on ties; with
// explore > 0 it instead acts uniformly at random with that probability, from a stream seeded by
// begin_episode (so evaluation stays reproducible).
//
// Checkpoint (JSON, written atomically): {"format": "dprl-policy", "version": 1,
// "type": "tabular_greedy", "env": id, "num_states": S, "num_actions": A, "use_mask": b,
// "explore": p, "q": [S*A doubles, state-major], "checksum": FNV-1a 64 of the q values' bytes as
// hex}. "explore" may be absent (0).
// Time-indexed tables (finite-horizon learners such as LSVI-UCB): with horizon H > 1 the table has
// H * S * A values ([(t * S + s) * A + a]); the policy counts its steps from begin_episode and acts
// on row t (the last row after H steps). The file then carries "horizon": H (absent means 1).
// A wrong format, version, size or checksum is a DataError naming the file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/policy.hpp"
#include "engine/rng.hpp"

namespace dprl::algos {

class TabularGreedyPolicy final : public Policy {
 public:
  TabularGreedyPolicy(std::string env_id, int num_states, int num_actions, std::vector<double> q,
                      bool use_mask, double explore = 0.0, int horizon = 1);
  std::string name() const override { return "tabular_greedy"; }
  void begin_episode(std::uint64_t seed) override {
    rng_.seed_with(seed);
    t_ = 0;
  }
  std::int64_t act_discrete(std::span<const float> obs,
                            std::span<const std::uint8_t> mask) override;

  void save(const std::filesystem::path& file) const;
  static TabularGreedyPolicy load(const std::filesystem::path& file);

  const std::string& env_id() const { return env_id_; }
  int num_states() const { return num_states_; }
  int num_actions() const { return num_actions_; }
  int horizon() const { return horizon_; }
  const std::vector<double>& q() const { return q_; }

 private:
  std::string env_id_;
  int num_states_;
  int num_actions_;
  std::vector<double> q_;
  bool use_mask_;
  double explore_;
  int horizon_;
  int t_ = 0;
  Rng rng_;
};

// argmax over a row of action values (allowed entries only when mask is non-empty).
int greedy_action(const double* q_row, int num_actions, std::span<const std::uint8_t> mask);

}  // namespace dprl::algos
