#include "engine/nn/nn_io.hpp"

#include <fmt/format.h>

#include <cstring>
#include <fstream>

#include "engine/checksum.hpp"
#include "engine/error.hpp"
#include "engine/io.hpp"

namespace dprl::nn {

namespace {

constexpr char kMagic[8] = {'D', 'P', 'R', 'L', 'N', 'N', 0, 0};

template <class T>
void put(std::string& out, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  out.append(b, sizeof(T));
}
void put_str(std::string& out, std::string_view s) {
  put<std::uint32_t>(out, static_cast<std::uint32_t>(s.size()));
  out.append(s);
}
void put_floats(std::string& out, const float* p, std::size_t n) {
  put<std::uint64_t>(out, n);
  out.append(reinterpret_cast<const char*>(p), n * sizeof(float));
}

struct Reader {
  std::string_view b;
  std::string_view what;
  std::size_t pos = 0;
  void need(std::size_t n) {
    if (b.size() - pos < n) throw DataError(fmt::format("{}: truncated network file", what));
  }
  template <class T>
  T get() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, b.data() + pos, sizeof(T));
    pos += sizeof(T);
    return v;
  }
  std::string get_str() {
    const auto n = get<std::uint32_t>();
    need(n);
    std::string s(b.substr(pos, n));
    pos += n;
    return s;
  }
  template <class V>
  void get_floats(V& v) {
    const auto n = get<std::uint64_t>();
    if (n > (b.size() - pos) / sizeof(float))
      throw DataError(fmt::format("{}: truncated network file", what));
    v.resize(n);
    if (n > 0) std::memcpy(v.data(), b.data() + pos, n * sizeof(float));  // data() may be null
    pos += n * sizeof(float);
  }
};

Act act_from_byte(std::uint8_t v, std::string_view what) {
  if (v > static_cast<std::uint8_t>(Act::kSilu))
    throw DataError(fmt::format("{}: unknown activation code {}", what, v));
  return static_cast<Act>(v);
}

}  // namespace

const SavedNet& NnFile::net(std::string_view name) const {
  for (const auto& n : nets)
    if (n.name == name) return n;
  throw DataError(fmt::format("network file of kind '{}' has no network '{}'", kind, name));
}
const SavedArray& NnFile::array(std::string_view name) const {
  for (const auto& a : arrays)
    if (a.name == name) return a;
  throw DataError(fmt::format("network file of kind '{}' has no array '{}'", kind, name));
}
bool NnFile::has_array(std::string_view name) const {
  for (const auto& a : arrays)
    if (a.name == name) return true;
  return false;
}

std::string encode_nn_file(const NnFile& f) {
  std::string p;
  put_str(p, f.kind);
  put_str(p, f.meta);
  put<std::uint32_t>(p, static_cast<std::uint32_t>(f.nets.size()));
  for (const auto& n : f.nets) {
    DPRL_CHECK(n.params.size() == n.shape.num_params());
    put_str(p, n.name);
    put<std::uint32_t>(p, static_cast<std::uint32_t>(n.shape.sizes.size()));
    for (int s : n.shape.sizes) put<std::int32_t>(p, s);
    put<std::uint8_t>(p, static_cast<std::uint8_t>(n.shape.hidden));
    put<std::uint8_t>(p, static_cast<std::uint8_t>(n.shape.output));
    put_floats(p, n.params.data(), n.params.size());
  }
  put<std::uint32_t>(p, static_cast<std::uint32_t>(f.arrays.size()));
  for (const auto& a : f.arrays) {
    put_str(p, a.name);
    put_floats(p, a.values.data(), a.values.size());
  }
  std::string out(kMagic, sizeof(kMagic));
  put<std::uint32_t>(out, kNnFileVersion);
  put<std::uint64_t>(out, p.size());
  out += p;
  put<std::uint64_t>(out, fnv1a64(p, kFnvBasisShort));
  return out;
}

NnFile decode_nn_file(std::string_view bytes, std::string_view what) {
  if (bytes.size() < sizeof(kMagic) || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0)
    throw DataError(fmt::format("{}: not a dprl network file (bad magic)", what));
  Reader head{bytes, what, sizeof(kMagic)};
  const auto version = head.get<std::uint32_t>();
  if (version != kNnFileVersion)
    throw DataError(fmt::format("{}: network file version {} (this build reads {})", what, version,
                                kNnFileVersion));
  const auto len = head.get<std::uint64_t>();
  if (bytes.size() - head.pos < 8 || len != bytes.size() - head.pos - 8)
    throw DataError(fmt::format("{}: truncated or padded network file", what));
  const std::string_view payload = bytes.substr(head.pos, len);
  Reader tail{bytes, what, head.pos + len};
  if (tail.get<std::uint64_t>() != fnv1a64(payload, kFnvBasisShort))
    throw DataError(fmt::format("{}: network file checksum mismatch (corrupt)", what));
  Reader r{payload, what};
  NnFile f;
  f.kind = r.get_str();
  f.meta = r.get_str();
  const auto nn = r.get<std::uint32_t>();
  for (std::uint32_t k = 0; k < nn; ++k) {
    SavedNet n;
    n.name = r.get_str();
    const auto ns = r.get<std::uint32_t>();
    if (ns < 2 || ns > 1000) throw DataError(fmt::format("{}: bad layer count", what));
    std::vector<int> sizes(ns);
    for (auto& s : sizes) {
      s = r.get<std::int32_t>();
      if (s <= 0 || s > (1 << 24)) throw DataError(fmt::format("{}: bad layer size", what));
    }
    const Act h = act_from_byte(r.get<std::uint8_t>(), what);
    const Act o = act_from_byte(r.get<std::uint8_t>(), what);
    n.shape = MlpShape(std::move(sizes), h, o);
    r.get_floats(n.params);
    if (n.params.size() != n.shape.num_params())
      throw DataError(fmt::format("{}: network '{}' has {} floats, its shape needs {}", what,
                                  n.name, n.params.size(), n.shape.num_params()));
    f.nets.push_back(std::move(n));
  }
  const auto na = r.get<std::uint32_t>();
  for (std::uint32_t k = 0; k < na; ++k) {
    SavedArray a;
    a.name = r.get_str();
    r.get_floats(a.values);
    f.arrays.push_back(std::move(a));
  }
  if (r.pos != payload.size()) throw DataError(fmt::format("{}: trailing bytes in payload", what));
  return f;
}

void save_nn_file(const std::filesystem::path& file, const NnFile& f) {
  write_file_atomic(file, encode_nn_file(f));
}

NnFile load_nn_file(const std::filesystem::path& file) {
  return decode_nn_file(read_file(file), file.string());
}

bool is_nn_file(const std::filesystem::path& file) {
  // only a regular file is opened: a FIFO would block the open
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) return false;
  std::ifstream in(file, std::ios::binary);
  char b[sizeof(kMagic)] = {};
  in.read(b, sizeof(b));
  return in.gcount() == sizeof(b) && std::memcmp(b, kMagic, sizeof(b)) == 0;
}

}  // namespace dprl::nn
