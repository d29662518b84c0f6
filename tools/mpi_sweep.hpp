// `dprl sweep` over MPI ranks: `mpirun -np N dprl sweep SWEEP.yaml [--jobs J]` or `srun dprl
// sweep`.
//
// Launch detection (always built): a process started by mpirun or srun finds its rank and the
// number of processes in its environment (OMPI_COMM_WORLD_SIZE / _RANK from Open MPI, PMI_SIZE /
// PMI_RANK from Slurm's PMI-2 and MPICH, PMIX_RANK with SLURM_NTASKS from PMIx). A build without
// MPI refuses such a launch, so N copies never run the same sweep into the same directories.
//
// The runner (tools/mpi_sweep.cpp, the only file that includes mpi.h, built when DPRL_MPI is on):
// every rank plans the sweep from the shared filesystem and checks that its plan is rank 0's.
// Rank 0 checks which runs are already complete and hands out the others one index at a time as
// ranks ask (dynamic distribution: long and short runs mix); every rank, rank 0 included, runs
// `jobs` runs at a time on its own threads. A rank sends each finished run's outcome (summary.json
// text, or the error) to rank 0 as JSON text; rank 0 writes sweep.csv, summary.md, failures.csv
// and timing.json exactly as a local sweep does, so the bytes equal those of `--jobs 1`.
//
// Rank 0 works as well as coordinating: its coordinator is a thread that polls for messages and
// sleeps 1 ms between polls (blocking MPI receives spin a core in Open MPI), so with N = 2 ranks on
// 2 cores both cores run runs; a dedicated coordinator rank would leave one of the two idle.
// Waiting ranks poll the same way.
//
// A rank that dies (killed, out of memory) takes the job down with it (Open MPI 4 ends every rank
// when one dies), but every run that finished is complete on disk by itself, so rerunning the same
// command runs only the runs that were in flight or not yet started.
#pragma once

#include <optional>

#include "algos/run/sweep.hpp"

namespace dprl::cli {

// The launcher's process count (1 when not launched by mpirun or srun) and this process's rank.
int launch_size();
int launch_rank();

#ifdef DPRL_MPI
// MPI_Init_thread (funneled) on construction, MPI_Finalize on destruction.
class MpiWorld {
 public:
  MpiWorld();
  ~MpiWorld();
  MpiWorld(const MpiWorld&) = delete;
  MpiWorld& operator=(const MpiWorld&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }
  // Collective: every rank passes whether it is ready and its plan's digest; returns whether all
  // ranks are ready with rank 0's digest, and sets root_ready to rank 0's flag.
  bool agree(bool ready, const std::string& digest, bool& root_ready, bool& same_plan) const;
  [[noreturn]] void abort(int code) const;

 private:
  int rank_ = 0;
  int size_ = 1;
};

// Digest of everything the ranks must agree on (each run's directory and config digest).
std::string plan_digest(const algos::SweepPlan& plan);

// Runs the plan over every rank; rank 0 returns the result, the other ranks nullopt.
std::optional<algos::SweepResult> run_sweep_mpi(const MpiWorld& world, const algos::SweepPlan& plan,
                                                const algos::SweepOptions& opts);
#endif

}  // namespace dprl::cli
