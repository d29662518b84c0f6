// Sweep resume: complete runs are skipped, --force reruns them, a run of another config or with an
// altered summary is rerun with a note, a killed sweep finishes with the uninterrupted bytes (a run
// killed midway continues from its checkpoint, or from the one before a corrupted one), and a
// failed run is reported, exits 1, and is picked up by the next sweep.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/tools/sweep_test_util.hpp"

using namespace sweep_test;

namespace {

const std::string kBase =
    "env: {id: taxi}\nalgo: {id: q_learning}\n"
    "train: {steps: 20000, eval_every: 10000, eval_episodes: 10}\n";

void write_seed_sweep(const fs::path& dir, const std::string& base, const std::string& seeds) {
  write_sweep(dir, base, "seeds: " + seeds + "\n");
}

// "sweep: 8 runs, 3 complete, 5 to run on ..." -> 3
int complete_of(const std::string& err) {
  const auto p = err.find(" runs, ");
  REQUIRE(p != std::string::npos);
  return std::stoi(err.substr(p + 7));
}

int count_files(const fs::path& dir, const std::string& name) {
  int n = 0;
  if (!fs::exists(dir)) return 0;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.path().filename() == name) ++n;
  return n;
}

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("a rerun skips complete runs, --force reruns them, another config is rerun") {
    const auto d = scratch("skip");
    write_seed_sweep(d, kBase, "[1, 2, 3]");
    REQUIRE(run_in(d, "sweep sweep.yaml").code == 0);
    const std::string csv = dprl::read_file(d / "out" / "sweep.csv");
    const auto run1 = d / "out" / "base" / "seed2";
    // run.json names the config by the SHA-256 of config.yaml and the summary by its own
    const auto record = nlohmann::json::parse(dprl::read_file(run1 / "run.json"));
    CHECK(record["config_sha256"].get<std::string>().size() == 64);

    auto r = run_in(d, "sweep sweep.yaml");
    REQUIRE(r.code == 0);
    CHECK(complete_of(r.err) == 3);
    CHECK(count(r.err, "] base seed") == 0);  // nothing ran
    CHECK(dprl::read_file(d / "out" / "sweep.csv") == csv);

    r = run_in(d, "sweep sweep.yaml --force --quiet");
    REQUIRE(r.code == 0);
    CHECK(r.err.empty());
    CHECK(dprl::read_file(d / "out" / "sweep.csv") == csv);

    // a run directory recorded for another config is rerun, and says so
    auto other = record;
    other["config_sha256"] = std::string(64, '0');
    dprl::write_file_atomic(run1 / "run.json", other.dump(2) + "\n");
    r = run_in(d, "sweep sweep.yaml");
    REQUIRE(r.code == 0);
    CHECK(complete_of(r.err) == 2);
    CHECK(r.err.find(run1.lexically_relative(d).string() + " holds a run of a different config") !=
          std::string::npos);
    CHECK(dprl::read_file(run1 / "run.json") == record.dump(2) + "\n");
    // so is one whose summary.json is not the one its run recorded
    dprl::write_file_atomic(run1 / "summary.json", "{}\n");
    r = run_in(d, "sweep sweep.yaml");
    CHECK(complete_of(r.err) == 2);
    CHECK(r.err.find("does not match") != std::string::npos);
    CHECK(dprl::read_file(d / "out" / "sweep.csv") == csv);
  }

  TEST_CASE("a sweep killed midway reruns only the missing runs and ends with the same bytes") {
    const auto d = scratch("kill");
    // 8 runs of a few tenths of a second each, so the kill lands midway
    const std::string base =
        "env: {id: taxi}\nalgo: {id: q_learning}\n"
        "train: {steps: 500000, eval_every: 100000, eval_episodes: 20}\n";
    write_seed_sweep(d / "whole", base, "[1, 2, 3, 4, 5, 6, 7, 8]");
    write_seed_sweep(d / "killed", base, "[1, 2, 3, 4, 5, 6, 7, 8]");
    REQUIRE(run_in(d / "whole", "sweep sweep.yaml --quiet").code == 0);

    // the child: dprl sweep in d/killed, output discarded
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    const std::string cd_and_run = "cd " + (d / "killed").string() + " && exec " +
                                   std::string(DPRL_EXE) + " sweep sweep.yaml --jobs 1";
    const char* argv[] = {"/bin/sh", "-c", cd_and_run.c_str(), nullptr};
    pid_t pid = 0;
    REQUIRE(posix_spawn(&pid, "/bin/sh", &actions, nullptr, const_cast<char**>(argv), environ) ==
            0);
    posix_spawn_file_actions_destroy(&actions);
    // poll for completed runs (not time): kill once two summaries exist
    const auto out = d / "killed" / "out";
    int status = 0;
    bool exited = false;
    while (count_files(out, "summary.json") < 2)
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        exited = true;
        break;
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    REQUIRE_FALSE(exited);
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    REQUIRE(WIFSIGNALED(status));
    const int complete = count_files(out, "run.json");
    CHECK(complete >= 1);
    CHECK(complete < 8);
    CHECK_FALSE(fs::exists(out / "sweep.csv"));

    const auto r = run_in(d / "killed", "sweep sweep.yaml --jobs 2");
    REQUIRE(r.code == 0);
    CHECK(complete_of(r.err) == complete);
    CHECK(count(r.err, "] base seed") == 8 - complete);  // one line per run executed
    CHECK(check_same_tree(d / "whole" / "out", out) == 8 * 5 + 2);
  }

  TEST_CASE("a run killed midway continues from its checkpoint, to the uninterrupted bytes") {
    const auto d = scratch("ckpt");
    // PPO on CartPole: 16 rollouts of 512 env steps, a checkpoint after every second one
    const std::string base =
        "env: {id: cartpole}\nalgo: {id: ppo, params: {num_envs: 4, num_steps: 128}}\n"
        "train: {steps: 8192, eval_every: 4096, eval_episodes: 5, checkpoint_every: 1024}\n";
    for (const char* s : {"whole", "killed", "corrupt", "forced"})
      write_seed_sweep(d / s, base, "[1, 2]");
    REQUIRE(run_in(d / "whole", "sweep sweep.yaml --quiet").code == 0);
    const std::string note = "out/base/seed1 continues from its last checkpoint";

    // killed right after the first run's third checkpoint (the hook SIGKILLs the sweep process)
    for (const char* s : {"killed", "corrupt", "forced"}) {
      CHECK(
          run_in(d / s, "sweep sweep.yaml --jobs 1 --quiet", "DPRL_TEST_KILL_AFTER_CHECKPOINTS=3 ")
              .code != 0);
      const auto run = d / s / "out" / "base" / "seed1";
      REQUIRE(fs::exists(run / "checkpoint.bin"));
      REQUIRE(fs::exists(run / "checkpoint.prev.bin"));
      CHECK_FALSE(fs::exists(run / "summary.json"));
    }

    auto r = run_in(d / "killed", "sweep sweep.yaml --jobs 1");
    REQUIRE(r.code == 0);
    CHECK(count(r.err, note) == 1);
    CHECK(count(r.err, "continues from") == 1);  // the second run had not started
    CHECK(check_same_tree(d / "whole" / "out", d / "killed" / "out") == 2 * 5 + 2);

    // a corrupted newest checkpoint is dropped, and the run continues from the previous one
    const auto ckpt = d / "corrupt" / "out" / "base" / "seed1" / "checkpoint.bin";
    std::string bytes = dprl::read_file(ckpt);
    bytes[bytes.size() / 2] ^= 0x5a;
    dprl::write_file_atomic(ckpt, bytes);
    r = run_in(d / "corrupt", "sweep sweep.yaml --jobs 1");
    REQUIRE(r.code == 0);
    CHECK(r.err.find("out/base/seed1: unusable checkpoint dropped") != std::string::npos);
    CHECK(count(r.err, note) == 1);
    CHECK(check_same_tree(d / "whole" / "out", d / "corrupt" / "out") == 2 * 5 + 2);

    // --force starts it from step 0 (and so ends with the same bytes too)
    r = run_in(d / "forced", "sweep sweep.yaml --jobs 1 --force");
    REQUIRE(r.code == 0);
    CHECK(count(r.err, "continues from") == 0);
    CHECK(check_same_tree(d / "whole" / "out", d / "forced" / "out") == 2 * 5 + 2);
  }

  TEST_CASE("a failed run is listed, the sweep exits 1, and the next sweep runs only that run") {
    const auto d = scratch("fail");
    write_seed_sweep(d / "ref", kBase, "[1, 2, 3]");
    write_seed_sweep(d / "s", kBase, "[1, 2, 3]");
    REQUIRE(run_in(d / "ref", "sweep sweep.yaml --quiet").code == 0);
    // a file where run 1's directory should be: that run cannot write anything
    fs::create_directories(d / "s" / "out" / "base");
    dprl::write_file_atomic(d / "s" / "out" / "base" / "seed2", "not a directory\n");
    auto r = run_in(d / "s", "sweep sweep.yaml --jobs 2");
    CHECK(r.code == 1);
    CHECK(r.err.find("dprl: 1 of 3 runs failed") != std::string::npos);
    CHECK(r.err.find("[2/3] base seed 2: FAILED: cannot create directory") != std::string::npos);
    const std::string failures = dprl::read_file(d / "s" / "out" / "failures.csv");
    CHECK(failures.rfind("run,label,seed,dir,error\n1,base,2,out/base/seed2,cannot create", 0) ==
          0);
    const std::string csv = dprl::read_file(d / "s" / "out" / "sweep.csv");
    CHECK(csv.find("\n1,base,2,,,,,,out/base/seed2\n") != std::string::npos);
    CHECK(dprl::read_file(d / "s" / "out" / "summary.md").find("1 runs failed") !=
          std::string::npos);

    fs::remove(d / "s" / "out" / "base" / "seed2");
    r = run_in(d / "s", "sweep sweep.yaml --quiet");
    CHECK(r.code == 0);
    CHECK_FALSE(fs::exists(d / "s" / "out" / "failures.csv"));
    CHECK(check_same_tree(d / "ref" / "out", d / "s" / "out") == 3 * 5 + 2);
    const auto t = nlohmann::json::parse(dprl::read_file(d / "s" / "out" / "timing.json"));
    CHECK(t["runs"][0]["status"] == "skipped");
    CHECK(t["runs"][1]["status"] == "ran");
    CHECK(t["runs"][2]["status"] == "skipped");
  }

  TEST_CASE("a parallel launch of anything but an MPI sweep is refused with one line") {
    const auto d = scratch("launch");
    auto r = run_in(d, "envs", "OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=0 ");
    CHECK(r.code == 2);
    CHECK(r.err.rfind("dprl: launched as one of 2 processes (mpirun or srun), but ", 0) == 0);
    CHECK(count(r.err, "\n") == 1);
    CHECK(r.out.empty());
    // the other ranks exit alike, silently
    r = run_in(d, "envs", "OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=1 ");
    CHECK(r.code == 2);
    CHECK(r.err.empty());
    r = run_in(d, "envs", "PMI_SIZE=3 PMI_RANK=0 ");
    CHECK(r.err.rfind("dprl: launched as one of 3 processes", 0) == 0);
  }
}
