// Seed corpora that are not written by hand: the checkpoint and nn fuzz targets' (binary payloads
// of learner state and networks) and the replay target's cases of the envs whose states are long
// (MuJoCo, LunarLander, HIV) or model-made (linear_mdp, MDP-100):
//   dprl_fuzz_make_seeds write tests/fuzz/corpus   writes corpus/{checkpoint,nn,replay}/seed_*
//                                                  (replacing those files)
//   dprl_fuzz_make_seeds check tests/fuzz/corpus   exits 1 naming the first seed_* file that its
//                                                  reader refuses (ctest fuzz/seeds_accepted)
// A checkpoint or nn seed is the reader byte then the payload: checkpoint seeds are the last
// checkpoint of each run of checkpoint_cases(), network seeds freshly initialised policies of each
// kind a reader takes. A replay seed is the state of the env after a seeded reset and a few valid
// actions. The check keeps the seeds current: when a learner's checkpoint layout, the network file
// or an env's state changes, it fails until the seeds are written again.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "algos/core/bcq_policy.hpp"
#include "algos/core/nn_policy.hpp"
#include "engine/error.hpp"
#include "engine/io.hpp"
#include "engine/nn/nn_mlp.hpp"
#include "engine/rng.hpp"
#include "envs/register_envs.hpp"
#include "tests/fuzz/checkpoint_cases.hpp"
#include "tests/fuzz/fuzz_common.hpp"
#include "tests/fuzz/nn_cases.hpp"
#include "tools/cli_util.hpp"

namespace fs = std::filesystem;
using namespace dprl;

namespace {

nn::Mlp random_mlp(std::vector<int> sizes, nn::Act out, std::uint64_t seed) {
  nn::Mlp m(nn::MlpShape(std::move(sizes), nn::Act::kTanh, out));
  Rng rng(seed);
  nn::init_kaiming_uniform(m.shape(), m.data(), rng);
  return m;
}

struct NnSeed {
  std::string name;
  int reader;
  std::string payload;
};

std::vector<NnSeed> nn_seeds() {
  const auto scratch = fuzz::scratch() / "seed.bin";
  const auto payload_of = [&](const auto& policy) {
    policy.save(scratch);
    return fuzz::nn_payload(read_file(scratch));
  };
  algos::NnPolicy discrete("cartpole", algos::NnPolicy::Mode::kArgmax,
                           random_mlp({4, 8, 2}, nn::Act::kIdentity, 1), 2);
  discrete.set_obs_norm({0.1f, 0.0f, -0.1f, 0.0f}, {1.0f, 2.0f, 0.5f, 4.0f});
  algos::NnPolicy clip("pendulum", algos::NnPolicy::Mode::kClip,
                       random_mlp({3, 8, 1}, nn::Act::kIdentity, 2), 1);
  clip.set_obs_norm({0.0f, 0.0f, 0.0f}, {1.0f, 1.0f, 16.0f});
  clip.set_action_bounds({-2.0f}, {2.0f});
  algos::NnPolicy tanh("pendulum", algos::NnPolicy::Mode::kTanhScaled,
                       random_mlp({3, 8, 1}, nn::Act::kTanh, 3), 1);
  tanh.set_squash_output(false);
  tanh.set_action_bounds({-2.0f}, {2.0f});
  const algos::BcqPolicy bcq("cartpole", random_mlp({4, 8, 2}, nn::Act::kIdentity, 4),
                             random_mlp({4, 8, 2}, nn::Act::kIdentity, 5), 0.3);
  const std::string d = payload_of(discrete);
  return {{"seed_policy_argmax_cartpole", 0, d},
          {"seed_policy_bcq_cartpole", 0, payload_of(bcq)},
          {"seed_policy_clip_pendulum", 1, payload_of(clip)},
          {"seed_policy_tanh_pendulum", 1, payload_of(tanh)},
          {"seed_teacher_cartpole", 2, d},
          {"seed_expert_cartpole", 3, d}};
}

// {"env": id, "state": [...], "actions": [...]} for `dprl env replay`
std::string replay_seed(const char* id) {
  auto env = envs::make_env(id);
  const EnvSpec& spec = env->spec();
  std::vector<float> obs(spec.observation.dim());
  env->reset(1, obs);
  std::vector<std::string> state, actions;
  for (double v : env->state()) state.push_back(fmt::format("{:.17g}", v));
  for (int i = 0; i < 4; ++i) {
    if (spec.action.is_discrete()) {
      actions.push_back(std::to_string(i % spec.action.n));
    } else {
      std::vector<std::string> a(spec.action.dim(), i % 2 ? "0.5" : "-0.25");
      actions.push_back(fmt::format("[{}]", fmt::join(a, ", ")));
    }
  }
  return fmt::format("{{\"env\": \"{}\", \"state\": [{}], \"actions\": [{}]}}\n", id,
                     fmt::join(state, ", "), fmt::join(actions, ", "));
}

const std::vector<const char*> kReplayEnvs = {
    "MDP-100",        "linear_mdp",      "hiv", "LunarLander-v3", "LunarLanderContinuous-v3",
    "HalfCheetah-v5", "cartpole-swingup"};

std::string replay_name(std::string id) {
  for (auto& c : id)
    if (c == '-') c = '_';
  return "seed_" + id + ".json";
}

std::string with_reader(int reader, const std::string& payload) {
  return std::string(1, static_cast<char>(reader)) + payload;
}

int write_seeds(const fs::path& corpus) {
  fs::create_directories(corpus / "checkpoint");
  fs::create_directories(corpus / "nn");
  fs::create_directories(corpus / "replay");
  const auto& cases = fuzz::checkpoint_cases();
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto& c = cases[i];
    const std::string payload =
        fuzz::run_checkpoint_case(c, fuzz::scratch() / "run", std::nullopt, c.every);
    if (payload.empty()) {
      std::fprintf(stderr, "make_seeds: %s wrote no checkpoint\n", c.name);
      return 1;
    }
    write_file_atomic(corpus / "checkpoint" / (std::string("seed_") + c.name),
                      with_reader(static_cast<int>(i), payload));
  }
  for (const auto& s : nn_seeds())
    write_file_atomic(corpus / "nn" / s.name, with_reader(s.reader, s.payload));
  for (const char* id : kReplayEnvs)
    write_file_atomic(corpus / "replay" / replay_name(id), replay_seed(id));
  return 0;
}

