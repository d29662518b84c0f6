// Internal to the dataset readers and writers (engine/dataset_io.hpp documents the formats): the
// HDF5 halves of the Minari layout and the D4RL reader.
#pragma once

#include <cstdint>
#include <filesystem>

#include "engine/dataset.hpp"
#include "engine/dataset_io.hpp"

namespace dprl::detail {

// Reads episode_0..episode_{episodes-1} of a Minari main_data.hdf5, checking each against the
// dimensions and the metadata's total_steps. Users come from the user_id attribute (else the
// episode index), seeds from seed (else -1).
DatasetArrays read_minari_episodes(const std::filesystem::path& file, std::uint64_t episodes,
                                   std::uint64_t total_steps, const Space& obs, const Space& act);

// Writes every episode of data into a new main_data.hdf5.
void write_minari_episodes(const Dataset& data, const std::filesystem::path& file);

}  // namespace dprl::detail
