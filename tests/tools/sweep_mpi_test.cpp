// `mpirun -np 2 dprl sweep` writes the same bytes as `dprl sweep --jobs 1`: every run's
// config.yaml, metrics.csv, summary.json, policy and run.json, and sweep.csv and summary.md; and
// `mpirun -np 2 dprl population` the bytes of a local population (paper 000).
// Registered only in builds with MPI (tests/CMakeLists.txt), with the labels e2e and mpi.
#include <dirent.h>
#include <doctest/doctest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/tools/sweep_test_util.hpp"

using namespace sweep_test;

namespace {

// Open MPI refuses root unless told (ctest also sets OMPI_ALLOW_RUN_AS_ROOT and its confirmation)
const std::string kMpirun = std::string(DPRL_MPIEXEC) + " -np 2 --oversubscribe " +
                            (::geteuid() == 0 ? "--allow-run-as-root " : "");

// q_learning on taxi, quickstart-sized but shorter: 8 runs, a few seconds in all
const std::string kBase =
    "env: {id: taxi}\nalgo: {id: q_learning, params: {learning_rate: 0.5}}\n"
    "train: {steps: 100000, eval_every: 25000, eval_episodes: 50}\n";

void write_sweep(const fs::path& dir, const std::string& base) {
  fs::create_directories(dir);
  dprl::write_file_atomic(dir / "base.yaml", base);
  dprl::write_file_atomic(dir / "sweep.yaml",
                          "base: base.yaml\nout: out\nseeds: [1, 2, 3, 4]\n"
                          "grid:\n  algo.params.gamma: [0.9, 0.99]\n");
}

// The pid of the process whose environment holds both entries, or 0.
pid_t find_process(const std::string& a, const std::string& b) {
  DIR* proc = ::opendir("/proc");
  pid_t found = 0;
  while (dirent* e = proc ? ::readdir(proc) : nullptr) {
    const pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid <= 0) continue;
    std::ifstream in(std::string("/proc/") + e->d_name + "/environ", std::ios::binary);
    std::string env((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (env.find(a + '\0') != std::string::npos && env.find(b + '\0') != std::string::npos) {
      found = pid;
      break;
    }
  }
  if (proc) ::closedir(proc);
  return found;
}

// A small CartPole population (paper 000): 2 settings x 2 runs, the best of each kept.
const std::string kPopulation =
    "population:\n  name: tiny\n  seed: 3\n  out: pop\n  env: {id: cartpole}\n"
    "  variants: {grid: {gravity: [9.8, 10.5]}}\n  runs_per_setting: 2\n"
    "  ppo: {algo: ppo_layers, params: {hidden_sizes: \"16,16\"}, train: {steps: 4096, "
    "eval_every: 0, eval_episodes: 3}}\n"
    "  select: {rule: top_k, k: 1}\n  action_floor: 0.02\n"
    "  demos: {episodes: 3, max_steps: 50}\n";

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("an MPI population on 2 ranks writes the bytes of a local one") {
    const auto d = scratch("mpi_population");
    for (const char* w : {"local", "mpi"}) {
      fs::create_directories(d / w);
      dprl::write_file_atomic(d / w / "pop.yaml", kPopulation);
    }
    REQUIRE(run_in(d / "local", "population pop.yaml --jobs 1 --quiet").code == 0);
    const auto r = run_in(d / "mpi", "population pop.yaml --quiet", kMpirun);
    INFO("stderr: " << r.err);
    REQUIRE(r.code == 0);
    // 4 training runs (5 files each), the sweep tables, 2 experts, the manifest, the record and
    // the demonstrations: the same bytes (but for the load index of the demonstrations, a cache
    // that records the HDF5 file's modification time: engine/data/dataset_io.hpp)
    for (const char* w : {"local", "mpi"}) {
      REQUIRE(fs::exists(d / w / "pop" / "demos" / "data" / "dprl_index.bin"));
      fs::remove(d / w / "pop" / "demos" / "data" / "dprl_index.bin");
    }
    CHECK(check_same_tree(d / "local" / "pop", d / "mpi" / "pop") >= 4 * 5 + 2 + 2 + 2);
    CHECK(fs::exists(d / "mpi" / "pop" / "demos"));
    // a rerun reuses everything
    const auto r2 = run_in(d / "mpi", "population pop.yaml --quiet", kMpirun);
    REQUIRE(r2.code == 0);
    CHECK(r2.out.find("0 training runs now") != std::string::npos);
  }

  TEST_CASE("an MPI sweep on 2 ranks writes the bytes of a --jobs 1 sweep") {
    const auto d = scratch("mpi");
    write_sweep(d / "local", kBase);
    write_sweep(d / "mpi", kBase);
    write_sweep(d / "mpi_jobs2", kBase);
    REQUIRE(run_in(d / "local", "sweep sweep.yaml --jobs 1 --quiet").code == 0);
    auto r = run_in(d / "mpi", "sweep sweep.yaml", kMpirun);
    INFO("stderr: " << r.err);
    REQUIRE(r.code == 0);
    CHECK(r.err.find("on 2 ranks x 1 job into out") != std::string::npos);
    CHECK(count(r.err, "] gamma=") == 8);  // rank 0 reports every run, once
    CHECK(check_same_tree(d / "local" / "out", d / "mpi" / "out") == 8 * 5 + 2);
    // stdout (the summary table) comes from rank 0 only
    CHECK(count(r.out, "best by mean final evaluation return") == 1);
    const auto t = nlohmann::json::parse(dprl::read_file(d / "mpi" / "out" / "timing.json"));
    CHECK(t["ranks"] == 2);
    int on_rank1 = 0;
    for (const auto& run : t["runs"]) on_rank1 += run["rank"] == 1 ? 1 : 0;
    MESSAGE("runs on rank 1: " << on_rank1 << " of 8");

    // two local jobs per rank: same bytes
    r = run_in(d / "mpi_jobs2", "sweep sweep.yaml --jobs 2 --quiet", kMpirun);
    REQUIRE(r.code == 0);
    CHECK(check_same_tree(d / "local" / "out", d / "mpi_jobs2" / "out") == 8 * 5 + 2);

    // a rerun over MPI skips every run
    r = run_in(d / "mpi", "sweep sweep.yaml", kMpirun);
    REQUIRE(r.code == 0);
    CHECK(r.err.find("sweep: 8 runs, 8 complete, 0 to run") != std::string::npos);
    CHECK(check_same_tree(d / "local" / "out", d / "mpi" / "out") == 8 * 5 + 2);

    // only sweeps and populations run under mpirun: another command is refused, with one line
    // from rank 0
    r = run_in(d, "envs", kMpirun);
    CHECK(r.code != 0);
    CHECK(count(r.err,
                "dprl: launched as one of 2 processes (mpirun or srun), but only 'dprl "
                "sweep' and 'dprl population' run over MPI") == 1);
  }

  TEST_CASE("a rank killed mid-sweep loses only runs in flight and the rerun completes the bytes") {
    const auto d = scratch("mpi_kill");
    const std::string base =
        "env: {id: taxi}\nalgo: {id: q_learning, params: {learning_rate: 0.5}}\n"
        "train: {steps: 4500000, eval_every: 1500000, eval_episodes: 50}\n";
    // runs of about a second: long enough that the kill lands while runs remain, even on a
    // loaded machine (with 0.1 s runs the other rank sometimes finished all of them first, and
    // with 0.3 s runs on a fast core one time in three)
    write_sweep(d / "local", base);
    write_sweep(d / "mpi", base);
    REQUIRE(run_in(d / "local", "sweep sweep.yaml --jobs 2 --quiet").code == 0);

    const std::string tag = "DPRL_SWEEP_TEST_TAG=" + std::to_string(::getpid());
    int killed_code = 0;
    std::atomic<bool> finished{false};
    std::thread launcher([&] {
      killed_code = run_in(d / "mpi", "sweep sweep.yaml --quiet", tag + " " + kMpirun).code;
      finished = true;
    });
    // poll for completed runs (not time), then kill rank 1
    const auto out = d / "mpi" / "out";
    auto complete = [&] {
      int n = 0;
      if (fs::exists(out))
        for (const auto& e : fs::recursive_directory_iterator(out))
          n += e.path().filename() == "summary.json" ? 1 : 0;
      return n;
    };
    while (!finished && complete() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const pid_t rank1 = finished ? 0 : find_process(tag, "OMPI_COMM_WORLD_RANK=1");
    if (rank1 > 0) ::kill(rank1, SIGKILL);
    launcher.join();
    REQUIRE(rank1 > 0);
    CHECK(killed_code != 0);  // Open MPI ends the job when a rank dies
    CHECK_FALSE(fs::exists(out / "sweep.csv"));

    const auto r = run_in(d / "mpi", "sweep sweep.yaml", kMpirun);
    REQUIRE(r.code == 0);
    const auto p = r.err.find("sweep: 8 runs, ");
    REQUIRE(p != std::string::npos);
    const int skipped = std::stoi(r.err.substr(p + 15));
    CHECK(skipped >= 1);
    CHECK(skipped < 8);
    CHECK(check_same_tree(d / "local" / "out", out) == 8 * 5 + 2);
  }
}