// every seed_* file in corpus/checkpoint, corpus/nn and corpus/replay is accepted by its reader
int check_seeds(const fs::path& corpus) {
  const auto& cases = fuzz::checkpoint_cases();
  int seen = 0;
  for (const char* target : {"checkpoint", "nn", "replay"}) {
    for (const auto& e : fs::directory_iterator(corpus / target)) {
      if (e.path().filename().string().rfind("seed_", 0) != 0) continue;
      const std::string bytes = read_file(e.path());
      try {
        if (std::string(target) == "replay") {
          cli::replay_case(bytes, e.path().string());
          ++seen;
          continue;
        }
        if (bytes.empty()) throw Error("empty seed");
        const auto reader = static_cast<unsigned char>(bytes[0]);
        const std::string rest = bytes.substr(1);
        if (std::string(target) == "checkpoint") {
          if (reader >= cases.size()) throw Error("no such checkpoint case");
          fuzz::run_checkpoint_case(cases[reader], fuzz::scratch() / "run", rest,
                                    cases[reader].every);
        } else {
          if (reader >= fuzz::kNnReaders) throw Error("no such network reader");
          fuzz::read_nn_case(reader, fuzz::put("policy.bin", fuzz::wrap_nn_payload(rest)));
        }
      } catch (const Error& err) {
        std::fprintf(stderr,
                     "make_seeds: %s is refused (%s); write the seeds again: "
                     "dprl_fuzz_make_seeds write tests/fuzz/corpus\n",
                     e.path().string().c_str(), err.what());
        return 1;
      }
      ++seen;
    }
  }
  std::printf("%d seeds accepted\n", seen);
  return seen > 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc == 3 ? argv[1] : "";
  if (mode != "write" && mode != "check") {
    std::fprintf(stderr, "usage: dprl_fuzz_make_seeds write|check CORPUS_DIR\n");
    return 2;
  }
  const int rc = mode == "write" ? write_seeds(argv[2]) : check_seeds(argv[2]);
  fs::remove_all(fuzz::scratch());
  return rc;
}
