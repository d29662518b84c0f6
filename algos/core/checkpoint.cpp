#include "algos/core/checkpoint.hpp"

#include <fmt/format.h>

#include <csignal>
#include <cstdlib>

#include "engine/error.hpp"
#include "engine/io.hpp"
#include "engine/state_io.hpp"

namespace dprl::algos {
namespace {

std::int64_t env_int(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return -1;
  char* end = nullptr;
  const long long x = std::strtoll(v, &end, 10);
  return (end && *end == '\0' && x >= 0) ? x : -1;
}

}  // namespace

void write_run_checkpoint(const std::filesystem::path& dir, std::string_view payload) {
  const auto cur = dir / kCheckpointFile, prev = dir / kPrevCheckpointFile;
  const auto next = dir / "checkpoint.next.bin";
  write_checkpoint_file(next, payload);
  std::error_code ec;
  if (std::filesystem::exists(cur, ec)) {
    std::filesystem::rename(cur, prev, ec);
    if (ec) throw DataError(fmt::format("cannot rename {}: {}", cur.string(), ec.message()));
  }
  std::filesystem::rename(next, cur, ec);
  if (ec) throw DataError(fmt::format("cannot rename {}: {}", next.string(), ec.message()));
  sync_directory(dir);
}

std::optional<LoadedCheckpoint> read_run_checkpoint(const std::filesystem::path& dir) {
  const auto cur = dir / kCheckpointFile, prev = dir / kPrevCheckpointFile;
  std::error_code ec;
  const bool has_cur = std::filesystem::exists(cur, ec);
  const bool has_prev = std::filesystem::exists(prev, ec);
  if (!has_cur && !has_prev) return std::nullopt;
  const auto file = has_cur ? cur : prev;
  try {
    return LoadedCheckpoint{file, read_checkpoint_file(file)};
  } catch (const DataError& e) {
    if (has_cur && has_prev)
      throw DataError(fmt::format("{}; remove it to resume from the previous checkpoint {}",
                                  e.what(), prev.string()));
    throw DataError(fmt::format("{}; remove it to start the run again from step 0", e.what()));
  }
}

void remove_run_checkpoints(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::remove(dir / kCheckpointFile, ec);
  std::filesystem::remove(dir / kPrevCheckpointFile, ec);
  std::filesystem::remove(dir / "checkpoint.next.bin", ec);
}

std::int64_t test_kill_at_step() {
  static const std::int64_t v = env_int("DPRL_TEST_KILL_AT_STEP");
  return v;
}

std::int64_t test_kill_after_checkpoints() {
  static const std::int64_t v = env_int("DPRL_TEST_KILL_AFTER_CHECKPOINTS");
  return v;
}

void kill_self() {
  std::raise(SIGKILL);
  std::abort();
}

}  // namespace dprl::algos
