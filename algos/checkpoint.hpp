// Run checkpoints: the files a killed run resumes from, with results byte-identical to an
// uninterrupted run.
//
// Every train.checkpoint_every env steps (offline learners: gradient steps), at the first point
// where its loop can stop, a learner that supports checkpoints (Algorithm::resumable) writes
// <run>/checkpoint.bin through TrainContext::save_checkpoint. The file (engine/state_io.hpp: magic,
// format version, length, FNV-1a 64 checksum; written atomically) holds, in order:
//   "checkpoint" section: the config digest (SHA-256 of config.yaml), the algo id, the step;
//   the TrainContext: evaluation rounds and schedule, the last evaluation, the checkpoint
//   schedule, every metrics.csv row so far;
//   the learner's own state, listed by its sync function: networks, optimiser moments, every RNG
//   stream, the env snapshots of all vector envs (Env::sync_state), replay buffers, counters.
// Before a new checkpoint replaces checkpoint.bin, the old one is renamed checkpoint.prev.bin, so a
// checkpoint corrupted on disk leaves the previous one to restart from. Both are removed once the
// run's summary.json is written.
//
// Test hooks (environment variables, for the kill-and-resume tests): DPRL_TEST_KILL_AT_STEP=K makes
// the process SIGKILL itself at the first checkpoint_due() check at or past step K;
// DPRL_TEST_KILL_AFTER_CHECKPOINTS=N right after writing its N-th checkpoint.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace dprl::algos {

inline constexpr const char* kCheckpointFile = "checkpoint.bin";
inline constexpr const char* kPrevCheckpointFile = "checkpoint.prev.bin";

// How a run checkpoints (set by the experiment runner on its TrainContext).
struct CheckpointSetup {
  std::filesystem::path dir;   // the run directory
  std::string config_sha256;   // digest of the resolved config (config.yaml's bytes)
  std::string algo;            // the algo id
  std::int64_t every = 0;      // steps between checkpoints (0: none)
  std::string resume_payload;  // the checkpoint to resume from ("" when starting at step 0)
  std::filesystem::path resume_file;
};

struct LoadedCheckpoint {
  std::filesystem::path file;
  std::string payload;
};

// Writes a checkpoint payload into dir, keeping the previous one as checkpoint.prev.bin.
void write_run_checkpoint(const std::filesystem::path& dir, std::string_view payload);
// The checkpoint to resume from: checkpoint.bin, or checkpoint.prev.bin when checkpoint.bin is
// absent (a kill between the two renames); none when neither exists. A corrupted or truncated
// file throws DataError naming it (and the previous checkpoint, when there is one).
std::optional<LoadedCheckpoint> read_run_checkpoint(const std::filesystem::path& dir);
// Removes both checkpoint files (a finished run, or a run starting again from step 0).
void remove_run_checkpoints(const std::filesystem::path& dir);

// The test hooks above, read once from the environment (-1 when unset).
std::int64_t test_kill_at_step();
std::int64_t test_kill_after_checkpoints();
[[noreturn]] void kill_self();

}  // namespace dprl::algos
