// The D4RL reader (flat HDF5 files as Farama-Foundation/D4RL writes them): see
// engine/dataset_io.hpp for the episode rules.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/dataset_io.hpp"
#include "engine/error.hpp"
#include "engine/hdf5_file.hpp"

namespace dprl {
namespace {

using json = nlohmann::ordered_json;

// A per-row array of n rows (an N x 1 column counts as N rows of one value).
void expect_rows(const h5::File& f, const h5::Array& a, std::uint64_t n, std::uint64_t cols) {
  const auto& in = a.info();
  const bool ok = !in.shape.empty() && in.rows() == n && (cols == 0 || in.row_elements() == cols);
  if (!ok)
    throw DataError(fmt::format("{}: {}: shape ({}) but observations has {} rows{}", f.name(),
                                a.key(), fmt::join(in.shape, ", "), n,
                                cols > 1 ? fmt::format(" (expected {} columns)", cols) : ""));
  a.check_plausible();
}

// Discrete(max + 1) for integer data of one column, else an unbounded Box.
Space infer_space(const h5::File& f, const h5::Array& a, std::span<const float> values) {
  const std::size_t dim = a.info().row_elements();
  if (a.info().type == h5::TypeClass::kInteger && dim == 1) {
    float hi = 0;
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (values[i] < 0)
        throw DataError(fmt::format("{}: {}: row {} holds {} (integer data must be >= 0)", f.name(),
                                    a.key(), i, values[i]));
      hi = std::max(hi, values[i]);
    }
    return Space::discrete(static_cast<std::int64_t>(hi) + 1);
  }
  return Space::box(dim, -INFINITY, INFINITY);
}

// Scalars and strings of metadata/ (policy weights and other arrays are skipped).
json read_metadata(const h5::File& f) {
  json out = json::object();
  if (!f.is_group("metadata")) return out;
  std::vector<std::string> stack = {"metadata"};
  while (!stack.empty()) {
    const std::string g = stack.back();
    stack.pop_back();
    for (const auto& name : f.children(g)) {
      const std::string key = g + "/" + name;
      if (f.is_group(key)) {
        stack.push_back(key);
      } else if (auto s = f.read_string(key)) {
        out[key.substr(9)] = *s;
      } else if (auto v = f.read_scalar(key)) {
        out[key.substr(9)] = *v;
      }
    }
  }
  return out;
}

}  // namespace

