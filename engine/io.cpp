#include "engine/io.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "engine/error.hpp"

namespace dprl {

void write_file_atomic(const std::filesystem::path& path, std::string_view content) {
  static std::atomic<unsigned> counter{0};
  auto tmp = path;
  tmp += fmt::format(".tmp.{}.{}", ::getpid(), counter++);
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw DataError(fmt::format("cannot write {}: {}", path.string(), std::strerror(errno)));
  const bool ok = std::fwrite(content.data(), 1, content.size(), f) == content.size() &&
                  std::fflush(f) == 0 && ::fsync(::fileno(f)) == 0;
  const int err = errno;
  if (std::fclose(f) != 0 || !ok) {
    std::remove(tmp.c_str());
    throw DataError(fmt::format("cannot write {}: {}", path.string(), std::strerror(err)));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    std::remove(tmp.c_str());
    throw DataError(fmt::format("cannot write {}: {}", path.string(), std::strerror(e)));
  }
}

std::string read_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw DataError(fmt::format("cannot read {}: is a directory", path.string()));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError(fmt::format("cannot read {}: {}", path.string(), std::strerror(errno)));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw DataError(fmt::format("cannot read {}: read error", path.string()));
  return ss.str();
}

void make_dirs(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    throw DataError(fmt::format("cannot create directory {}: {}", dir.string(), ec.message()));
}

}  // namespace dprl
