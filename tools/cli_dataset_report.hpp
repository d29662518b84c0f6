// Summaries of a dataset for `dprl collect` and `dprl dataset info|validate`.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/data/dataset.hpp"

namespace dprl::cli {

struct DatasetSummary {
  std::size_t users = 0;
  double return_mean = 0, return_std = 0, return_min = 0, return_max = 0;
  double length_mean = 0;
  std::size_t length_min = 0, length_max = 0;
  std::size_t terminated = 0, truncated = 0;  // episodes ending so
  // histogram of episode returns: bins equal-width over [return_min, return_max]
  std::vector<double> bin_edges;
  std::vector<std::size_t> bin_counts;
};

DatasetSummary summarize(const Dataset& data, int bins = 10);
nlohmann::ordered_json summary_json(const Dataset& data, const DatasetSummary& s);
std::string summary_text(const Dataset& data, const DatasetSummary& s, const std::string& path);

// Dataset::validate, then (env_id non-empty) the spaces against the env's (DataError naming
// path and the space).
void validate_dataset(const Dataset& data, const std::string& path, const std::string& env_id,
                      const ParamMap& env_params = {});

}  // namespace dprl::cli
