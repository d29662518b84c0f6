// engine/data/: offline data sets (this file), their Minari and D4RL files and the HDF5 layer;
// docs/architecture.md.
//
// Offline RL datasets: whole trajectories with the privacy unit of each episode.
//
// Layout (Minari's episode view, flattened into contiguous arrays):
//   observations   float32, (T_e + 1) rows per episode (the last row is the final observation),
//                  obs_dim columns (Discrete observations: the index as a float)
//   actions        float32, T_e rows per episode, act_dim columns (Discrete: one column holding the
//                  index, exact below 2^24)
//   rewards        float32, T_e per episode
//   terminations   uint8 (0/1), T_e per episode
//   truncations    uint8 (0/1), T_e per episode
//   per episode    user_id (the privacy unit: an expert, a person, a trajectory), seed (-1: none),
//                  first transition index
// Transition t (0 <= t < num_transitions()) of episode e sits at observation row t + e and action
// row t. The whole payload is what a file holds, plus 16 bytes per episode.
//
// Metadata: dataset_id, env_id and its resolved parameters (key -> text), the spaces, and free
// JSON text (collection settings, ...). Readers and writers live in engine/data/dataset_io.hpp.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/params.hpp"
#include "engine/space.hpp"

namespace dprl {

struct DatasetInfo {
  std::string dataset_id;     // e.g. "dprl/cartpole/ppo-expert-v0"
  std::string env_id;         // registry id the data was collected on ("" if unknown)
  ParamMap env_params;        // the env's resolved parameters
  Space observation_space;    // Box or Discrete
  Space action_space;         // Box or Discrete
  std::string metadata_json;  // free JSON object text ("" for none)
};

// Whole arrays in the layout above, for readers that fill them in place.
struct DatasetArrays {
  std::vector<float> observations;
  std::vector<float> actions;
  std::vector<float> rewards;
  std::vector<std::uint8_t> terminations;
  std::vector<std::uint8_t> truncations;
  std::vector<std::size_t> episode_starts{0};  // num_episodes + 1 offsets, from 0
  std::vector<std::int64_t> user_ids;
  std::vector<std::int64_t> seeds;
};

// Throws DataError "<where>: observation_space: ..." (or action_space) unless info's spaces equal
// the env's: the same Discrete n, or Box bounds equal in float32 component by component.
void check_spaces(const DatasetInfo& info, const EnvSpec& spec, const std::string& where);
// For data whose file carries no spaces (D4RL: Box(-inf, inf), or Discrete(max + 1) for integer
// columns): takes the env's space where it can hold the data's (a Box of the same dimension
// whose bounds are all infinite; a Discrete of at least as many values). The values must then be
// checked against the adopted spaces (Dataset::validate).
void adopt_env_spaces(DatasetInfo& info, const EnvSpec& spec);

class Dataset {
 public:
  Dataset() = default;
  explicit Dataset(DatasetInfo info);
  // Takes the arrays over (no copy) after checking that their sizes agree with the offsets and
  // the spaces; DataError naming `where` and the field otherwise.
  static Dataset from_arrays(DatasetInfo info, DatasetArrays arrays, const std::string& where);

  const DatasetInfo& info() const { return info_; }
  DatasetInfo& mutable_info() { return info_; }
  std::size_t obs_dim() const { return info_.observation_space.dim(); }
  std::size_t act_dim() const { return info_.action_space.dim(); }

  // Appends one episode. observations holds (T + 1) * obs_dim values, actions T * act_dim, rewards,
  // terminations and truncations T each (T >= 1). Shapes are checked (DataError naming the field).
  void add_episode(std::span<const float> observations, std::span<const float> actions,
                   std::span<const float> rewards, std::span<const std::uint8_t> terminations,
                   std::span<const std::uint8_t> truncations, std::int64_t user_id,
                   std::int64_t seed = -1);
  // Appends episode e of `from` (same dimensions) under user id `user` (its seed kept).
  void add_episode_of(const Dataset& from, std::size_t e, std::int64_t user);
  // Reserves room for episodes and transitions (avoids regrowth when the totals are known).
  void reserve(std::size_t episodes, std::size_t transitions);

  std::size_t num_episodes() const { return user_id_.size(); }
  std::size_t num_transitions() const { return rewards_.size(); }

