// Fuzz target: the binary network file (engine/nn/nn_io.hpp: policy.bin, teacher and expert files)
// behind its checksum. The first byte picks one of the readers of nn_cases.hpp; the rest is a
// network file payload, which the target wraps in the file format (magic, version, length,
// checksum: a mutated file almost never passes the checksum, so the payload is what is worth
// mutating; the policy target feeds whole files). Seeds: tests/fuzz/corpus/nn, written by
// make_seeds (tests/fuzz/make_seeds.cpp).
#include "engine/error.hpp"
#include "tests/fuzz/fuzz_common.hpp"
#include "tests/fuzz/nn_cases.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dprl;
  if (size == 0) return 0;
  const auto file =
      fuzz::put("policy.bin", fuzz::wrap_nn_payload(fuzz::as_string(data + 1, size - 1)));
  try {
    fuzz::read_nn_case(data[0] % fuzz::kNnReaders, file);
  } catch (const Error& e) {
    fuzz::refused(e);
  }
  return 0;
}
