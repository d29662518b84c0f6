#include "engine/io.hpp"

#include <fcntl.h>
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
  // the rename lives in the directory: without this a crash can lose it after we return
  sync_directory(path.has_parent_path() ? path.parent_path() : std::filesystem::path("."));
}

void sync_directory(const std::filesystem::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    throw DataError(
        fmt::format("cannot sync directory {}: {}", dir.string(), std::strerror(errno)));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  // some file systems cannot fsync a directory (EINVAL): the rename is then as durable as they
  // make it
  if (rc != 0 && err != EINVAL)
    throw DataError(fmt::format("cannot sync directory {}: {}", dir.string(), std::strerror(err)));
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
