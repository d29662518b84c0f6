#include "algos/run/pipeline_ledger.hpp"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "engine/checksum.hpp"
#include "engine/error.hpp"
#include "engine/io.hpp"

namespace dprl::algos {
namespace {

using json = nlohmann::ordered_json;

std::string checksum_of(const json& j) { return fmt::format("{:016x}", fnv1a64(j.dump())); }

}  // namespace

PipelineLedger::PipelineLedger(const std::filesystem::path& dir, double epsilon, double delta)
    : file_(dir / kFileName), budget_eps_(epsilon), budget_delta_(delta) {
  std::error_code ec;
  if (!std::filesystem::exists(file_, ec)) return;
  try {
    json j = json::parse(read_file(file_));
    const std::string sum = j.at("checksum").get<std::string>();
    j.erase("checksum");
    if (sum != checksum_of(j)) throw DataError("checksum mismatch");
    for (const auto& c : j.at("charges")) {
      PipelineCharge p{c.at("stage").get<std::string>(), c.at("digest").get<std::string>(),
                       c.at("label").get<std::string>(), c.at("epsilon").get<double>(),
                       c.at("delta").get<double>()};
      if (!(p.epsilon >= 0 && std::isfinite(p.epsilon) && p.delta >= 0 && p.delta < 1))
        throw DataError("a charge outside epsilon >= 0, delta in [0, 1)");
      charges_.push_back(std::move(p));
    }
  } catch (const std::exception& e) {
    throw DataError(
        fmt::format("{}: damaged pipeline ledger ({}); it records what earlier draws "
                    "on this directory spent, so it is never reset",
                    file_.string(), e.what()));
  }
}

double PipelineLedger::epsilon() const {
  double s = 0;
  for (const auto& c : charges_) s += c.epsilon;
  return s;
}

double PipelineLedger::delta() const {
  double s = 0;
  for (const auto& c : charges_) s += c.delta;
  return s;
}

std::size_t PipelineLedger::charge(const PipelineCharge& c) {
  const double e = epsilon() + c.epsilon, d = delta() + c.delta;
  if (e > budget_eps_ * (1 + 1e-9) || d > budget_delta_ * (1 + 1e-9))
    throw BudgetExceeded(fmt::format(
        "{}: {} earlier draws on this directory spent (epsilon {:.6g}, delta {:.3g}); the {} "
        "({}) would bring it to ({:.6g}, {:.3g}), beyond privacy.epsilon = {:.6g}, delta = "
        "{:.3g}",
        file_.string(), charges_.size(), epsilon(), delta(), c.stage, c.label, e, d, budget_eps_,
        budget_delta_));
  charges_.push_back(c);
  try {
    save();
  } catch (...) {
    charges_.pop_back();
    throw;
  }
  return charges_.size() - 1;
}

std::optional<std::size_t> PipelineLedger::last_of(const std::string& stage,
                                                   const std::string& digest) const {
  if (charges_.empty() || charges_.back().stage != stage || charges_.back().digest != digest)
    return std::nullopt;
  return charges_.size() - 1;
}

void PipelineLedger::settle(std::size_t i, double epsilon) {
  if (i >= charges_.size() || !(epsilon >= 0) || epsilon >= charges_[i].epsilon) return;
  const double before = charges_[i].epsilon;
  charges_[i].epsilon = epsilon;
  try {
    save();
  } catch (...) {
    charges_[i].epsilon = before;
    throw;
  }
}

std::string PipelineLedger::to_json() const {
  json j;
  j["composition"] = "basic (sum of epsilons and of deltas over every draw on this directory)";
  j["budget"] = {{"epsilon", budget_eps_}, {"delta", budget_delta_}};
  j["spent"] = {{"epsilon", epsilon()}, {"delta", delta()}};
  json list = json::array();
  for (const auto& c : charges_)
    list.push_back({{"stage", c.stage},
                    {"digest", c.digest},
                    {"label", c.label},
                    {"epsilon", c.epsilon},
                    {"delta", c.delta}});
  j["charges"] = std::move(list);
  j["checksum"] = checksum_of(j);
  return j.dump(2) + "\n";
}

void PipelineLedger::save() const {
  make_dirs(file_.parent_path());
  write_file_atomic(file_, to_json());
}

}  // namespace dprl::algos
