// Shared by the network-file fuzz target and its seed generator (make_seeds.cpp): the file layout
// of engine/nn/nn_io.hpp around a payload, and the readers of network files a user can point dprl
// at.
//   0 make_policy against CartPole, then one discrete action (nn_policy argmax, bcq_policy)
//   1 make_policy against Pendulum, then one continuous action (nn_policy clip, tanh_scaled)
//   2 TeacherPolicy::load (ppo_kickstart's teacher), its spaces check and one query
//   3 NetExperts::load (the expert-level panel), one greedy query of two observations
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "algos/core/policies.hpp"
#include "algos/expert_level/expert_queries.hpp"
#include "algos/kickstart/kickstart_teacher.hpp"
#include "envs/register_envs.hpp"
#include "tests/fuzz/fuzz_common.hpp"

namespace dprl::fuzz {

inline constexpr int kNnReaders = 4;

// "DPRLNN\0\0" | u32 version 1 | u64 payload bytes | payload | u64 FNV-1a 64 of the payload
inline std::string wrap_nn_payload(std::string_view payload) {
  const std::uint64_t sum = fnv1a64(payload, kFnvBasisShort);
  const std::uint32_t version = 1;
  const std::uint64_t len = payload.size();
  std::string out("DPRLNN\0\0", 8);
  out.append(reinterpret_cast<const char*>(&version), sizeof version);
  out.append(reinterpret_cast<const char*>(&len), sizeof len);
  out.append(payload);
  out.append(reinterpret_cast<const char*>(&sum), sizeof sum);
  return out;
}

// The payload of a network file (the inverse of wrap_nn_payload for a well-formed file).
inline std::string nn_payload(std::string_view file_bytes) {
  return std::string(file_bytes.substr(20, file_bytes.size() - 28));
}

inline void act_once(const char* env_id, const std::filesystem::path& file) {
  auto env = envs::make_env(env_id);
  auto policy = algos::make_policy(file.string(), *env);
  const EnvSpec& spec = env->spec();
  std::vector<float> obs(spec.observation.dim());
  env->reset(1, obs);
  policy->begin_episode(1);
  if (spec.action.is_discrete()) {
    std::vector<std::uint8_t> mask(static_cast<std::size_t>(spec.action.n), 1);
    policy->act_discrete(obs, mask);
  } else {
    std::vector<double> action(spec.action.dim());
    policy->act_continuous(obs, action);
  }
}

// Reads file with reader (0 to kNnReaders - 1) and uses what it read once; dprl::Error on refusal.
inline void read_nn_case(int reader, const std::filesystem::path& file) {
  switch (reader) {
    case 0:
      act_once("cartpole", file);
      break;
    case 1:
      act_once("pendulum", file);
      break;
    case 2: {
      auto teacher = algos::TeacherPolicy::load(file, "algo.params.teacher");
      auto env = envs::make_env("cartpole");
      teacher.check_spaces(env->spec(), "algo.params.teacher");
      std::vector<float> obs(static_cast<std::size_t>(teacher.obs_dim()), 0.5f);
      Eigen::MatrixXd probs;
      teacher.probabilities(obs, 1, probs);
      break;
    }
    default: {
      auto panel = algos::NetExperts::load({file}, 1);
      std::vector<float> obs(2 * static_cast<std::size_t>(panel->obs_dim()), 0.25f);
      std::vector<std::int32_t> out(2 * static_cast<std::size_t>(panel->num_experts()));
      panel->greedy(obs.data(), 2, out);
    }
  }
}

}  // namespace dprl::fuzz
