#include "algos/model_based/collect.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "algos/core/algorithm.hpp"
#include "algos/online/ddpg.hpp"
#include "engine/checksum.hpp"
#include "engine/error.hpp"
#include "engine/io.hpp"
#include "engine/rng.hpp"
#include "engine/thread_pool.hpp"

namespace dprl::algos::model_based {

namespace {

// Records every finished episode of the wrapped env into a Dataset.
class RecordingEnv final : public Env {
 public:
  RecordingEnv(std::unique_ptr<Env> inner, Dataset& out, std::int64_t& next_user)
      : inner_(std::move(inner)), out_(out), next_user_(next_user) {
    spec_ = inner_->spec();
  }
  std::vector<double> state() const override { return inner_->state(); }
  ParamMap params() const override { return inner_->params(); }

 private:
  void do_reset(std::uint64_t seed, std::span<float> obs) override {
    inner_->reset(seed, obs);
    seed_ = seed;
    obs_.assign(obs.begin(), obs.end());
    act_.clear();
    rew_.clear();
    term_.clear();
    trunc_.clear();
  }
  StepResult do_step(std::span<const double> action, std::span<float> obs) override {
    const StepResult r = inner_->step(action, obs);
    for (double a : action) act_.push_back(static_cast<float>(a));
    obs_.insert(obs_.end(), obs.begin(), obs.end());
    rew_.push_back(static_cast<float>(r.reward));
    term_.push_back(r.terminated ? 1 : 0);
    trunc_.push_back(r.truncated ? 1 : 0);
    if (r.terminated || r.truncated)
      out_.add_episode(obs_, act_, rew_, term_, trunc_, next_user_++,
                       static_cast<std::int64_t>(seed_));  // the reset seed's bit pattern
    return r;
  }
  void do_set_state(std::span<const double> s) override { inner_->set_state(s); }

