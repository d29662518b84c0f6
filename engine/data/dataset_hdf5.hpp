// Internal to the dataset readers and writers (engine/data/dataset_io.hpp documents the formats):
// the HDF5 halves of the Minari layout and the D4RL reader.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <vector>

#include "engine/data/dataset.hpp"
#include "engine/data/dataset_io.hpp"

namespace dprl::detail {

// Reads episode_0..episode_{episodes-1} of a Minari main_data.hdf5, checking each against the
// dimensions and the metadata's total_steps. Users come from the user_id attribute (else the
// episode index), seeds from seed (else -1).
DatasetArrays read_minari_episodes(const std::filesystem::path& file, std::uint64_t episodes,
                                   std::uint64_t total_steps, const Space& obs, const Space& act);

// Byte offsets in main_data.hdf5 of one episode's observations, actions, rewards, terminations
// and truncations.
struct EpisodeLayout {
  std::uint64_t offset[5];
};

// Writes every episode of data into a new main_data.hdf5; returns where each array landed.
std::vector<EpisodeLayout> write_minari_episodes(const Dataset& data,
                                                 const std::filesystem::path& file);

// The index that lets a later load skip HDF5's per-dataset cost (five datasets per episode):
// data/dprl_index.bin holds main_data.hdf5's size and modification time, each episode's steps,
// user, seed and array offsets, and a checksum. It describes the HDF5 file exactly as written
// here; any change to that file (its size or modification time) makes readers ignore it.
void write_minari_index(const std::filesystem::path& index, const std::filesystem::path& h5file,
                        const Dataset& data, std::span<const EpisodeLayout> layout);
// The arrays read through the index with plain reads at the recorded offsets, or nullopt when
// the index is absent or does not match the HDF5 file, the metadata or the spaces (then the
// caller reads through HDF5). Read errors throw DataError.
std::optional<DatasetArrays> read_minari_index(const std::filesystem::path& index,
                                               const std::filesystem::path& h5file,
                                               std::uint64_t episodes, std::uint64_t total_steps,
                                               const Space& obs, const Space& act);

}  // namespace dprl::detail