  // Episode e: first transition index, length T_e, user id, seed.
  std::size_t episode_start(std::size_t e) const { return start_[e]; }
  std::size_t episode_length(std::size_t e) const { return start_[e + 1] - start_[e]; }
  std::int64_t user_id(std::size_t e) const { return user_id_[e]; }
  std::int64_t episode_seed(std::size_t e) const { return seed_[e]; }
  void set_user_id(std::size_t e, std::int64_t user) { user_id_[e] = user; }
  // The episode holding transition t (binary search over starts).
  std::size_t episode_of(std::size_t t) const;

  // Transition t: s_t, a_t, r_t, s_{t+1}, flags (e = episode_of(t) can be passed when known).
  std::span<const float> obs(std::size_t t, std::size_t e) const {
    return {observations_.data() + (t + e) * obs_dim(), obs_dim()};
  }
  std::span<const float> next_obs(std::size_t t, std::size_t e) const {
    return {observations_.data() + (t + e + 1) * obs_dim(), obs_dim()};
  }
  std::span<const float> action(std::size_t t) const {
    return {actions_.data() + t * act_dim(), act_dim()};
  }
  std::int64_t discrete_action(std::size_t t) const {
    return static_cast<std::int64_t>(actions_[t]);
  }
  float reward(std::size_t t) const { return rewards_[t]; }
  bool terminated(std::size_t t) const { return terminations_[t] != 0; }
  bool truncated(std::size_t t) const { return truncations_[t] != 0; }
  // Sum of episode e's rewards (double accumulation).
  double episode_return(std::size_t e) const;

  // Raw arrays (for writers and kernels).
  std::span<const float> observations() const { return observations_; }
  std::span<const float> actions() const { return actions_; }
  std::span<const float> rewards() const { return rewards_; }
  std::span<const std::uint8_t> terminations() const { return terminations_; }
  std::span<const std::uint8_t> truncations() const { return truncations_; }
  std::span<const std::int64_t> user_ids() const { return user_id_; }

  // The distinct user ids in ascending order, and for each the episodes it owns.
  std::vector<std::int64_t> users() const;
  std::vector<std::vector<std::size_t>> episodes_by_user(
      const std::vector<std::int64_t>& users) const;

  // Checks every value against the spaces and the flags' rules (finite observations inside the
  // observation space's bounds, actions inside the action space, a flag only 0/1, no flag before an
  // episode's last step, the last step terminated or truncated or neither as collected); throws
  // DataError naming `where`, the field and the first bad index.
  void validate(const std::string& where) const;

  // A dataset of the given episodes (in the given order), with the same info.
  Dataset subset(std::span<const std::size_t> episodes) const;

  // Bytes held by the arrays (sizes), and allocated for them (capacities).
  std::size_t payload_bytes() const;
  std::size_t memory_bytes() const;

 private:
  DatasetInfo info_;
  std::vector<float> observations_;
  std::vector<float> actions_;
  std::vector<float> rewards_;
  std::vector<std::uint8_t> terminations_;
  std::vector<std::uint8_t> truncations_;
  std::vector<std::size_t> start_{0};  // num_episodes + 1 transition offsets
  std::vector<std::int64_t> user_id_;
  std::vector<std::int64_t> seed_;
};

// How merge_datasets numbers the privacy units.
enum class MergeUsers {
  kOffset,   // each part's ids shifted past every earlier part's: parts never share a user
  kKeep,     // ids as they are: equal ids in two parts are one user (the same people)
  kEpisode,  // one user per episode, 0..n-1 in merged order (trajectory-level units)
};
// "offset", "keep" or "episode"; ParamError naming `where` otherwise.
MergeUsers parse_merge_users(std::string_view name, const std::string& where);

// The episodes of every part in order (e.g. D4RL's medium-expert = medium + expert). The parts
// must have equal spaces and, where known, the same env id (DataError naming parts[i]'s
// `names[i]` otherwise); the info is the first part's with dataset_id (when non-empty) and a
// metadata object {"merged_from": [each part's dataset_id], "users": mode}.
Dataset merge_datasets(std::span<const Dataset> parts, std::span<const std::string> names,
                       MergeUsers users, const std::string& dataset_id = "");

}  // namespace dprl
