// Model-training tables built from an offline Dataset, grouped by privacy unit.
//
// A TransitionTable holds the model inputs x = [s; a] ((obs + act) x n) and targets
// y = [s' - s; r] ((obs + 1) x n) of every transition, ordered unit by unit: unit u (one user id,
// in PriMORL one trajectory) owns columns [start[u], start[u + 1]). DP-FedAvg samples units, so a
// user with several episodes is one client.
//
// The test split (PriMORL App. H.3: 1% of episodes, "considered public") is drawn unit by unit:
// a unit is in it when a keyed hash of (seed, its user id) falls below test_fraction. Each unit's
// side depends on its own id only, so adding or removing one unit changes the training table in
// that unit alone (a permutation of all units would move others too). The test units are carved
// from the input data and are NOT protected by the run's guarantee (the record names them).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/data/dataset.hpp"
#include "engine/nn/nn_mlp.hpp"

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

// Whether the unit with this id is in the test split: keyed hash of (seed, id) < test_fraction.
bool in_test_split(std::int64_t unit_id, double test_fraction, std::uint64_t seed);
// The split of these ids by in_test_split (each side ascending).
UnitSplit split_units(std::span<const std::int64_t> users, double test_fraction,
                      std::uint64_t seed);
// split_units of the dataset's users; DataError when no unit falls in the test split (decided by
// the unprotected test units alone). The training side may be empty.
UnitSplit split_by_unit(const Dataset& d, double test_fraction, std::uint64_t seed);

// The table of the given users' episodes (users ascending; each user's episodes in file order).
TransitionTable make_table(const Dataset& d, std::span<const std::int64_t> users);

// Per-input mean and standard deviation of a (public) table's inputs; a standard deviation below
// 1e-6 (a constant input) becomes 1.
void input_moments(const TransitionTable& t, std::vector<float>& mean, std::vector<float>& std);

}  // namespace dprl::algos::model_based
