// Taxi: pick up a passenger on a 5x5 grid and drop them at their destination (Dietterich, 2000).
//
// Matches Gymnasium gymnasium/envs/toy_text/taxi.py as registered for Taxi-v3 (v1.2.3; the same
// as Taxi-v4 of 1.3 with is_rainy and fickle_passenger off), with TimeLimit 200.
//
// Map (| is a wall, : is passable):   +---------+
//                                     |R: | : :G|
//                                     | : | : : |
//                                     | : : : : |
//                                     | | : | : |
//                                     |Y| : |B: |
//                                     +---------+
// Landmarks (row, col): 0 = R (0,0), 1 = G (0,4), 2 = Y (4,0), 3 = B (4,3).
// State s = ((taxi_row * 5 + taxi_col) * 5 + pass_loc) * 4 + dest_idx in [0, 500); pass_loc 4 is
// "in the taxi". Observation: s as one float (Discrete(500)).
// Actions (Discrete(6)): 0 south, 1 north, 2 east, 3 west, 4 pickup, 5 drop-off. Walls block only
// east/west moves; moves into the border or a wall leave the state unchanged.
// Rewards: step_reward for every move (including bumps) and for a correct pickup or a drop-off at
// a landmark other than the destination (the passenger is left there); illegal_reward for a
// pickup or drop-off that changes nothing; dropoff_reward for a drop-off at the destination,
// which terminates. Reset: uniform over the 300 states with pass_loc < 4 and pass_loc != dest_idx.
// action_mask(): Gymnasium's mask of the current state (1 exactly when the action changes it).
// tabular_model(): the deterministic model; states with the passenger at the destination are
// flagged absorbing (the episode has ended there) but keep Gymnasium's transitions.
//
// | parameter         | default | range           | meaning                                  |
// |-------------------|---------|-----------------|------------------------------------------|
// | step_reward       | -1      | [-1e6, 1e6]     | every step that is not a pickup/drop-off |
// | illegal_reward    | -10     | [-1e6, 1e6]     | pickup or drop-off that changes nothing  |
// | dropoff_reward    | 20      | [-1e6, 1e6]     | delivery at the destination (terminates) |
// | max_episode_steps | 200     | [1, 1e9]        | TimeLimit                                |
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/env.hpp"
#include "engine/params.hpp"
#include "engine/rng.hpp"

namespace dprl::envs {

struct TaxiParams {
  // Gymnasium taxi.py rewards
  double step_reward = -1;
  double illegal_reward = -10;
  double dropoff_reward = 20;
  int max_episode_steps = 200;  // Taxi-v3 registration

  template <class V>
  void visit(V& v) {
    v("step_reward", step_reward, Range::closed(-1e6, 1e6),
      "reward of moves, bumps, pickups and drop-offs at another landmark");
    v("illegal_reward", illegal_reward, Range::closed(-1e6, 1e6),
      "reward of a pickup or drop-off that changes nothing");
    v("dropoff_reward", dropoff_reward, Range::closed(-1e6, 1e6),
      "reward of the drop-off at the destination (terminates)");
    v("max_episode_steps", max_episode_steps, Range::closed(1, 1e9),
      "time limit: truncated on this step");
  }
};

class Taxi final : public Env {
 public:
  using Params = TaxiParams;
  static constexpr int kNumStates = 500;
  static constexpr int kNumActions = 6;

  explicit Taxi(const Params& p = Params{});

  std::vector<double> state() const override { return {static_cast<double>(s_)}; }
  void action_mask(std::span<std::uint8_t> mask) const override;
  const TabularModel* tabular_model() const override { return &model_; }
  ParamMap params() const override { return dump_params(p_); }

  static int encode(int taxi_row, int taxi_col, int pass_loc, int dest_idx) {
    return ((taxi_row * 5 + taxi_col) * 5 + pass_loc) * 4 + dest_idx;
  }
  // {taxi_row, taxi_col, pass_loc, dest_idx}
  static std::array<int, 4> decode(int s);
  // The map, for drawing: a wall between columns col and col + 1 of row (col in [0, 3]), and
  // {row, col} of landmark i (0 R, 1 G, 2 Y, 3 B).
  static bool wall_east_of(int row, int col);
  static std::array<int, 2> landmark(int i);

 private:
  friend class Env;  // Env::step_as
  void do_reset(std::uint64_t seed, std::span<float> obs) override;
  StepResult do_step(std::int64_t action, std::span<float> obs) override;
  void do_set_state(std::span<const double> s) override;
  void do_sync_state(StateIo& io) override;

  // one precomputed transition: next state, reward kind (0 step, 1 illegal, 2 drop-off)
  struct Cell {
    std::int16_t next;
    std::uint8_t kind;
    std::uint8_t terminal;
  };

  Params p_;
  std::array<double, 3> rewards_{};
  std::array<Cell, kNumStates * kNumActions> table_{};
  std::array<std::uint8_t, kNumStates> mask_bits_{};  // bit a set when action a changes s
  std::vector<std::int16_t> initial_states_;          // the 300 reset states
  TabularModel model_;
  int s_ = 0;
  Rng rng_;
};

}  // namespace dprl::envs
