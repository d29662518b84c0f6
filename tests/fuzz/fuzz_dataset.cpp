// Fuzz target: the dataset readers on top of HDF5 images. The first byte picks the reader and the
// rest is its input: 0 a D4RL file, 1 a D4RL file read with per-row user ids ("user_id"), 2 the
// metadata.json of a Minari folder whose data file is the committed minari_discrete fixture,
// 3 a Minari space serialisation (space_from_minari_json).
#include "engine/data/dataset_io.hpp"
#include "engine/error.hpp"
#include "tests/fuzz/fuzz_common.hpp"

#ifndef DPRL_SOURCE_DIR
#error "DPRL_SOURCE_DIR names the source tree (the Minari fixture)"
#endif

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dprl;
  if (size == 0) return 0;
  const std::string rest = fuzz::as_string(data + 1, size - 1);
  try {
    switch (data[0] % 4) {
      case 0:
        load_d4rl(fuzz::put("d.hdf5", rest));
        break;
      case 1: {
        D4rlOptions o;
        o.user_id_key = "user_id";
        load_d4rl(fuzz::put("d.hdf5", rest), o);
        break;
      }
      case 2: {
        const auto dir = fuzz::scratch() / "minari";
        std::filesystem::remove_all(dir);
        std::filesystem::create_directories(dir / "data");
        std::filesystem::copy_file(std::filesystem::path(DPRL_SOURCE_DIR) /
                                       "tests/engine/fixtures/minari_discrete/data/main_data.hdf5",
                                   dir / "data" / "main_data.hdf5");
        write_file_atomic(dir / "data" / "metadata.json", rest);
        load_minari(dir, false);
        break;
      }
      default:
        space_from_minari_json(rest, "space");
    }
  } catch (const Error& e) {
    fuzz::refused(e);
  }
  return 0;
}
