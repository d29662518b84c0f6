#include "engine/state_io.hpp"

#include <fmt/format.h>

#include "engine/checksum.hpp"
#include "engine/error.hpp"
#include "engine/io.hpp"
#include "engine/rng.hpp"

namespace dprl {
namespace {

constexpr char kMagic[8] = {'D', 'P', 'R', 'L', 'C', 'K', 'P', 'T'};

template <class T>
T get_at(std::string_view b, std::size_t at) {
  T v;
  std::memcpy(&v, b.data() + at, sizeof(T));
  return v;
}

}  // namespace

StateIo::StateIo() = default;

StateIo::StateIo(std::string_view bytes, std::string what)
    : loading_(true), in_(bytes), what_(std::move(what)) {}

void StateIo::raw(void* p, std::size_t n) {
  if (!loading_) {
    out_.append(static_cast<const char*>(p), n);
    return;
  }
  if (n > in_.size() - pos_) truncated();
  if (n > 0) std::memcpy(p, in_.data() + pos_, n);
  pos_ += n;
}

void StateIo::truncated() const {
  throw DataError(
      fmt::format("{}: state ends early in section '{}' (a different learner, env or "
                  "settings wrote it)",
                  what_, last_section_));
}

void StateIo::length_mismatch(std::uint64_t got, std::uint64_t want) const {
  throw DataError(
      fmt::format("{}: section '{}' holds an array of {} values where {} are expected "
                  "(a different learner, env or settings wrote it)",
                  what_, last_section_, got, want));
}

void StateIo::out_of_range(std::string_view name, const std::string& v, const std::string& lo,
                           const std::string& hi) const {
  throw DataError(
      fmt::format("{}: section '{}' holds {} = {}, outside [{}, {}] (a damaged or "
                  "foreign checkpoint)",
                  what_, last_section_, name, v, lo, hi));
}

void StateIo::expect_end() const {
  if (loading_ && !at_end())
    throw DataError(
        fmt::format("{}: {} bytes left after section '{}' (a different learner, env "
                    "or settings wrote it)",
                    what_, in_.size() - pos_, last_section_));
}

void StateIo::operator()(std::string& s) {
  std::uint64_t n = s.size();
  raw(&n, sizeof n);
  if (loading_) {
    if (n > in_.size() - pos_) truncated();
    s.assign(in_.data() + pos_, n);
    pos_ += n;
  } else {
    out_.append(s);
  }
}

void StateIo::section(std::string_view name) {
  std::string tag(name);
  if (!loading_) {
    (*this)(tag);
    last_section_ = tag;
    return;
  }
  std::string got;
  (*this)(got);
  if (got != tag)
    throw DataError(
        fmt::format("{}: expected section '{}' after '{}', found '{}' (a different "
                    "learner, env or settings wrote it)",
                    what_, tag, last_section_, got.size() > 40 ? "?" : got));
  last_section_ = tag;
}

void StateIo::operator()(Rng& rng) {
  std::uint64_t s[4];
  rng.get_state(s);
  raw(s, sizeof s);
  if (!loading_) return;
  if ((s[0] | s[1] | s[2] | s[3]) == 0)
    throw DataError(fmt::format("{}: section '{}' holds an all-zero random generator state",
                                what_, last_section_));
  rng.set_state(s);
}

std::string encode_checkpoint(std::string_view payload) {
  std::string out(kMagic, sizeof kMagic);
  const std::uint32_t version = kCheckpointVersion;
  const std::uint64_t n = payload.size(), sum = fnv1a64(payload, kFnvBasisShort);
  out.append(reinterpret_cast<const char*>(&version), sizeof version);
  out.append(reinterpret_cast<const char*>(&n), sizeof n);
  out.append(payload);
  out.append(reinterpret_cast<const char*>(&sum), sizeof sum);
  return out;
}

std::string decode_checkpoint(std::string_view b, std::string_view what) {
  constexpr std::size_t head = sizeof kMagic + 4 + 8;
  if (b.size() < head || std::memcmp(b.data(), kMagic, sizeof kMagic) != 0)
    throw DataError(fmt::format("{}: not a dprl checkpoint (bad magic or empty file)", what));
  const auto version = get_at<std::uint32_t>(b, sizeof kMagic);
  if (version != kCheckpointVersion)
    throw DataError(fmt::format("{}: checkpoint format version {} (this dprl reads version {})",
                                what, version, kCheckpointVersion));
  const auto n = get_at<std::uint64_t>(b, sizeof kMagic + 4);
  if (b.size() - head < 8 || n != b.size() - head - 8)
    throw DataError(fmt::format("{}: truncated checkpoint ({} bytes, the header says {})", what,
                                b.size(), n + head + 8));
  const std::string_view payload = b.substr(head, n);
  if (get_at<std::uint64_t>(b, head + n) != fnv1a64(payload, kFnvBasisShort))
    throw DataError(fmt::format("{}: corrupted checkpoint (checksum mismatch)", what));
  return std::string(payload);
}

void write_checkpoint_file(const std::filesystem::path& file, std::string_view payload) {
  write_file_atomic(file, encode_checkpoint(payload));
}

std::string read_checkpoint_file(const std::filesystem::path& file) {
  return decode_checkpoint(read_file(file), file.string());
}

}  // namespace dprl