  std::unique_ptr<Env> inner_;
  Dataset& out_;
  std::int64_t& next_user_;
  std::uint64_t seed_ = 0;
  std::vector<float> obs_, act_, rew_;
  std::vector<std::uint8_t> term_, trunc_;
};

template <class T>
void put(std::string& out, const std::vector<T>& v) {
  const std::uint64_t n = v.size();
  out.append(reinterpret_cast<const char*>(&n), sizeof n);
  out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

template <class T>
std::vector<T> get(const std::string& in, std::size_t& pos, const std::string& where) {
  std::uint64_t n = 0;
  if (pos + sizeof n > in.size()) throw DataError(where + ": truncated file");
  std::memcpy(&n, in.data() + pos, sizeof n);
  pos += sizeof n;
  if (n > (in.size() - pos) / sizeof(T)) throw DataError(where + ": truncated file");
  std::vector<T> v(n);
  std::memcpy(v.data(), in.data() + pos, n * sizeof(T));
  pos += n * sizeof(T);
  return v;
}

constexpr const char* kMagic = "dprl-primorl-data-v1";

// Appends every episode of `from` to `to`, renumbering users from next_user.
void append_episodes(Dataset& to, const Dataset& from, std::int64_t& next_user) {
  for (std::size_t e = 0; e < from.num_episodes(); ++e) to.add_episode_of(from, e, next_user++);
}

// One DDPG run recording its training episodes into a dataset with `info`, users from 0.
Dataset collect_run(const std::function<std::unique_ptr<Env>()>& make_env, const CollectConfig& cfg,
                    std::uint64_t seed, int run, const DatasetInfo& info) {
  Dataset d(info);
  std::int64_t next_user = 0;
  ParamMap pm;
  param_map_set(pm, "hidden_sizes", {cfg.hidden_sizes, "collect"});
  param_map_set(pm, "learning_starts", {std::to_string(cfg.learning_starts), "collect"});
  param_map_set(pm, "exploration_noise", {format_param(cfg.exploration_noise), "collect"});
  Ddpg ddpg(read_params<DdpgParams>(pm, "collect"));
  bool first = true;
  TrainParams tp;
  tp.steps = cfg.steps_per_run;
  tp.eval_every = 0;
  tp.eval_episodes = 1;
  tp.checkpoint = false;
  TrainContext ctx(
      [&]() -> std::unique_ptr<Env> {
        if (!first) return make_env();
        first = false;  // the training env records; evaluation envs do not
        return std::make_unique<RecordingEnv>(make_env(), d, next_user);
      },
      derive_seed(seed, Domain::kDataset, static_cast<std::uint64_t>(run)), tp, nullptr, nullptr);
  ddpg.train(ctx);
  return d;
}

}  // namespace

DatasetInfo collect_info(const Env& env, const CollectConfig& cfg, std::uint64_t seed) {
  const EnvSpec& spec = env.spec();
  DatasetInfo info;
  info.dataset_id = fmt::format("dprl/{}/ddpg-replay-v0", spec.id);
  info.env_id = spec.id;
  info.env_params = env.params();
  info.observation_space = spec.observation;
  info.action_space = spec.action;
  info.metadata_json = fmt::format(
      R"({{"collector": "ddpg", "runs": {}, "steps_per_run": {}, "hidden_sizes": "{}", )"
      R"("learning_starts": {}, "exploration_noise": {}, "seed": {}}})",
      cfg.runs, cfg.steps_per_run, cfg.hidden_sizes, cfg.learning_starts, cfg.exploration_noise,
      seed);
  return info;
}

Dataset collect_ddpg(const std::function<std::unique_ptr<Env>()>& make_env,
                     const CollectConfig& cfg, std::uint64_t seed, int threads) {
  const DatasetInfo info = collect_info(*make_env(), cfg, seed);
  // the runs are independent (each from its own derived seed), so they run on the pool and are
  // joined in run order: the dataset is the same at any thread count
  std::vector<Dataset> parts(static_cast<std::size_t>(cfg.runs));
  ThreadPool pool(std::min(threads, std::max(cfg.runs, 1)));
  pool.parallel_for(parts.size(), [&](std::size_t run) {
    parts[run] = collect_run(make_env, cfg, seed, static_cast<int>(run), info);
  });
  Dataset d(info);
  std::size_t episodes = 0, transitions = 0;
  for (const Dataset& p : parts) {
    episodes += p.num_episodes();
    transitions += p.num_transitions();
  }
  d.reserve(episodes, transitions);
  std::int64_t next_user = 0;
  for (Dataset& p : parts) {
    append_episodes(d, p, next_user);
    p = Dataset();
  }
  return d;
}

std::string collect_key(const Env& env, const CollectConfig& cfg, std::uint64_t seed) {
  std::string s = env.spec().id;
  for (const auto& [k, v] : env.params()) s += "|" + k + "=" + v.text;
  s +=
      fmt::format("|runs={}|steps={}|hidden={}|ls={}|noise={}|seed={}", cfg.runs, cfg.steps_per_run,
                  cfg.hidden_sizes, cfg.learning_starts, format_param(cfg.exploration_noise), seed);
  return fmt::format("{:016x}", fnv1a64(s, kFnvBasisShort));
}

void save_dataset_cache(const Dataset& d, const std::filesystem::path& file,
                        const std::string& key) {
  std::string body;
  std::vector<std::uint64_t> lens(d.num_episodes());
  std::vector<std::int64_t> seeds(d.num_episodes());
  for (std::size_t e = 0; e < d.num_episodes(); ++e) {
    lens[e] = d.episode_length(e);
    seeds[e] = d.episode_seed(e);
  }
  auto vec = [](auto span) { return std::vector(span.begin(), span.end()); };
  put(body, vec(d.observations()));
  put(body, vec(d.actions()));
  put(body, vec(d.rewards()));
  put(body, vec(d.terminations()));
  put(body, vec(d.truncations()));
  put(body, lens);
  put(body, vec(d.user_ids()));
  put(body, seeds);
  const std::uint64_t sum = fnv1a64(body, kFnvBasisShort);
  std::string out = std::string(kMagic) + "\n" + key + "\n" +
                    fmt::format("{} {} {}\n", d.info().env_id, d.obs_dim(), d.act_dim());
  out.append(reinterpret_cast<const char*>(&sum), sizeof sum);
  out += body;
  make_dirs(file.parent_path());
  write_file_atomic(file, out);
}

Dataset load_dataset_cache(const std::filesystem::path& file, const std::string& key,
                           const DatasetInfo& info) {
  const std::string where = file.string();
  const std::string in = read_file(file);
  const std::string head = std::string(kMagic) + "\n" + key + "\n";
  if (in.compare(0, head.size(), head) != 0)
    throw DataError(where + ": not a dataset cache of this collection (magic or key differs)");
  std::size_t pos = head.size();
  // the spaces the file was collected with must be the env's
  const std::size_t eol = in.find('\n', pos);
  if (eol == std::string::npos) throw DataError(where + ": truncated file");
  const std::string spaces = in.substr(pos, eol - pos);
  const std::string expect =
      fmt::format("{} {} {}", info.env_id, info.observation_space.dim(), info.action_space.dim());
  if (spaces != expect)
    throw DataError(
        fmt::format("data_cache: {} holds data of '{}' (env, obs dim, act dim), the env is '{}'",
                    where, spaces, expect));
  pos = eol + 1;
  std::uint64_t sum = 0;
  if (pos + sizeof sum > in.size()) throw DataError(where + ": truncated file");
  std::memcpy(&sum, in.data() + pos, sizeof sum);
  pos += sizeof sum;
  if (fnv1a64(std::string_view(in).substr(pos), kFnvBasisShort) != sum)
    throw DataError(where + ": bad checksum");
  const auto obs = get<float>(in, pos, where), act = get<float>(in, pos, where),
             rew = get<float>(in, pos, where);
  const auto term = get<std::uint8_t>(in, pos, where), trunc = get<std::uint8_t>(in, pos, where);
  const auto lens = get<std::uint64_t>(in, pos, where);
  const auto users = get<std::int64_t>(in, pos, where), seeds = get<std::int64_t>(in, pos, where);
  Dataset d(info);
  const std::size_t D = d.obs_dim(), A = d.act_dim();
  std::size_t t = 0;
  for (std::size_t e = 0; e < lens.size(); ++e) {
    const std::size_t T = lens[e];
    if ((t + e + T + 1) * D > obs.size() || (t + T) * A > act.size() || t + T > rew.size())
      throw DataError(where + ": episode extents exceed the arrays");
    d.add_episode({obs.data() + (t + e) * D, (T + 1) * D}, {act.data() + t * A, T * A},
                  {rew.data() + t, T}, {term.data() + t, T}, {trunc.data() + t, T}, users.at(e),
                  seeds.at(e));
    t += T;
  }
  return d;
}

}  // namespace dprl::algos::model_based
