// CPU time of this process (all its threads) and of the calling thread, in seconds, from
// clock_gettime(2). On a shared machine wall time depends on the other load; CPU time is the figure
// benchmarks and timing records project costs from.
#pragma once

#include <ctime>

namespace dprl {

inline double cpu_seconds(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}
inline double process_cpu_seconds() { return cpu_seconds(CLOCK_PROCESS_CPUTIME_ID); }
inline double thread_cpu_seconds() { return cpu_seconds(CLOCK_THREAD_CPUTIME_ID); }

}  // namespace dprl
