// The HDF5 half of the Minari layout (Minari 0.5.3's HDF5 storage): episode groups.
#include <fmt/format.h>

#include <cmath>
#include <string>
#include <vector>

#include "engine/data/dataset_hdf5.hpp"
#include "engine/data/hdf5_file.hpp"
#include "engine/error.hpp"

namespace dprl::detail {
namespace {

// Discrete values stored as int64, as Minari writes Discrete spaces.
std::vector<std::int64_t> as_int64(std::span<const float> v) {
  std::vector<std::int64_t> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = static_cast<std::int64_t>(v[i]);
  return out;
}

// Checks an episode member's extent: rows and elements per row.
void expect_shape(const h5::File& f, const h5::Array& a, std::uint64_t rows, std::uint64_t cols) {
  const auto& in = a.info();
  if (in.shape.empty() || in.rows() != rows || in.row_elements() != cols)
    throw DataError(fmt::format("{}: {}: shape ({}) but expected {} rows of {} values", f.name(),
                                a.key(), fmt::join(in.shape, ", "), rows, cols));
  a.check_plausible();
}

}  // namespace

DatasetArrays read_minari_episodes(const std::filesystem::path& file, std::uint64_t episodes,
                                   std::uint64_t total_steps, const Space& obs, const Space& act) {
  const h5::File f = h5::File::open(file);
  const std::size_t od = obs.dim(), ad = act.dim();
  // refuse claims the file cannot hold before reserving for them (an episode group takes more
  // than 64 bytes; a step at least one byte per field even compressed 1100:1)
  const std::uint64_t size = f.file_size();
  if (episodes > size / 64)
    throw DataError(fmt::format("{}: total_episodes: {} episodes cannot fit in {} bytes", f.name(),
                                episodes, size));
  if (total_steps / 1100 > size)
    throw DataError(fmt::format("{}: total_steps: {} steps cannot fit in {} bytes", f.name(),
                                total_steps, size));
  DatasetArrays a;
  a.observations.reserve((total_steps + episodes) * od);
  a.actions.reserve(total_steps * ad);
  a.rewards.reserve(total_steps);
  a.terminations.reserve(total_steps);
  a.truncations.reserve(total_steps);
  a.episode_starts.reserve(episodes + 1);
  a.user_ids.reserve(episodes);
  a.seeds.reserve(episodes);
  std::uint64_t steps = 0;
  for (std::uint64_t e = 0; e < episodes; ++e) {
    const std::string name = fmt::format("episode_{}", e);
    const h5::Group g = f.group(name);  // "missing" when metadata.json claims more episodes
    const h5::Array rew = g.array("rewards");
    const std::uint64_t t = rew.info().rows();
    if (t == 0) throw DataError(fmt::format("{}: {}: an episode without steps", f.name(), name));
    if (steps + t > total_steps)
      throw DataError(fmt::format("{}: {}: the episodes hold more steps than total_steps = {}",
                                  f.name(), name, total_steps));
    expect_shape(f, rew, t, 1);
    const h5::Array o = g.array("observations");
    expect_shape(f, o, t + 1, od);
    const h5::Array ac = g.array("actions");
    expect_shape(f, ac, t, ad);
    const h5::Array te = g.array("terminations");
    expect_shape(f, te, t, 1);
    const h5::Array tr = g.array("truncations");
    expect_shape(f, tr, t, 1);
    std::int64_t user = static_cast<std::int64_t>(e), seed = -1;
    for (const h5::Attribute& at : g.attrs()) {
      const std::string& key = at.name;
      if (key != "total_steps" && key != "id" && key != "user_id" && key != "seed") continue;
      // the privacy unit is never coerced: a user id that is not an exact integer (a string, a
      // fraction, beyond int64) would merge or split units silently
      if (!at.integer && (key == "user_id" || at.type == h5::TypeClass::kInteger ||
                          at.type == h5::TypeClass::kFloat))
        throw DataError(fmt::format("{}: {}@{}: {} is not an integer{}", f.name(), name, key,
                                    at.shown, key == "user_id" ? " user id" : ""));
      if (!at.integer) continue;  // a non-numeric seed, id or total_steps: not ours
      const std::int64_t v = *at.integer;
      if (key == "total_steps" && v != static_cast<std::int64_t>(t))
        throw DataError(fmt::format("{}: {}@total_steps: {} but the episode has {} steps", f.name(),
                                    name, v, t));
      if (key == "id" && v != static_cast<std::int64_t>(e))
        throw DataError(fmt::format("{}: {}@id: {}, expected {}", f.name(), name, v, e));
      if (key == "user_id") user = v;
      if (key == "seed") seed = v;
    }
    const std::size_t o0 = a.observations.size(), a0 = a.actions.size(), t0 = a.rewards.size();
    a.observations.resize(o0 + (t + 1) * od);
    o.read(std::span<float>(a.observations).subspan(o0));
    a.actions.resize(a0 + t * ad);
    ac.read(std::span<float>(a.actions).subspan(a0));
    a.rewards.resize(t0 + t);
    rew.read(std::span<float>(a.rewards).subspan(t0));
    a.terminations.resize(t0 + t);
    te.read_flags(std::span<std::uint8_t>(a.terminations).subspan(t0));
    a.truncations.resize(t0 + t);
    tr.read_flags(std::span<std::uint8_t>(a.truncations).subspan(t0));
    steps += t;
    a.episode_starts.push_back(steps);
    a.user_ids.push_back(user);
    a.seeds.push_back(seed);
  }
  if (steps != total_steps)
    throw DataError(fmt::format("{}: total_steps: metadata.json says {} but the episodes hold {}",
                                f.name(), total_steps, steps));
  return a;
}

std::vector<EpisodeLayout> write_minari_episodes(const Dataset& data,
                                                 const std::filesystem::path& file) {
  h5::File f = h5::File::create(file);
  std::vector<EpisodeLayout> layout(data.num_episodes());
  const Space& os = data.info().observation_space;
  const Space& as = data.info().action_space;
  const std::uint64_t od = os.dim(), ad = as.dim();
  for (std::size_t e = 0; e < data.num_episodes(); ++e) {
    const std::string g = fmt::format("episode_{}", e);
    const std::uint64_t t = data.episode_length(e), s = data.episode_start(e);
    f.create_group(g);
    f.set_attr(g, "id", static_cast<std::int64_t>(e));
    f.set_attr(g, "total_steps", static_cast<std::int64_t>(t));
    if (data.episode_seed(e) >= 0) f.set_attr(g, "seed", data.episode_seed(e));
    f.set_attr(g, "user_id", data.user_id(e));
    const auto obs = data.observations().subspan((s + e) * od, (t + 1) * od);
    const auto act = data.actions().subspan(s * ad, t * ad);
    if (os.is_discrete()) {
      const std::uint64_t shape[1] = {t + 1};
      layout[e].offset[0] =
          f.write(g + "/observations", std::span<const std::int64_t>(as_int64(obs)), shape);
    } else {
      const std::uint64_t shape[2] = {t + 1, od};
      layout[e].offset[0] = f.write(g + "/observations", obs, shape);
    }
    if (as.is_discrete()) {
      const std::uint64_t shape[1] = {t};
      layout[e].offset[1] =
          f.write(g + "/actions", std::span<const std::int64_t>(as_int64(act)), shape);
    } else {
      const std::uint64_t shape[2] = {t, ad};
      layout[e].offset[1] = f.write(g + "/actions", act, shape);
    }
    const std::uint64_t shape[1] = {t};
    layout[e].offset[2] = f.write(g + "/rewards", data.rewards().subspan(s, t), shape);
    layout[e].offset[3] = f.write_flags(g + "/terminations", data.terminations().subspan(s, t));
    layout[e].offset[4] = f.write_flags(g + "/truncations", data.truncations().subspan(s, t));
  }
  f.close();
  return layout;
}

}  // namespace dprl::detail
