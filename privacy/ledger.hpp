// Ledger: the privacy budget of a dataset. Every release charges its DpEvent first.
//
// Guarantee: if every access to private data goes through charge() before it happens, everything
// released under this ledger is (spent_epsilon(), delta)-DP under the relation the events were
// built for (set_relation() records it: NeighbouringRelation, add/remove or replace one unit, and
// the unit: record,
// trajectory, episode or expert), and spent_epsilon() never exceeds the budget epsilon.
// - charge(event, count) composes the event on a copy of the accountant; if the resulting
//   epsilon at the budget delta exceeds the budget epsilon it throws BudgetExceeded and nothing is
//   spent; otherwise the charge is recorded and, for a persistent ledger, written durably (file
//   fsynced, renamed, directory fsynced: engine/io.hpp) before charge() returns. The caller
//   releases only after charge() returns: charge -> durable -> release. If the write fails,
//   charge() throws DataError and the in-memory ledger is rolled back (nothing spent, nothing may
//   be released). A crash between charge() and the release leaves the charge on disk: the budget
//   is spent for a release that never happened, never the reverse.
// - Accountant: "rdp", "pld" or "best" (the smaller of both; see accountant.hpp). Unsupported
//   events are refused with ParamError, spending nothing. The accountants compose Gaussian
//   events gaussian(z) with z = sigma / (L2 sensitivity under the recorded relation); for
//   unsampled Gaussian mechanisms the privacy curve is the same under add/remove and replace once
//   the sensitivity is the one of that relation.
// - Persistence: Ledger::open_file(file, ...) reloads the file when it exists (budget, delta and
//   accountant must match, DataError otherwise) and replays its charges, so a restarted run, or
//   another run on the same data sharing the file, continues from what was already spent and
//   cannot spend it twice. Several runs share one budget by naming one file.
// - Integrity: the file carries a checksum (FNV-1a 64 of the canonical JSON of everything else;
//   it detects torn, truncated and corrupted files, not tampering). A file that is not valid
//   JSON, misses a field, fails the checksum or holds an invalid event is refused with a
//   one-line DataError naming the file; it is never silently reset.
// - Concurrency: a persistent ledger holds an exclusive advisory lock (flock(2)) on
//   "<file>.lock" for its whole lifetime; a second writer (another process, or another Ledger
//   object in this one) is refused with DataError naming the file. Readers (load_file) take no
//   lock.
// Validation (ParamError naming parameter and rule): budget epsilon > 0 finite, delta in (0, 1),
// known accountant, count >= 1.
// Cost: every charge recomputes the epsilon (RDP: about 0.2 ms; PLD: up to ~20 s for long
// compositions of small noise multipliers), so charge many identical steps at once with count
// when using PLD; a persistent charge also costs two fsyncs.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/neighbouring.hpp"
#include "privacy/accountant.hpp"
#include "privacy/dp_event.hpp"

namespace dprl::privacy {

struct LedgerEntry {
  std::string label;
  DpEvent event;
  std::int64_t count;
  double epsilon_after;  // spent epsilon after this charge
};

class FileLock;  // ledger.cpp

class Ledger {
 public:
  Ledger(double epsilon_budget, double delta, std::string accountant = "rdp");
  // A ledger persisted in file (parent directories created if needed), locked against other
  // writers; reloads the file when it exists.
  static Ledger open_file(const std::filesystem::path& file, double epsilon_budget, double delta,
                          std::string accountant = "rdp");
  // The same for dir/privacy_ledger.json.
  static Ledger open(const std::filesystem::path& dir, double epsilon_budget, double delta,
                     std::string accountant = "rdp");
  // Reads a ledger file without locking it, e.g. to check what is left (DataError if missing,
  // corrupted or malformed). The result is not persistent.
  static Ledger load_file(const std::filesystem::path& file);
  static Ledger load(const std::filesystem::path& dir);

  void charge(const DpEvent& event, std::int64_t count = 1, std::string_view label = "");
  // The epsilon spent if event were charged now (nothing is charged).
  double epsilon_if_charged(const DpEvent& event, std::int64_t count = 1) const;
  bool can_afford(const DpEvent& event, std::int64_t count = 1) const;
  // Resuming a killed run (algos/core/checkpoint.hpp, "Private runs"): the charges from index
  // `from` on were made for this run by its killed process, for releases it never published, and
  // pay for the same charges of the resumed run. charge_or_reuse() consumes them in order; charge()
  // ends the reuse. DataError when from exceeds the charges (a ledger changed since the
  // checkpoint).
  void reuse_from(std::size_t from);
  // The next reusable charge (null when none), and the counts of all that are left.
  const LedgerEntry* next_reusable() const;
  std::int64_t reusable_count() const;
  // Consumes the next reusable charge as the charge (event, count, label), which it must be
  // (DataError naming the file otherwise), or charges anew when none is left; returns the spent
  // epsilon as of this charge.
  double charge_or_reuse(const DpEvent& event, std::int64_t count, std::string_view label);
  // The largest n in [0, max_count] with can_afford(event, n) (bisection over integers,
  // root_finding.hpp; epsilon grows with n). ParamError when max_count > 2^53 (the counts are
  // searched as doubles).
  static constexpr std::int64_t kMaxAffordableCount = std::int64_t{1} << 53;
  std::int64_t affordable_count(const DpEvent& event, std::int64_t max_count) const;

  double spent_epsilon() const { return spent_; }
  double budget_epsilon() const { return budget_eps_; }
  double delta() const { return delta_; }
  const std::string& accountant_name() const { return accountant_name_; }
  const std::vector<LedgerEntry>& entries() const { return entries_; }
  // The file of a persistent ledger.
  const std::optional<std::filesystem::path>& file() const { return file_; }
  // Recorded in the JSON (e.g. NoiseSource::name()); persisted with the next charge.
  void set_noise_source(std::string name) { noise_source_ = std::move(name); }
  // The neighbouring relation (written "add-remove" or "replace") and unit the charged events
  // assume. A ledger that already records a different relation or unit is refused (DataError):
  // events under different relations do not compose into one guarantee.
  void set_relation(NeighbouringRelation neighbouring, std::string unit);

  // {"guarantee": {...}, "budget": {...}, "accountant": ..., "charges": [...], "checksum": ...}
  std::string to_json() const;
  // Writes the file of a persistent ledger atomically and durably (no-op for an in-memory one).
  void save() const;

  static constexpr const char* kFileName = "privacy_ledger.json";

  Ledger(Ledger&&) noexcept;
  Ledger& operator=(Ledger&&) noexcept;
  ~Ledger();

 private:
  double budget_eps_;
  double delta_;
  std::string accountant_name_;
  std::unique_ptr<Accountant> accountant_;
  std::vector<LedgerEntry> entries_;
  double spent_ = 0.0;
  std::string noise_source_;
  std::optional<NeighbouringRelation> neighbouring_;  // none until set_relation
  std::string unit_;
  std::optional<std::filesystem::path> file_;
  std::unique_ptr<FileLock> lock_;
  std::size_t reuse_next_ = static_cast<std::size_t>(-1);  // none
};

}  // namespace dprl::privacy
