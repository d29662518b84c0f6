// data/dprl_index.bin: where main_data.hdf5 keeps each episode's arrays, so loads skip HDF5's
// per-dataset open (about 40 us each, five per episode). Layout, native little-endian:
//   header   "DPRLIDX1", then u64: version, h5 size, h5 mtime (file clock ticks), episodes,
//            total steps, obs dim, act dim, obs discrete, act discrete
//   records  per episode, u64: steps, user (i64), seed (i64), five array offsets
//   trailer  u64 checksum of everything before (mix64 folded over the words)
// Arrays are as write_minari_episodes stores them: Box float32, Discrete int64, rewards float32,
// flags one byte each.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <bit>
#include <cstring>
#include <vector>

#include "engine/data/dataset_hdf5.hpp"
#include "engine/data/hdf5_file.hpp"
#include "engine/error.hpp"
#include "engine/io.hpp"
#include "engine/rng.hpp"

namespace dprl::detail {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'D', 'P', 'R', 'L', 'I', 'D', 'X', '1'};
constexpr std::uint64_t kVersion = 1;
constexpr std::size_t kHeaderWords = 9, kRecordWords = 8;

std::uint64_t checksum(std::span<const std::uint64_t> words) {
  std::uint64_t h = 0x6470726c696478ULL;
  for (std::uint64_t w : words) h = mix64(h ^ w);
  return h;
}

// The file's size and modification time, or false when it cannot be stat'ed.
bool stamp(const fs::path& file, std::uint64_t& size, std::uint64_t& mtime) {
  std::error_code ec1, ec2;
  size = fs::file_size(file, ec1);
  mtime = static_cast<std::uint64_t>(fs::last_write_time(file, ec2).time_since_epoch().count());
  return !ec1 && !ec2;
}

class RawFile {
 public:
  explicit RawFile(const fs::path& file) : name_(file.string()) {
    fd_ = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw DataError(fmt::format("{}: cannot open", name_));
  }
  ~RawFile() { ::close(fd_); }
  RawFile(const RawFile&) = delete;
  RawFile& operator=(const RawFile&) = delete;
  void read(std::uint64_t offset, void* out, std::size_t bytes, const char* what) {
    auto* p = static_cast<char*>(out);
    while (bytes > 0) {
      const ssize_t n = ::pread(fd_, p, bytes, static_cast<off_t>(offset));
      if (n <= 0)
        throw DataError(fmt::format("{}: {}: read failed at byte {}", name_, what, offset));
      p += n, offset += static_cast<std::uint64_t>(n), bytes -= static_cast<std::size_t>(n);
    }
  }

 private:
  std::string name_;
  int fd_ = -1;
};

}  // namespace

void write_minari_index(const fs::path& index, const fs::path& h5file, const Dataset& data,
                        std::span<const EpisodeLayout> layout) {
  if constexpr (std::endian::native != std::endian::little) return;
  std::uint64_t size = 0, mtime = 0;
  if (!stamp(h5file, size, mtime)) return;
  for (const auto& l : layout)
    for (std::uint64_t off : l.offset)
      if (off == h5::kNoOffset) return;  // no contiguous storage: nothing to index
  const Space& os = data.info().observation_space;
  const Space& as = data.info().action_space;
  std::vector<std::uint64_t> w;
  w.reserve(1 + kHeaderWords + kRecordWords * layout.size() + 1);
  std::uint64_t magic;
  std::memcpy(&magic, kMagic, 8);
  w.insert(w.end(), {magic, kVersion, size, mtime, data.num_episodes(), data.num_transitions(),
                     os.dim(), as.dim(), os.is_discrete() ? 1u : 0u, as.is_discrete() ? 1u : 0u});
  for (std::size_t e = 0; e < layout.size(); ++e) {
    w.push_back(data.episode_length(e));
    w.push_back(static_cast<std::uint64_t>(data.user_id(e)));
    w.push_back(static_cast<std::uint64_t>(data.episode_seed(e)));
    w.insert(w.end(), std::begin(layout[e].offset), std::end(layout[e].offset));
  }
  w.push_back(checksum(w));
  write_file_atomic(index, std::string_view(reinterpret_cast<const char*>(w.data()),
                                            w.size() * sizeof(std::uint64_t)));
}

