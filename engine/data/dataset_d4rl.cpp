// The D4RL reader (flat HDF5 files as Farama-Foundation/D4RL writes them): see
// engine/data/dataset_io.hpp for the episode rules.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/data/dataset_io.hpp"
#include "engine/data/hdf5_file.hpp"
#include "engine/error.hpp"

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

// The file's columns, row-major: n rows of od observation and ad action elements; done and
// timeout flags per row (timeouts derived from max_episode_steps when the file has none); next
// observations and user ids when present (else empty).
struct Columns {
  std::uint64_t n = 0, od = 0, ad = 0;
  std::vector<float> o, a, r, next;
  std::vector<std::uint8_t> done, timeout;
  std::vector<std::int64_t> users;
  bool has_timeouts = false;
  Space observation_space, action_space;
};

Columns read_columns(const h5::File& f, const D4rlOptions& options) {
  Columns c;
  const h5::Array obs = f.array("observations");
  const std::uint64_t n = c.n = obs.info().rows();
  if (obs.info().shape.empty() || n == 0)
    throw DataError(fmt::format("{}: observations: no rows", f.name()));
  obs.check_plausible();
  c.od = obs.info().row_elements();
  const h5::Array act = f.array("actions");
  expect_rows(f, act, n, 0);
  c.ad = act.info().row_elements();
  const h5::Array rew = f.array("rewards");
  expect_rows(f, rew, n, 1);
  const h5::Array term = f.array("terminals");
  expect_rows(f, term, n, 1);
  c.o.resize(n * c.od), c.a.resize(n * c.ad), c.r.resize(n);
  c.done.resize(n), c.timeout.assign(n, 0);
  obs.read(std::span<float>(c.o));
  act.read(std::span<float>(c.a));
  rew.read(std::span<float>(c.r));
  term.read_flags(std::span<std::uint8_t>(c.done));
  c.has_timeouts = f.exists("timeouts");
  if (c.has_timeouts) {
    const h5::Array to = f.array("timeouts");
    expect_rows(f, to, n, 1);
    to.read_flags(std::span<std::uint8_t>(c.timeout));
  } else if (options.max_episode_steps > 0) {
    std::uint64_t len = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      ++len;
      if (c.done[i])
        len = 0;
      else if (len == static_cast<std::uint64_t>(options.max_episode_steps))
        c.timeout[i] = 1, len = 0;
    }
  }
  if (f.exists("next_observations")) {
    const h5::Array nx = f.array("next_observations");
    expect_rows(f, nx, n, c.od);
    c.next.resize(n * c.od);
    nx.read(std::span<float>(c.next));
  }
  if (!options.user_id_key.empty()) {
    const h5::Array u = f.array(options.user_id_key);
    expect_rows(f, u, n, 1);
    c.users.resize(n);
    u.read_exact_integers(std::span<std::int64_t>(c.users));  // user ids are never coerced
  }
  c.observation_space = infer_space(f, obs, c.o);
  c.action_space = infer_space(f, act, c.a);
  return c;
}

// An episode's first row, kept steps and how it ended.
struct Episode {
  std::uint64_t begin, steps;
  bool terminated, truncated;
};

// Episodes end at a terminal or timeout flag (or the last row). Without next observations the
// last step of an episode that did not terminate has no known next observation: it is dropped
// (counted in dropped; its observation ends the episode).
std::vector<Episode> split_episodes(const Columns& c, std::uint64_t& dropped,
                                    std::uint64_t& kept_steps) {
  std::vector<Episode> eps;
  for (std::uint64_t begin = 0; begin < c.n;) {
    std::uint64_t end = begin;
    while (end + 1 < c.n && !c.done[end] && !c.timeout[end]) ++end;
    Episode ep{begin, end - begin + 1, c.done[end] != 0, c.timeout[end] != 0};
    if (c.next.empty() && !ep.terminated) {
      --ep.steps;
      ++dropped;
    }
    if (ep.steps > 0) eps.push_back(ep), kept_steps += ep.steps;
    begin = end + 1;
  }
  return eps;
}

// The dataset arrays of the episodes: kept transitions and each episode's final observation; the
// user of an episode is the user id column's (the same on all its rows) or its index.
DatasetArrays episode_arrays(const h5::File& f, const D4rlOptions& options, const Columns& c,
                             const std::vector<Episode>& eps, std::uint64_t kept_steps) {
  const std::uint64_t od = c.od, ad = c.ad;
  DatasetArrays arr;
  arr.observations.reserve((kept_steps + eps.size()) * od);
  arr.actions.reserve(kept_steps * ad);
  arr.rewards.reserve(kept_steps);
  arr.terminations.reserve(kept_steps);
  arr.truncations.reserve(kept_steps);
  for (std::size_t e = 0; e < eps.size(); ++e) {
    const Episode& ep = eps[e];
    const std::uint64_t b = ep.begin, t = ep.steps;
    arr.observations.insert(arr.observations.end(), c.o.begin() + b * od,
                            c.o.begin() + (b + t) * od);
    // the final observation: stored, else repeated after a termination, else the next row
    const auto fin = !c.next.empty() ? c.next.begin() + (b + t - 1) * od
                     : ep.terminated ? c.o.begin() + (b + t - 1) * od
                                     : c.o.begin() + (b + t) * od;
    arr.observations.insert(arr.observations.end(), fin, fin + od);
    arr.actions.insert(arr.actions.end(), c.a.begin() + b * ad, c.a.begin() + (b + t) * ad);
    arr.rewards.insert(arr.rewards.end(), c.r.begin() + b, c.r.begin() + b + t);
    arr.terminations.insert(arr.terminations.end(), t, 0);
    arr.truncations.insert(arr.truncations.end(), t, 0);
    arr.terminations.back() = ep.terminated ? 1 : 0;
    arr.truncations.back() = ep.truncated ? 1 : 0;
    arr.episode_starts.push_back(arr.episode_starts.back() + t);
    if (!c.users.empty()) {
      for (std::uint64_t i = b + 1; i < b + t; ++i)
        if (c.users[i] != c.users[b])
          throw DataError(fmt::format("{}: {}: rows {} and {} of one episode hold users {} and {}",
                                      f.name(), options.user_id_key, b, i, c.users[b], c.users[i]));
      arr.user_ids.push_back(c.users[b]);
    } else {
      arr.user_ids.push_back(static_cast<std::int64_t>(e));
    }
    arr.seeds.push_back(-1);
  }
  return arr;
}

}  // namespace

Dataset load_d4rl(const std::filesystem::path& file, const D4rlOptions& options) {
  const h5::File f = h5::File::open(file);
  const Columns c = read_columns(f, options);
  DatasetInfo info;
  info.dataset_id = "d4rl/" + file.stem().string();
  info.observation_space = c.observation_space;
  info.action_space = c.action_space;
  std::uint64_t dropped = 0, kept_steps = 0;
  const std::vector<Episode> eps = split_episodes(c, dropped, kept_steps);
  if (eps.empty())
    throw DataError(
        fmt::format("{}: terminals/timeouts: no episode with a complete step", f.name()));
  DatasetArrays arr = episode_arrays(f, options, c, eps, kept_steps);
  json meta;
  meta["d4rl"] = {{"metadata", read_metadata(f)},
                  {"timeouts", c.has_timeouts},
                  {"next_observations", !c.next.empty()},
                  {"dropped_transitions", dropped}};
  info.metadata_json = meta.dump();
  return Dataset::from_arrays(std::move(info), std::move(arr), f.name());
}

}  // namespace dprl
