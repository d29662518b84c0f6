// Saving and restoring the mutable state of a run: one function lists the state, both ways.
//
// A StateIo either saves (appends the bytes of each value it is given) or loads (overwrites each
// value it is given from the bytes, in the same order). A component writes one `sync` function
//
//   void sync(StateIo& io) { io.section("ppo"); io(step_); io(rng_); io(buffer_); }
//
// and the same listing serves checkpoints and restores, so save and load cannot drift apart.
// section(name) writes a tag that a load checks, so state from another learner, env or layout is
// refused with a DataError naming the section, not read as garbage; so is a vector whose stored
// length differs from the one a fixed-size load expects (resize() loads allow any length), and a
// counter or index loaded through bounded() that lies outside its range (a loop counter of -2^63
// would otherwise run for ever, an index read past its table).
// Values are stored in the machine's byte order (little-endian on every supported target);
// checkpoints are for resuming on the same build, not for exchange. Structs are listed field by
// field, never copied whole: their padding bytes are uninitialised and would make the bytes of
// two identical runs differ.
//
// Checkpoint files (write_checkpoint_file / read_checkpoint_file) wrap the bytes as
//   "DPRLCKPT" | u32 format version | u64 payload bytes | payload | u64 FNV-1a 64 of the payload
// and are written atomically; a wrong magic, version, length or checksum is a DataError naming the
// file.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace dprl {

class Rng;

class StateIo {
 public:
  // A saver appending to an empty buffer.
  StateIo();
  // A loader reading bytes (kept by reference: they must outlive the loader); what names the
  // source in errors.
  StateIo(std::string_view bytes, std::string what);

  bool loading() const { return loading_; }
  // The bytes saved so far.
  const std::string& bytes() const { return out_; }
  std::string take() { return std::move(out_); }
  // Whether a loader has consumed every byte.
  bool at_end() const { return pos_ == in_.size(); }
  // Throws DataError when a loader has bytes left over (a layout mismatch).
  void expect_end() const;

  // A tag: saved as the name, checked on load.
  void section(std::string_view name);

  template <class T>
  requires std::is_arithmetic_v<T> || std::is_enum_v<T>
  void operator()(T& v) {
    if constexpr (std::is_same_v<T, bool>) {  // any byte but 0 or 1 is no bool
      std::uint8_t b = v ? 1 : 0;
      bounded(b, std::uint8_t{0}, std::uint8_t{1}, "a flag");
      v = b != 0;
    } else {
      raw(&v, sizeof(T));
    }
  }
  // An integer that a load requires in [lo, hi] (DataError naming it and the section otherwise).
  template <class T>
  requires std::is_integral_v<T>
  void bounded(T& v, T lo, T hi, std::string_view name) {
    raw(&v, sizeof(T));
    if (loading_ && (v < lo || v > hi))
      out_of_range(name, std::to_string(v), std::to_string(lo), std::to_string(hi));
  }
  // Bytes a loader has not consumed yet (0 for a saver): bounds a stored element count.
  std::size_t remaining() const { return in_.size() - pos_; }
  template <class T, std::size_t N>
  requires std::is_arithmetic_v<T>
  void operator()(std::array<T, N>& a) { raw(a.data(), sizeof(T) * N); }
  void operator()(std::string& s);
  // A generator's state; a load refuses the all-zero state, which xoshiro256** never leaves (its
  // draws would all be 0 and a rejection loop such as Rng::below would never end).
  void operator()(Rng& rng);
  // A vector of numbers (never of structs: see above); fixed: on load, the stored length must
  // equal v.size().
  template <class T, class A>
  requires std::is_arithmetic_v<T>
  void operator()(std::vector<T, A>& v, bool fixed = false) {
    std::uint64_t n = v.size();
    raw(&n, sizeof n);
    if (loading_) {
      if (fixed && n != v.size()) length_mismatch(n, v.size());
      if (n > (in_.size() - pos_) / sizeof(T)) truncated();
      v.resize(n);
    }
    raw(v.data(), n * sizeof(T));
  }
  // Values in place (a network's parameters): on load, the stored length must equal s.size().
  template <class T>
  requires std::is_arithmetic_v<T>
  void operator()(std::span<T> s) {
    std::uint64_t n = s.size();
    raw(&n, sizeof n);
    if (loading_ && n != s.size()) length_mismatch(n, s.size());
    raw(s.data(), s.size_bytes());
  }
  // Raw bytes of a known size.
  void raw(void* p, std::size_t n);

 private:
  [[noreturn]] void truncated() const;
  [[noreturn]] void length_mismatch(std::uint64_t got, std::uint64_t want) const;
  [[noreturn]] void out_of_range(std::string_view name, const std::string& v, const std::string& lo,
                                 const std::string& hi) const;

  bool loading_ = false;
  std::string out_;
  std::string_view in_;
  std::size_t pos_ = 0;
  std::string what_;
  std::string last_section_;
};

// 2: structs are saved field by field (version 1 copied EvalStats and EpisodeRecord whole, with
// their padding bytes uninitialised, so two runs' checkpoints could differ)
// 3: an env's step counter follows its own state (Env::sync_state), and learners save the
// gradient steps they have taken
inline constexpr std::uint32_t kCheckpointVersion = 3;

// The file bytes for a payload, and back (DataError naming what on any mismatch).
std::string encode_checkpoint(std::string_view payload);
std::string decode_checkpoint(std::string_view file_bytes, std::string_view what);
void write_checkpoint_file(const std::filesystem::path& file, std::string_view payload);
std::string read_checkpoint_file(const std::filesystem::path& file);

}  // namespace dprl
