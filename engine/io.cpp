#include "engine/io.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
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
  // non-blocking open: a FIFO without a writer would otherwise block here for ever
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    throw DataError(fmt::format("cannot read {}: {}", path.string(), std::strerror(errno)));
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  std::string out;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      throw DataError(fmt::format("cannot read {}: {}", path.string(), std::strerror(err)));
    }
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

std::string file_problem(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return "missing";
    return fmt::format("cannot be accessed ({})", std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) return "is a folder";
  if (S_ISFIFO(st.st_mode)) return "is a FIFO (named pipe), not a regular file";
  if (S_ISSOCK(st.st_mode)) return "is a socket, not a regular file";
  if (!S_ISREG(st.st_mode)) return "is a device, not a regular file";
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return fmt::format("cannot be accessed ({})", std::strerror(errno));
  ::close(fd);
  return "";
}

void make_dirs(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    throw DataError(fmt::format("cannot create directory {}: {}", dir.string(), ec.message()));
}

std::string dir_problem(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (dir.empty()) return "an empty path";
  fs::path p = fs::absolute(dir, ec);
  if (ec) return fmt::format("cannot resolve {}: {}", dir.string(), ec.message());
  // the nearest ancestor that exists (lexically: no symlink is followed out of the path)
  while (!p.empty()) {
    struct stat st {};
    if (::stat(p.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode)) return fmt::format("{} is not a folder", p.string());
      break;
    }
    if (errno != ENOENT)
      return fmt::format("cannot access {}: {}", p.string(), std::strerror(errno));
    if (p == p.parent_path()) break;
    p = p.parent_path();
  }
  std::string probe = (p / ".dprl-probe-XXXXXX").string();
  if (::mkdtemp(probe.data()) == nullptr)
    return fmt::format("cannot create in {}: {}", p.string(), std::strerror(errno));
  ::rmdir(probe.c_str());
  return "";
}

}  // namespace dprl
