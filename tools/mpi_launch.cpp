// Launch detection for mpirun and srun (see mpi_sweep.hpp); built with or without MPI.
#include <algorithm>
#include <cstdlib>
#include <string>

#include "tools/mpi_sweep.hpp"

namespace dprl::cli {
namespace {

// The first of the variables that is set and holds a non-negative integer, or -1.
int env_int(std::initializer_list<const char*> names) {
  for (const char* name : names) {
    const char* v = std::getenv(name);
    if (!v || !*v) continue;
    char* end = nullptr;
    const long x = std::strtol(v, &end, 10);
    if (*end == '\0' && x >= 0 && x < (1L << 30)) return static_cast<int>(x);
  }
  return -1;
}

}  // namespace

int launch_size() {
  int n = env_int({"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"});
  if (n < 0 && std::getenv("PMIX_RANK")) n = env_int({"SLURM_NTASKS"});
  // a rank above 0 proves a parallel launch even when the size is not published
  return std::max({n, launch_rank() + 1, 1});
}

int launch_rank() {
  return std::max(env_int({"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"}), 0);
}

}  // namespace dprl::cli
