// The D4RL reader (flat HDF5 files of Farama-Foundation/D4RL): see engine/dataset_io.hpp.
#include "engine/dataset_io.hpp"
#include "engine/error.hpp"

namespace dprl {

Dataset load_d4rl(const std::filesystem::path& file, const D4rlOptions& options) {
  throw DataError(file.string() + ": D4RL reading is not implemented yet");
}

}  // namespace dprl
