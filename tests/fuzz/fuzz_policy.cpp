// Fuzz target: policy files as `dprl eval --policy FILE` loads them: the input is saved as
// policy.json, or as policy.bin when it starts with the network-checkpoint magic "DPRLNN", and
// loaded against CartPole (Box observations, two actions) and Taxi (Discrete 500 states, six
// actions); then acted on once. The checkpoint decoder also sees the raw bytes. A JSON policy
// whose "q" is an array of numbers is loaded a second time with its checksum made right (FNV-1a
// 64 of the doubles of q), so that mutations of q and of what the loader checks after the
// checksum are reached. (The nn target covers policy.bin payloads behind their checksum.)
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "algos/core/policies.hpp"
#include "engine/error.hpp"
#include "engine/nn/nn_io.hpp"
#include "envs/register_envs.hpp"
#include "tests/fuzz/fuzz_common.hpp"

namespace {

std::optional<std::string> with_checksum(const std::string& text) {
  try {
    auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("q")) return std::nullopt;
    const auto q = j["q"].get<std::vector<double>>();
    j["checksum"] = fmt::format(
        "{:016x}",
        dprl::fnv1a64({reinterpret_cast<const char*>(q.data()), q.size() * sizeof(double)}));
    return j.dump();
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

void load_and_act(const std::string& bytes) {
  using namespace dprl;
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
    } catch (const Error& e) {
      fuzz::refused(e);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dprl;
  const std::string bytes = fuzz::as_string(data, size);
  try {
    nn::decode_nn_file(bytes, "fuzz.bin");
  } catch (const Error& e) {
    fuzz::refused(e);
  }
  load_and_act(bytes);
  if (const auto fixed = with_checksum(bytes)) load_and_act(*fixed);
  return 0;
}
