// Step-time measurement of the network kernels, for `dprl bench nn` and tools/bench/nn_bench.cpp.
//
// The workload of issue 5: an MLP (default 4-256-256-2, ReLU, Kaiming init), a fixed random batch
// (inputs N(0,1), regression targets N(0,1)), mean squared error. One "Adam step" is forward,
// backward and Adam update; one "DP-SGD step" is forward, per-example errors, per-example norms,
// clip factors, the weighted clipped sum, Gaussian noise (fill_standard_normal, sigma = 1, C = 1)
// and the Adam update. Medians of `repeats` timed blocks of `iters` steps each.
#pragma once

#include <vector>

namespace dprl::nn {

struct StepTimes {
  double adam_step_us = 0;
  double dpsgd_step_us = 0;
  double forward1_us = 0;  // batch-1 forward (acting)
  int batch = 0;
  std::vector<int> layers;
};

StepTimes measure_step_times(std::vector<int> layers = {4, 256, 256, 2}, int batch = 256,
                             int iters = 200, int repeats = 7);

// The step kernels, for Google Benchmark loops.
class StepBench {
 public:
  StepBench(std::vector<int> layers, int batch);
  ~StepBench();
  void adam_step();
  void dpsgd_step();
  void forward1();
  void per_sample_norms();

 private:
  struct State;
  State* s_;
};

}  // namespace dprl::nn