Dataset load_d4rl(const std::filesystem::path& file, const D4rlOptions& options) {
  const h5::File f = h5::File::open(file);
  const h5::Array obs = f.array("observations");
  const std::uint64_t n = obs.info().rows();
  if (obs.info().shape.empty() || n == 0)
    throw DataError(fmt::format("{}: observations: no rows", f.name()));
  obs.check_plausible();
  const std::uint64_t od = obs.info().row_elements();
  const h5::Array act = f.array("actions");
  expect_rows(f, act, n, 0);
  const std::uint64_t ad = act.info().row_elements();
  const h5::Array rew = f.array("rewards");
  expect_rows(f, rew, n, 1);
  const h5::Array term = f.array("terminals");
  expect_rows(f, term, n, 1);

  std::vector<float> o(n * od), a(n * ad), r(n);
  std::vector<std::uint8_t> done(n), timeout(n, 0);
  obs.read(std::span<float>(o));
  act.read(std::span<float>(a));
  rew.read(std::span<float>(r));
  term.read_flags(std::span<std::uint8_t>(done));
  const bool has_timeouts = f.exists("timeouts");
  if (has_timeouts) {
    const h5::Array to = f.array("timeouts");
    expect_rows(f, to, n, 1);
    to.read_flags(std::span<std::uint8_t>(timeout));
  } else if (options.max_episode_steps > 0) {
    std::uint64_t len = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      ++len;
      if (done[i])
        len = 0;
      else if (len == static_cast<std::uint64_t>(options.max_episode_steps))
        timeout[i] = 1, len = 0;
    }
  }
  std::vector<float> next;
  if (f.exists("next_observations")) {
    const h5::Array nx = f.array("next_observations");
    expect_rows(f, nx, n, od);
    next.resize(n * od);
    nx.read(std::span<float>(next));
  }
  std::vector<std::int64_t> users;
  if (!options.user_id_key.empty()) {
    const h5::Array u = f.array(options.user_id_key);
    expect_rows(f, u, n, 1);
    users.resize(n);
    u.read(std::span<std::int64_t>(users));
  }

  DatasetInfo info;
  info.dataset_id = "d4rl/" + file.stem().string();
  info.observation_space = infer_space(f, obs, o);
  info.action_space = infer_space(f, act, a);

  // episodes: [begin, end] inclusive rows; the kept transitions and the final observation
  DatasetArrays arr;
  std::uint64_t dropped = 0, kept_steps = 0;
  struct Ep {
    std::uint64_t begin, steps;
    bool terminated, truncated;
  };
  std::vector<Ep> eps;
  for (std::uint64_t begin = 0; begin < n;) {
    std::uint64_t end = begin;
    while (end + 1 < n && !done[end] && !timeout[end]) ++end;
    Ep ep{begin, end - begin + 1, done[end] != 0, timeout[end] != 0};
    if (next.empty() && !ep.terminated) {
      // the last step's next observation is unknown: drop it (its observation ends the episode)
      --ep.steps;
      ++dropped;
    }
    if (ep.steps > 0) eps.push_back(ep), kept_steps += ep.steps;
    begin = end + 1;
  }
  if (eps.empty())
    throw DataError(
        fmt::format("{}: terminals/timeouts: no episode with a complete step", f.name()));
  arr.observations.reserve((kept_steps + eps.size()) * od);
  arr.actions.reserve(kept_steps * ad);
  arr.rewards.reserve(kept_steps);
  arr.terminations.reserve(kept_steps);
  arr.truncations.reserve(kept_steps);
  for (std::size_t e = 0; e < eps.size(); ++e) {
    const Ep& ep = eps[e];
    const std::uint64_t b = ep.begin, t = ep.steps;
    arr.observations.insert(arr.observations.end(), o.begin() + b * od, o.begin() + (b + t) * od);
    // the final observation: stored, else repeated after a termination, else the next row
    const auto fin = !next.empty()   ? next.begin() + (b + t - 1) * od
                     : ep.terminated ? o.begin() + (b + t - 1) * od
                                     : o.begin() + (b + t) * od;
    arr.observations.insert(arr.observations.end(), fin, fin + od);
    arr.actions.insert(arr.actions.end(), a.begin() + b * ad, a.begin() + (b + t) * ad);
    arr.rewards.insert(arr.rewards.end(), r.begin() + b, r.begin() + b + t);
    arr.terminations.insert(arr.terminations.end(), t, 0);
    arr.truncations.insert(arr.truncations.end(), t, 0);
    arr.terminations.back() = ep.terminated ? 1 : 0;
    arr.truncations.back() = ep.truncated ? 1 : 0;
    arr.episode_starts.push_back(arr.episode_starts.back() + t);
    if (!users.empty()) {
      for (std::uint64_t i = b + 1; i < b + t; ++i)
        if (users[i] != users[b])
          throw DataError(fmt::format("{}: {}: rows {} and {} of one episode hold users {} and {}",
                                      f.name(), options.user_id_key, b, i, users[b], users[i]));
      arr.user_ids.push_back(users[b]);
    } else {
      arr.user_ids.push_back(static_cast<std::int64_t>(e));
    }
    arr.seeds.push_back(-1);
  }
  json meta;
  meta["d4rl"] = {{"metadata", read_metadata(f)},
                  {"timeouts", has_timeouts},
                  {"next_observations", !next.empty()},
                  {"dropped_transitions", dropped}};
  info.metadata_json = meta.dump();
  return Dataset::from_arrays(std::move(info), std::move(arr), f.name());
}

}  // namespace dprl
