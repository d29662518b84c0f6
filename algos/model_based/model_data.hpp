// Model-training tables built from an offline Dataset, grouped by privacy unit.
//
// A TransitionTable holds the model inputs x = [s; a] ((obs + act) x n) and targets
// y = [s' - s; r] ((obs + 1) x n) of every transition, ordered unit by unit: unit u (one user id,
// in PriMORL one trajectory) owns columns [start[u], start[u + 1]). DP-FedAvg samples units, so a
// user with several episodes is one client.
//
// The public test split (PriMORL App. H.3: 1% of episodes, "considered public") is drawn by
// unit with a seeded permutation, so no unit is on both sides; at least one unit is public and at
// least one private.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/dataset.hpp"
#include "engine/nn_mlp.hpp"

namespace dprl::algos::model_based {

struct TransitionTable {
  nn::Mat x, y;
  std::vector<std::size_t> start{0};  // units + 1 column offsets
  std::vector<std::int64_t> user;     // the unit's user id
  std::size_t units() const { return user.size(); }
  std::size_t transitions() const { return static_cast<std::size_t>(x.cols()); }
  std::size_t unit_size(std::size_t u) const { return start[u + 1] - start[u]; }
};

struct UnitSplit {
  std::vector<std::int64_t> train_users, test_users;  // ascending
};

// test_fraction of the users (rounded, at least 1, at most users - 1) go to the public split.
// DataError when the dataset has fewer than two users.
UnitSplit split_by_unit(const Dataset& d, double test_fraction, std::uint64_t seed);

// The table of the given users' episodes (users ascending; each user's episodes in file order).
TransitionTable make_table(const Dataset& d, std::span<const std::int64_t> users);

// Per-input mean and standard deviation of a (public) table's inputs; a standard deviation below
// 1e-6 (a constant input) becomes 1.
void input_moments(const TransitionTable& t, std::vector<float>& mean, std::vector<float>& std);

}  // namespace dprl::algos::model_based
