// Typed errors for bad input, and checks for bugs.
//
// Bad input (YAML, CLI flags, data files, parameter ranges, actions) throws a subclass of
// dprl::Error whose what() is one readable line naming the culprit. Bugs hit DPRL_CHECK, which
// prints the failed condition with its location and aborts; DPRL_DCHECK is the same in debug
// builds only, for hot loops.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace dprl {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A YAML or config problem; the message starts with file:line:column.
class ConfigError : public Error {
 public:
  using Error::Error;
};
// A parameter outside its valid range or of the wrong type. Raised by a parameter struct
// (engine/params.hpp) it also says, for a host program to act on: key() the parameter as
// "owner.name" (e.g. "q_learning.gamma"), value() the text it was given, rule() what that text
// broke ("must be in [0, 1]", "is not a number", "unknown parameter; valid: ...") and where() the
// place it came from ("cfg.yaml:7:12", "--set algo.params.gamma=3"; empty when unknown). Raised
// elsewhere, the four are empty and what() alone describes it.
class ParamError : public Error {
 public:
  using Error::Error;
  ParamError(const std::string& message, std::string key, std::string value, std::string rule,
             std::string where)
      : Error(message),
        key_(std::move(key)),
        value_(std::move(value)),
        rule_(std::move(rule)),
        where_(std::move(where)) {}
  const std::string& key() const { return key_; }
  const std::string& value() const { return value_; }
  const std::string& rule() const { return rule_; }
  const std::string& where() const { return where_; }

 private:
  std::string key_, value_, rule_, where_;
};
// A name not in a registry; the message lists the valid names.
class UnknownName : public Error {
 public:
  using Error::Error;
};
// A malformed or unreadable data file (dataset, checkpoint, replay case).
class DataError : public Error {
 public:
  using Error::Error;
};
// An action outside the action space, or NaN.
class InvalidAction : public Error {
 public:
  using Error::Error;
};
// A privacy charge that would exceed the configured budget.
class BudgetExceeded : public Error {
 public:
  using Error::Error;
};
// A model asset (MJCF, checkpoint) that cannot be loaded.
class ModelLoadError : public Error {
 public:
  using Error::Error;
};

// Untrusted text (a file's bytes, a key, a CSV header) made safe to print in a one-line message:
// control characters (C0, DEL and the C1 range U+0080..U+009F, which terminals act on: a line
// can clear the screen or move the cursor), Unicode line separators and bidirectional overrides
// (U+2028..U+202E, U+2066..U+2069), and bytes that are not valid UTF-8 become \xNN per byte;
// printable UTF-8 is kept. The CLI passes every message it prints through this, so no input
// reaches the terminal raw.
std::string printable(std::string_view text);

[[noreturn]] void check_failed(const char* cond, const char* file, int line);

}  // namespace dprl

#define DPRL_CHECK(cond) \
  ((cond) ? static_cast<void>(0) : ::dprl::check_failed(#cond, __FILE__, __LINE__))
#ifdef NDEBUG
#define DPRL_DCHECK(cond) static_cast<void>(0)
#else
#define DPRL_DCHECK(cond) DPRL_CHECK(cond)
#endif
