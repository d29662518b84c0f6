#include "privacy/ledger.hpp"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "engine/error.hpp"
#include "engine/io.hpp"
#include "privacy/dp_event_json.hpp"

namespace dprl::privacy {

Ledger::Ledger(double epsilon_budget, double delta, std::string accountant)
    : budget_eps_(epsilon_budget), delta_(delta), accountant_name_(std::move(accountant)) {
  if (!(budget_eps_ > 0.0) || !std::isfinite(budget_eps_)) {
    throw ParamError(fmt::format("ledger budget epsilon = {} must be finite and > 0", budget_eps_));
  }
  check_delta(delta_, "ledger delta");
  accountant_ = make_accountant(accountant_name_);
}

Ledger::Ledger(const Ledger& o)
    : budget_eps_(o.budget_eps_),
      delta_(o.delta_),
      accountant_name_(o.accountant_name_),
      accountant_(o.accountant_->clone()),
      entries_(o.entries_),
      spent_(o.spent_),
      noise_source_(o.noise_source_),
      dir_(o.dir_) {}

double Ledger::epsilon_if_charged(const DpEvent& event, std::int64_t count) const {
  auto trial = accountant_->clone();
  trial->compose(event, count);  // throws ParamError for unsupported events or bad counts
  return trial->epsilon(delta_);
}

bool Ledger::can_afford(const DpEvent& event, std::int64_t count) const {
  return epsilon_if_charged(event, count) <= budget_eps_;
}

void Ledger::charge(const DpEvent& event, std::int64_t count, std::string_view label) {
  auto trial = accountant_->clone();
  trial->compose(event, count);
  const double eps = trial->epsilon(delta_);
  if (!(eps <= budget_eps_)) {
    throw BudgetExceeded(fmt::format(
        "privacy budget exceeded: charging {} x {} would spend epsilon = {:.6g} > budget {} at "
        "delta = {} ({} accountant; spent so far {:.6g})",
        event.describe(), count, eps, budget_eps_, delta_, accountant_name_, spent_));
  }
  // persist first: a crash after this point cannot forget the spend
  std::vector<LedgerEntry> next = entries_;
  next.push_back({std::string(label), event, count, eps});
  if (dir_) {
    std::swap(entries_, next);
    const double old_spent = spent_;
    spent_ = eps;
    try {
      save(*dir_);
    } catch (...) {
      std::swap(entries_, next);
      spent_ = old_spent;
      throw;
    }
  } else {
    entries_ = std::move(next);
    spent_ = eps;
  }
  accountant_ = std::move(trial);
}

std::string Ledger::to_json() const {
  nlohmann::ordered_json j;
  j["guarantee"] = {{"epsilon", spent_},
                    {"delta", delta_},
                    {"accountant", accountant_name_},
                    {"neighbouring_relation", "add or remove one unit"}};
  j["budget"] = {{"epsilon", budget_eps_}, {"delta", delta_}};
  j["accountant"] = accountant_name_;
  if (!noise_source_.empty()) j["noise_source"] = noise_source_;
  nlohmann::ordered_json charges = nlohmann::ordered_json::array();
  for (const auto& e : entries_) {
    charges.push_back({{"label", e.label},
                       {"count", e.count},
                       {"event", event_to_json(e.event)},
                       {"epsilon_after", e.epsilon_after}});
  }
  j["charges"] = charges;
  return j.dump(2) + "\n";
}

void Ledger::save(const std::filesystem::path& dir) const {
  make_dirs(dir);
  write_file_atomic(dir / kFileName, to_json());
}

Ledger Ledger::load(const std::filesystem::path& dir) {
  const auto path = dir / kFileName;
  const std::string text = read_file(path);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
    Ledger l(j.at("budget").at("epsilon").get<double>(), j.at("budget").at("delta").get<double>(),
             j.at("accountant").get<std::string>());
    if (j.contains("noise_source")) l.noise_source_ = j["noise_source"].get<std::string>();
    for (const auto& c : j.at("charges")) {
      const DpEvent e = event_from_json(c.at("event"));
      const auto count = c.at("count").get<std::int64_t>();
      l.accountant_->compose(e, count);
      l.entries_.push_back(
          {c.at("label").get<std::string>(), e, count, c.at("epsilon_after").get<double>()});
    }
    l.spent_ = l.entries_.empty() ? 0.0 : l.accountant_->epsilon(l.delta_);
    return l;
  } catch (const nlohmann::json::exception& e) {
    throw DataError(fmt::format("{}: malformed ledger: {}", path.string(), e.what()));
  }
}

Ledger Ledger::open(const std::filesystem::path& dir, double epsilon_budget, double delta,
                    std::string accountant) {
  if (std::filesystem::exists(dir / kFileName)) {
    Ledger l = load(dir);
    if (l.budget_eps_ != epsilon_budget || l.delta_ != delta || l.accountant_name_ != accountant) {
      throw DataError(fmt::format(
          "{}: existing ledger has budget ({}, {}) with accountant {}, not ({}, {}) with {}",
          (dir / kFileName).string(), l.budget_eps_, l.delta_, l.accountant_name_, epsilon_budget,
          delta, accountant));
    }
    l.dir_ = dir;
    return l;
  }
  Ledger l(epsilon_budget, delta, std::move(accountant));
  l.dir_ = dir;
  l.save(dir);
  return l;
}

}  // namespace dprl::privacy
