#include "envs/taxi.hpp"

#include <algorithm>

#include "engine/error.hpp"
#include "envs/env_util.hpp"

namespace dprl::envs {
namespace {

// the map text; the wall character between columns c and c + 1 of row r is kMap[r + 1][2c + 2]
constexpr const char* kMap[7] = {
    "+---------+", "|R: | : :G|", "| : | : : |", "| : : : : |",
    "| | : | : |", "|Y| : |B: |", "+---------+",
};
constexpr int kLocs[4][2] = {{0, 0}, {0, 4}, {4, 0}, {4, 3}};
constexpr int kMaxRow = 4;
constexpr int kMaxCol = 4;

bool east_open(int row, int col) { return kMap[1 + row][2 * col + 2] == ':'; }
bool west_open(int row, int col) { return kMap[1 + row][2 * col] == ':'; }

// landmark index of a cell, or -1
int landmark_at(int row, int col) {
  for (int i = 0; i < 4; ++i)
    if (kLocs[i][0] == row && kLocs[i][1] == col) return i;
  return -1;
}

}  // namespace

std::array<int, 4> Taxi::decode(int s) {
  const int dest_idx = s % 4;
  s /= 4;
  const int pass_loc = s % 5;
  s /= 5;
  const int taxi_col = s % 5;
  s /= 5;
  return {s, taxi_col, pass_loc, dest_idx};
}

bool Taxi::wall_east_of(int row, int col) { return !east_open(row, col); }

std::array<int, 2> Taxi::landmark(int i) { return {kLocs[i][0], kLocs[i][1]}; }

Taxi::Taxi(const Params& p) : p_(p) {
  validate_params(p_, "taxi");
  rewards_ = {p_.step_reward, p_.illegal_reward, p_.dropoff_reward};
  spec_.id = "taxi";
  spec_.observation = Space::discrete(kNumStates);
  spec_.action = Space::discrete(kNumActions);
  spec_.max_episode_steps = p_.max_episode_steps;
  spec_.has_reward_threshold = true;
  spec_.reward_threshold = 8;  // Taxi-v3 registration (optimum about 8.46)
  spec_.has_action_mask = true;

  model_.num_states = kNumStates;
  model_.num_actions = kNumActions;
  model_.initial.assign(kNumStates, 0.0);
  model_.absorbing.assign(kNumStates, false);

  for (int s = 0; s < kNumStates; ++s) {
    const auto [row, col, pass, dest] = decode(s);
    const int here = landmark_at(row, col);
    if (pass < 4 && pass != dest) initial_states_.push_back(static_cast<std::int16_t>(s));
    model_.absorbing[s] = pass == dest;

    // transitions, rule by rule as in Gymnasium's dry transitions
    for (int a = 0; a < kNumActions; ++a) {
      int new_row = row, new_col = col, new_pass = pass;
      std::uint8_t kind = 0;
      bool terminal = false;
      switch (a) {
        case 0:
          new_row = std::min(row + 1, kMaxRow);
          break;
        case 1:
          new_row = std::max(row - 1, 0);
          break;
        case 2:
          if (east_open(row, col)) new_col = std::min(col + 1, kMaxCol);
          break;
        case 3:
          if (west_open(row, col)) new_col = std::max(col - 1, 0);
          break;
        case 4:
          if (pass < 4 && here == pass) {
            new_pass = 4;
          } else {
            kind = 1;
          }
          break;
        case 5:
          if (pass == 4 && here == dest) {
            new_pass = dest;
            terminal = true;
            kind = 2;
          } else if (pass == 4 && here >= 0) {
            new_pass = here;
          } else {
            kind = 1;
          }
          break;
      }
      const int next = encode(new_row, new_col, new_pass, dest);
      table_[s * kNumActions + a] = {static_cast<std::int16_t>(next), kind,
                                     static_cast<std::uint8_t>(terminal)};
    }

    // Gymnasium's action mask
    std::uint8_t bits = 0;
    if (row < 4) bits |= 1u << 0;
    if (row > 0) bits |= 1u << 1;
    if (col < 4 && east_open(row, col)) bits |= 1u << 2;
    if (col > 0 && west_open(row, col)) bits |= 1u << 3;
    if (pass < 4 && here == pass) bits |= 1u << 4;
    if (pass == 4 && here >= 0) bits |= 1u << 5;
    mask_bits_[s] = bits;
  }

  // the explicit model: one outcome per (s, a)
  model_.offset.resize(kNumStates * kNumActions + 1);
  for (int i = 0; i < kNumStates * kNumActions; ++i) {
    const Cell& c = table_[i];
    model_.offset[i] = model_.outcomes.size();
    model_.outcomes.push_back({c.next, 1.0, rewards_[c.kind], c.terminal != 0});
  }
  model_.offset.back() = model_.outcomes.size();
  const double w = 1.0 / static_cast<double>(initial_states_.size());
  for (auto s : initial_states_) model_.initial[s] = w;
}

void Taxi::do_reset(std::uint64_t seed, std::span<float> obs) {
  rng_.seed_with(seed);
  s_ = initial_states_[rng_.below(initial_states_.size())];
  obs[0] = static_cast<float>(s_);
}

StepResult Taxi::do_step(std::int64_t action, std::span<float> obs) {
  if (action < 0 || action >= kNumActions) [[unlikely]]
    throw_bad_discrete_action(spec_, action);
  const Cell c = table_[s_ * kNumActions + static_cast<int>(action)];
  s_ = c.next;
  StepResult r;
  r.reward = rewards_[c.kind];
  r.terminated = c.terminal != 0;
  obs[0] = static_cast<float>(s_);
  return r;
}

void Taxi::do_set_state(std::span<const double> s) {
  s_ = static_cast<int>(check_index_state(spec_, s, kNumStates));
}

void Taxi::action_mask(std::span<std::uint8_t> mask) const {
  DPRL_CHECK(mask.size() >= kNumActions);
  const std::uint8_t bits = mask_bits_[s_];
  for (int a = 0; a < kNumActions; ++a) mask[a] = (bits >> a) & 1u;
}

void Taxi::do_sync_state(StateIo& io) {
  io.section("taxi");
  io.bounded(s_, 0, kNumStates - 1, "state");
  io(rng_);
}

}  // namespace dprl::envs
