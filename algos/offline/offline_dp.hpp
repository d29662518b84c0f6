// The state of one private offline run (user-level DP-SGD), shared by offline_learner.cpp (the
// loop) and offline_dp.cpp (planning, charging, the guarantee record). Not for other users.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "algos/offline/offline_learner.hpp"
#include "privacy/ledger.hpp"
#include "privacy/user_dp_sgd.hpp"

namespace dprl::algos {

struct OfflineLearner::DpRun {
  privacy::UserDpSgdConfig cfg;
  std::string unit;                         // the dataset's privacy unit
  bool secure = true;                       // os-entropy: the snapped secure release
  std::size_t noised_values = 0;            // real parameters of the trained networks
  double noise_sd = 0;                      // std of the noise on the clipped sum (>= z C)
  double noise_grid = 0;                    // the secure release's grid (0: not secure)
  double sampler_tv = 0;                    // the release's SecurePlan::sampler_tv
  std::unique_ptr<privacy::Ledger> ledger;  // persistent in the run directory when there is one
  std::int64_t charged = 0;                 // steps charged so far in this run
  double spent_before = 0;                  // epsilon the ledger held when the run started
  std::string noise_name;
  bool resuming = false;  // check() found a checkpoint to resume from (the ledger reuses charges)
};

}  // namespace dprl::algos
