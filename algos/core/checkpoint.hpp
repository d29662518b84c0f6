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
// Private runs (the offline learners with dp: true). A release must never be paid for twice
// nor left unpaid when a run is killed and resumed. Their ledger charges a block of steps
// (durably) before its first step; the rule that makes resuming sound is that a model is
// released (evaluated: metrics.csv, progress) only after the state that made it is in a
// checkpoint. So such a run saves a checkpoint at step 0 (the ledger position before its first
// charge), before every evaluation, and every checkpoint_every steps; each checkpoint holds the
// number of ledger charges made so far and the noise stream (seeded noise). When the run
// resumes, the charges after that number were made by the killed process for blocks whose models
// it never released: the resumed run consumes them in order, one per block, instead of charging
// again (a charge that is not the block's, by label, count and event, is refused as a changed
// ledger). A seeded run draws the same noise again: the resumed run is the uninterrupted one
// byte for byte, ledger included. After a fall-back to checkpoint.prev.bin with fresh
// (os-entropy) noise, the model of the lost newest checkpoint may have been released, so every
// step after the previous checkpoint is charged again, also the steps up to the end of the block
// charged before it (they are drawn a second time); if the budget cannot pay them the resume is
// refused (BudgetExceeded). Learners whose epsilon counts releases rather than ledger charges
// (actor_critic, lsvi_ucb) and selective DP-SGD refuse such a fall-back (DataError). A resume of a
// run killed before its first checkpoint starts from step 0 and counts every charge already in the
// ledger.
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
  std::string resume_payload{};  // the checkpoint to resume from ("" when starting at step 0)
  std::filesystem::path resume_file{};
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
