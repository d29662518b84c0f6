#include "privacy/ledger.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "engine/checksum.hpp"
#include "engine/error.hpp"
#include "engine/io.hpp"
#include "privacy/dp_event_json.hpp"
#include "privacy/root_finding.hpp"

namespace dprl::privacy {

// An exclusive flock(2) on a lock file, held until destruction.
class FileLock {
 public:
  explicit FileLock(const std::filesystem::path& ledger_file) {
    auto lock = ledger_file;
    lock += ".lock";
    lock_file_ = lock;
    fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    created_ = fd_ >= 0;
    if (fd_ < 0 && errno == EEXIST) fd_ = ::open(lock.c_str(), O_RDWR | O_CLOEXEC);
    if (fd_ < 0)
      throw DataError(
          fmt::format("cannot open the lock file {}: {}", lock.string(), std::strerror(errno)));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      ::close(fd_);
      if (created_) ::unlink(lock.c_str());
      if (err == EWOULDBLOCK)
        throw DataError(fmt::format(
            "{}: the privacy ledger is in use by another run (lock {} is held); runs charging "
            "one ledger must not overlap",
            ledger_file.string(), lock.string()));
      throw DataError(fmt::format("cannot lock {}: {}", lock.string(), std::strerror(err)));
    }
  }
  ~FileLock() { ::close(fd_); }  // closing the descriptor releases the lock
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  // A refused open: the lock file goes if this lock created it (still held, so no other run
  // can be using it), and the lock is released.
  void abandon() {
    if (created_) ::unlink(lock_file_.c_str());
    created_ = false;
  }

 private:
  std::filesystem::path lock_file_;
  int fd_ = -1;
  bool created_ = false;  // the lock file did not exist before
};

namespace {

// the checksum of a ledger object: FNV-1a 64 of its compact dump without the checksum key
std::string checksum_of(const nlohmann::ordered_json& body) {
  return fmt::format("fnv1a64:{:016x}", fnv1a64(body.dump()));
}

}  // namespace

Ledger::Ledger(double epsilon_budget, double delta, std::string accountant)
    : budget_eps_(epsilon_budget), delta_(delta), accountant_name_(std::move(accountant)) {
  if (!(budget_eps_ > 0.0) || !std::isfinite(budget_eps_)) {
    throw ParamError(fmt::format("ledger budget epsilon = {} must be finite and > 0", budget_eps_));
  }
  check_delta(delta_, "ledger delta");
  accountant_ = make_accountant(accountant_name_);
}

Ledger::Ledger(Ledger&&) noexcept = default;
Ledger& Ledger::operator=(Ledger&&) noexcept = default;
Ledger::~Ledger() = default;

double Ledger::epsilon_if_charged(const DpEvent& event, std::int64_t count) const {
  auto trial = accountant_->clone();
  trial->compose(event, count);  // throws ParamError for unsupported events or bad counts
  return trial->epsilon(delta_);
}

bool Ledger::can_afford(const DpEvent& event, std::int64_t count) const {
  return epsilon_if_charged(event, count) <= budget_eps_;
}

std::int64_t Ledger::affordable_count(const DpEvent& event, std::int64_t max_count) const {
  if (max_count > kMaxAffordableCount)
    throw ParamError(fmt::format("ledger: max_count = {} exceeds 2^53", max_count));
  if (max_count < 1 || !can_afford(event, 1)) return 0;
  if (can_afford(event, max_count)) return max_count;
  // can_afford(1), !can_afford(max_count): the boundary by bisection over integers
  RootOptions opt;
  opt.integers = true;
  const auto fits = [&](double n) {
    return can_afford(event, static_cast<std::int64_t>(n)) ? 1.0 : -1.0;
  };
  return static_cast<std::int64_t>(
      find_boundary(fits, 1.0, static_cast<double>(max_count), opt).lo);
}

void Ledger::set_relation(NeighbouringRelation neighbouring, std::string unit) {
  if ((neighbouring_ && *neighbouring_ != neighbouring) || (!unit_.empty() && unit_ != unit)) {
    throw DataError(fmt::format(
        "{}: the ledger's charges assume neighbouring '{}' of one {}, not '{}' of one {}",
        file_ ? file_->string() : std::string("ledger"), neighbouring_name(*neighbouring_), unit_,
        neighbouring_name(neighbouring), unit));
  }
  neighbouring_ = neighbouring;
  unit_ = std::move(unit);
}

void Ledger::charge(const DpEvent& event, std::int64_t count, std::string_view label) {
  auto trial = accountant_->clone();
  trial->compose(event, count);
  const double eps = trial->epsilon(delta_);
  if (!(eps <= budget_eps_)) {
    throw BudgetExceeded(fmt::format(
        "privacy budget exceeded: charging {} x {} would spend epsilon = {:.6g} > budget {} at "
        "delta = {} ({} accountant; spent so far {:.6g}{})",
        event.describe(), count, eps, budget_eps_, delta_, accountant_name_, spent_,
        file_ ? "; ledger " + file_->string() : std::string()));
  }
  // persist first: once charge() returns the spend survives a crash; if the write fails, roll
  // back so nothing is spent and the caller releases nothing
  entries_.push_back({std::string(label), event, count, eps});
  const double old_spent = spent_;
  spent_ = eps;
  try {
    save();
  } catch (...) {
    entries_.pop_back();
    spent_ = old_spent;
    throw;
  }
  accountant_ = std::move(trial);
  reuse_next_ = static_cast<std::size_t>(-1);
}

