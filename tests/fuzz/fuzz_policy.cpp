// Fuzz target: policy files as `dprl eval --policy FILE` loads them: the input is saved as
// policy.json, or as policy.bin when it starts with the network-checkpoint magic "DPRLNN", and
// loaded against CartPole (Box observations, two actions) and Taxi (Discrete 500 states, six
// actions); then acted on once. The checkpoint decoder also sees the raw bytes.
#include <vector>

#include "algos/policies.hpp"
#include "engine/error.hpp"
#include "engine/nn_io.hpp"
#include "envs/register_envs.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dprl;
  const std::string bytes = fuzz::as_string(data, size);
  try {
    nn::decode_nn_file(bytes, "fuzz.bin");
  } catch (const Error&) {
  }
  const bool bin = bytes.rfind("DPRLNN", 0) == 0;
  const auto file = fuzz::put(bin ? "policy.bin" : "policy.json", bytes);
  for (const char* id : {"cartpole", "taxi"}) {
    try {
      auto env = envs::make_env(id, {});
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
    } catch (const Error&) {
    }
  }
  return 0;
}
