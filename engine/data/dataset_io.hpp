// Reading and writing offline datasets in the formats the ecosystem uses.
//
// Minari (layout of Minari 0.5.3, HDF5 storage; read and write): a folder DIR with
//   DIR/data/metadata.json     dataset_id, total_episodes, total_steps, data_format ("hdf5"),
//                              jpeg_encoding, observation_space and action_space (each a JSON
//                              string in Minari's space serialisation: Box {dtype, shape, low,
//                              high} with Python's Infinity tokens, Discrete {dtype, start, n}),
//                              minari_version, dataset_size (MB), and our key "dprl" {format,
//                              env_id, env_params {name: text}, metadata {...}} that Minari ignores
//   DIR/data/main_data.hdf5    one group episode_<i> per episode (i = 0..N-1) holding
//                              observations (T+1 rows), actions, rewards, terminations,
//                              truncations (T rows) and int64 attributes id, total_steps, seed
//                              (when known) and user_id (ours; Minari readers ignore it)
//   DIR/data/dprl_index.bin    ours: main_data.hdf5's size and modification time and where each
//                              episode's arrays sit in it, so a load reads them with plain reads
//                              instead of opening five HDF5 datasets per episode; ignored (HDF5
//                              is read instead) when absent or when the HDF5 file has changed
// Written: Box as float32, Discrete as int64, rewards float32, flags as h5py's bool (an HDF5 enum
// over int8, FALSE = 0, TRUE = 1). Read: any integer or float type (converted to float32), flags
// as enum, bool or 0/1 numbers; Box spaces of any shape are flattened. Not supported (DataError):
// arrow/parquet storage, Dict/Tuple/Text/MultiDiscrete spaces, Discrete with start != 0,
// JPEG-encoded image spaces, the Minari 0.4 layout without metadata.json. An episode without a
// user_id attribute gets its episode index (one trajectory, one unit).
//
// D4RL (flat HDF5 file, as written by Farama-Foundation/D4RL's generation scripts; read only):
// observations, actions, rewards, terminals (N rows; rewards and terminals may be N x 1),
// optional timeouts and next_observations, infos/* and metadata/* (scalars and strings of
// metadata/ are kept in the info's metadata; other members ignored). Any dataset may be
// gzip-compressed. Episodes end at terminals | timeouts (and at the end of the file). Without
// next_observations, an episode's final observation is unknown: a terminated episode repeats its
// last observation (never bootstrapped from); an episode that timed out or was cut by the end of
// the file drops its last transition and marks the one before truncated (as
// d4rl.qlearning_dataset drops timeout steps). Integer observations with one column become
// Discrete(max + 1), integer actions likewise; otherwise Box(-inf, inf). The user of an episode
// is its index unless D4rlOptions::user_id_key names a per-row dataset (e.g. "infos/user_id").
//
// Every read checks shapes and refuses extents the file cannot hold before allocating. Errors are
// DataError "<file>: <key>: <what>". Writes go to DIR.tmp-<random> and are renamed into place,
// so a reader sees no dataset or a whole one.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "engine/data/dataset.hpp"

namespace dprl {

enum class DatasetFormat { kAuto, kMinari, kD4rl };

// "auto", "minari" or "d4rl"; ParamError otherwise.
DatasetFormat parse_dataset_format(std::string_view name);
// kMinari for a folder holding data/ (or a path inside such a folder's data/), kD4rl for a
// .hdf5/.h5 file; DataError otherwise.
DatasetFormat detect_dataset_format(const std::filesystem::path& path);

struct D4rlOptions {
  std::string user_id_key;             // per-row dataset of user ids; "" = episode index
  std::int64_t max_episode_steps = 0;  // without "timeouts": also end episodes every N steps
};

struct LoadOptions {
  DatasetFormat format = DatasetFormat::kAuto;
  D4rlOptions d4rl;
  bool use_index = true;  // Minari: read through data/dprl_index.bin when it matches the file
};

// The entry point for experiments and the CLI: format "auto" | "minari" | "d4rl"; the data is
// then checked in full (Dataset::validate: finite values inside the spaces, flags).
Dataset load_dataset(const std::filesystem::path& path, std::string_view format = "auto");
Dataset load_dataset(const std::filesystem::path& path, const LoadOptions& options);
// The readers alone (shapes and types checked, values not). path: the dataset folder (or its
// data/ folder or data/main_data.hdf5).
Dataset load_minari(const std::filesystem::path& path, bool use_index = true);
Dataset load_d4rl(const std::filesystem::path& file, const D4rlOptions& options = {});

struct SaveOptions {
  bool overwrite = false;  // replace an existing dataset folder (else DataError); a non-empty
                           // folder without data/metadata.json is never replaced
};
// Whether dir is a dataset folder: it holds data/metadata.json.
bool is_dataset_folder(const std::filesystem::path& dir);
// Whether save_minari with overwrite may write dir: absent, an empty folder, or a dataset
// folder (holding data/metadata.json); never a folder of something else.
bool replaceable_dataset_folder(const std::filesystem::path& dir);
// Writes data as a Minari dataset folder dir (atomically: see above).
void save_minari(const Dataset& data, const std::filesystem::path& dir,
                 const SaveOptions& options = {});

// Minari's JSON serialisation of a space (Python json: Infinity for infinite bounds).
std::string space_to_minari_json(const Space& space);
// Parses it back; DataError naming where on an unsupported or malformed space.
Space space_from_minari_json(std::string_view json, const std::string& where);

}  // namespace dprl
