// Fuzz target: run checkpoints (checkpoint.bin, what `dprl run --resume` reads). The first byte
// picks a learner of checkpoint_cases(); the rest is a checkpoint payload, which the target wraps
// in the checkpoint file format (magic, version, length, checksum: a mutated file almost never
// passes the checksum, so the payload is what is worth mutating) and resumes a small run of that
// learner from, to the end of its steps, writing checkpoints as a resumed run does. A first byte
// past the cases makes the rest a whole checkpoint file for read_run_checkpoint instead.
// Seeds: tests/fuzz/corpus/checkpoint, written by make_seeds (tests/fuzz/make_seeds.cpp).
#include "engine/error.hpp"
#include "engine/state_io.hpp"
#include "tests/fuzz/checkpoint_cases.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dprl;
  if (size == 0) return 0;
  const auto& cases = fuzz::checkpoint_cases();
  const std::string rest = fuzz::as_string(data + 1, size - 1);
  const auto dir = fuzz::scratch() / "run";
  try {
    if (data[0] < cases.size()) {
      const auto& c = cases[data[0]];
      fuzz::run_checkpoint_case(c, dir, rest, c.every);
    } else {
      std::filesystem::remove_all(dir);
      std::filesystem::create_directories(dir);
      write_file_atomic(dir / algos::kCheckpointFile, rest);
      algos::read_run_checkpoint(dir);
    }
  } catch (const Error& e) {
    fuzz::refused(e);
  }
  return 0;
}