void Ledger::reuse_from(std::size_t from) {
  if (from > entries_.size())
    throw DataError(fmt::format("{}: holds {} charges, fewer than the {} its run had made at its "
                                "checkpoint",
                                file_ ? file_->string() : std::string("ledger"), entries_.size(),
                                from));
  reuse_next_ = from;
}

const LedgerEntry* Ledger::next_reusable() const {
  return reuse_next_ < entries_.size() ? &entries_[reuse_next_] : nullptr;
}

std::int64_t Ledger::reusable_count() const {
  std::int64_t n = 0;
  for (std::size_t i = reuse_next_; i < entries_.size(); ++i) n += entries_[i].count;
  return n;
}

double Ledger::charge_or_reuse(const DpEvent& event, std::int64_t count, std::string_view label) {
  const LedgerEntry* e = next_reusable();
  if (!e) {
    charge(event, count, label);
    return spent_;
  }
  if (e->label != label || e->count != count || !(e->event == event))
    throw DataError(fmt::format(
        "{}: charge {} ('{}') follows the run's checkpoint but is not its next charge ('{}'); "
        "the ledger was changed after the run was killed",
        file_ ? file_->string() : std::string("ledger"), reuse_next_ + 1, e->label, label));
  ++reuse_next_;
  return e->epsilon_after;
}

std::string Ledger::to_json() const {
  nlohmann::ordered_json j;
  j["format"] = "dprl-privacy-ledger-1";
  j["guarantee"] = {
      {"epsilon", spent_},
      {"delta", delta_},
      {"accountant", accountant_name_},
      {"neighbouring", neighbouring_ ? std::string(neighbouring_name(*neighbouring_)) : ""},
      {"unit", unit_}};
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
  j["checksum"] = checksum_of(j);
  return j.dump(2) + "\n";
}

void Ledger::save() const {
  if (file_) write_file_atomic(*file_, to_json());
}

Ledger Ledger::load_file(const std::filesystem::path& file) {
  const std::string text = read_file(file);
  const std::string name = file.string();
  nlohmann::ordered_json j;
  try {
    j = nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::exception&) {
    throw DataError(fmt::format(
        "{}: corrupted privacy ledger (not valid JSON: truncated or torn?); refusing to reset "
        "it, restore the file or start a new ledger",
        name));
  }
  try {
    if (!j.is_object() || !j.contains("checksum"))
      throw DataError(fmt::format("{}: corrupted privacy ledger (no checksum)", name));
    const std::string sum = j.at("checksum").get<std::string>();
    j.erase("checksum");
    if (sum != checksum_of(j))
      throw DataError(fmt::format(
          "{}: corrupted privacy ledger (checksum mismatch); refusing to reset it, restore the "
          "file or start a new ledger",
          name));
    Ledger l(j.at("budget").at("epsilon").get<double>(), j.at("budget").at("delta").get<double>(),
             j.at("accountant").get<std::string>());
    if (j.contains("noise_source")) l.noise_source_ = j["noise_source"].get<std::string>();
    const auto& g = j.at("guarantee");
    if (const auto relation = g.at("neighbouring").get<std::string>(); !relation.empty()) {
      l.neighbouring_ = parse_neighbouring(relation);
      if (!l.neighbouring_) {
        throw DataError(
            fmt::format("{}: unknown neighbouring relation '{}' (valid: add-remove, replace)", name,
                        printable(relation)));
      }
    }
    l.unit_ = g.at("unit").get<std::string>();
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
    throw DataError(fmt::format("{}: malformed privacy ledger: {}", name, e.what()));
  } catch (const ParamError& e) {
    throw DataError(fmt::format("{}: malformed privacy ledger: {}", name, e.what()));
  }
}

Ledger Ledger::load(const std::filesystem::path& dir) { return load_file(dir / kFileName); }

Ledger Ledger::open_file(const std::filesystem::path& file, double epsilon_budget, double delta,
                         std::string accountant) {
  // a corrupt or mismatched file is refused before anything (the lock file, folders) is created;
  // it is read again under the lock below
  const auto check_same = [&](const Ledger& l) {
    if (l.budget_eps_ != epsilon_budget || l.delta_ != delta || l.accountant_name_ != accountant)
      throw DataError(fmt::format(
          "{}: existing ledger has budget ({}, {}) with accountant {}, not ({}, {}) with {}",
          file.string(), l.budget_eps_, l.delta_, l.accountant_name_, epsilon_budget, delta,
          accountant));
  };
  std::error_code exists_ec;
  if (std::filesystem::exists(file, exists_ec)) check_same(load_file(file));
  if (file.has_parent_path()) make_dirs(file.parent_path());
  auto lock = std::make_unique<FileLock>(file);
  try {
    std::error_code ec;
    if (std::filesystem::exists(file, ec)) {
      Ledger l = load_file(file);
      check_same(l);
      l.file_ = file;
      l.lock_ = std::move(lock);
      return l;
    }
    Ledger l(epsilon_budget, delta, std::move(accountant));
    l.file_ = file;
    l.save();
    l.lock_ = std::move(lock);
    return l;
  } catch (...) {
    if (lock) lock->abandon();  // refused: no lock file left behind
    throw;
  }
}

Ledger Ledger::open(const std::filesystem::path& dir, double epsilon_budget, double delta,
                    std::string accountant) {
  return open_file(dir / kFileName, epsilon_budget, delta, std::move(accountant));
}

}  // namespace dprl::privacy