std::optional<DatasetArrays> read_minari_index(const fs::path& index, const fs::path& h5file,
                                               std::uint64_t episodes, std::uint64_t total_steps,
                                               const Space& obs, const Space& act) {
  if constexpr (std::endian::native != std::endian::little) return std::nullopt;
  std::error_code ec;
  if (!fs::is_regular_file(index, ec)) return std::nullopt;
  const std::uint64_t want = (1 + kHeaderWords + kRecordWords * episodes + 1) * 8;
  if (episodes > (std::uint64_t{1} << 40) || fs::file_size(index, ec) != want || ec)
    return std::nullopt;
  const std::string bytes = read_file(index);
  std::vector<std::uint64_t> w(bytes.size() / 8);
  std::memcpy(w.data(), bytes.data(), w.size() * 8);
  if (std::memcmp(w.data(), kMagic, 8) != 0 || w[1] != kVersion ||
      checksum(std::span(w).first(w.size() - 1)) != w.back())
    return std::nullopt;
  std::uint64_t size = 0, mtime = 0;
  if (!stamp(h5file, size, mtime) || w[2] != size || w[3] != mtime) return std::nullopt;
  const std::uint64_t od = obs.dim(), ad = act.dim();
  if (w[4] != episodes || w[5] != total_steps || w[6] != od || w[7] != ad ||
      w[8] != (obs.is_discrete() ? 1u : 0u) || w[9] != (act.is_discrete() ? 1u : 0u))
    return std::nullopt;
  // every array inside the file before anything is allocated
  const std::uint64_t os = obs.is_discrete() ? 8 : 4 * od, as = act.is_discrete() ? 8 : 4 * ad;
  std::uint64_t steps = 0;
  for (std::uint64_t e = 0; e < episodes; ++e) {
    const std::uint64_t* r = &w[1 + kHeaderWords + kRecordWords * e];
    const std::uint64_t t = r[0];
    const std::uint64_t len[5] = {(t + 1) * os, t * as, t * 4, t, t};
    if (t == 0 || t > size) return std::nullopt;
    for (int k = 0; k < 5; ++k)
      if (r[3 + k] > size || len[k] > size - r[3 + k]) return std::nullopt;
    steps += t;
  }
  if (steps != total_steps) return std::nullopt;

  DatasetArrays a;
  a.observations.resize((total_steps + episodes) * od);
  a.actions.resize(total_steps * ad);
  a.rewards.resize(total_steps);
  a.terminations.resize(total_steps);
  a.truncations.resize(total_steps);
  a.episode_starts.reserve(episodes + 1);
  a.user_ids.reserve(episodes);
  a.seeds.reserve(episodes);
  RawFile in(h5file);
  std::vector<std::int64_t> ints;
  // Discrete values are stored as int64: read, then convert to float
  const auto read_values = [&](std::uint64_t off, float* out, std::size_t n, bool discrete,
                               const char* what) {
    if (!discrete) return in.read(off, out, n * 4, what);
    ints.resize(n);
    in.read(off, ints.data(), n * 8, what);
    for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<float>(ints[i]);
  };
  std::uint64_t t0 = 0;
  for (std::uint64_t e = 0; e < episodes; ++e) {
    const std::uint64_t* r = &w[1 + kHeaderWords + kRecordWords * e];
    const std::uint64_t t = r[0];
    read_values(r[3], a.observations.data() + (t0 + e) * od, (t + 1) * od, obs.is_discrete(),
                "observations");
    read_values(r[4], a.actions.data() + t0 * ad, t * ad, act.is_discrete(), "actions");
    in.read(r[5], a.rewards.data() + t0, t * 4, "rewards");
    in.read(r[6], a.terminations.data() + t0, t, "terminations");
    in.read(r[7], a.truncations.data() + t0, t, "truncations");
    t0 += t;
    a.episode_starts.push_back(t0);
    a.user_ids.push_back(static_cast<std::int64_t>(r[1]));
    a.seeds.push_back(static_cast<std::int64_t>(r[2]));
  }
  return a;
}

}  // namespace dprl::detail
