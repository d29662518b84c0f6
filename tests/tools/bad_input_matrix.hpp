// The harness of the bad-input matrices (bad_input_test.cpp, bad_input_surfaces_test.cpp): a case
// is a command line, the input files written into its own scratch folder first, and a needle its
// one-line message must contain. check_case runs the dprl executable there (under timeout(1)) and
// asserts the contract of docs/robustness.md: the case's exit status (2 unless stated), exactly
// one stderr line starting "dprl: " with the needle and no control character, nothing on stdout,
// and every entry of the folder byte for byte what it was (no output, no partial file, no lock,
// `existing/` untouched).
#pragma once

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "engine/io.hpp"

namespace bad_input {

namespace fs = std::filesystem;

struct Result {
  int code;
  std::string out;
  std::string err;
};

// one input file of a case: content, or "@dir" (a folder), "@fifo" (a named pipe), "@link:T" (a
// symbolic link to T), "@copy:F" (a file or folder of the shared fixtures), "@trunc:F:N" (its
// first N bytes), "@flip:F:OFFSET" (its byte at OFFSET inverted), "@sub:F|FROM|TO" (its text
// with the first FROM replaced by TO)
struct File {
  std::string path;
  std::string content;
};

struct Case {
  std::string args;         // after "dprl "; {d} is the case folder, {fx} the shared fixtures
  std::vector<File> files;  // written into the case folder first, in order
  std::string needle;       // must appear in the one stderr line
  int code = 2;
};

inline std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

// The executable under test: this build's, or another build's given by DPRL_EXE_UNDER_TEST
// (to see which cases an older build fails).
inline std::string exe() {
  const char* other = std::getenv("DPRL_EXE_UNDER_TEST");
  return other != nullptr && *other != '\0' ? other : DPRL_EXE;
}

// Runs dprl under timeout(1): a command that hangs (a FIFO read, an unbounded loop) ends with
// status 124 and fails the case instead of the suite.
inline Result run_case_in(const fs::path& cwd, const std::string& args, const std::string& env = "") {
  const auto out = cwd.parent_path() / (cwd.filename().string() + ".out");
  const auto err = cwd.parent_path() / (cwd.filename().string() + ".err");
  const char* limit = std::getenv("DPRL_CASE_TIMEOUT");  // seconds; 60 unless given
  const std::string seconds = limit != nullptr && *limit != '\0' ? limit : "60";
  const std::string cmd = "cd '" + cwd.string() + "' && " + env + " timeout -k 5 " + seconds + " " +
                          exe() + " " + args + " >'" + out.string() + "' 2>'" + err.string() +
                          "' </dev/null";
  const int status = std::system(cmd.c_str());
  Result r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, dprl::read_file(out),
           dprl::read_file(err)};
  fs::remove(out);
  fs::remove(err);
  return r;
}

// Writes one input file of a case into dir (fx: the shared fixtures).
inline void materialise(const fs::path& dir, const File& f, const fs::path& fx) {
  const auto to = dir / f.path;
  std::error_code ec;
  fs::remove(to, ec);  // a later file of the case replaces an earlier one's
  fs::create_directories(to.parent_path());
  const auto& c = f.content;
  if (c == "@dir") {
    fs::create_directories(to);
  } else if (c == "@fifo") {
    REQUIRE(::mkfifo(to.c_str(), 0644) == 0);
  } else if (c.rfind("@link:", 0) == 0) {
    fs::create_symlink(c.substr(6), to);
  } else if (c.rfind("@copy:", 0) == 0) {
    fs::copy(fx / c.substr(6), to, fs::copy_options::recursive);
  } else if (c.rfind("@trunc:", 0) == 0) {
    const auto colon = c.rfind(':');
    const auto text = dprl::read_file(fx / c.substr(7, colon - 7));
    dprl::write_file_atomic(to, text.substr(0, std::stoul(c.substr(colon + 1))));
  } else if (c.rfind("@flip:", 0) == 0) {
    const auto colon = c.rfind(':');
    auto text = dprl::read_file(fx / c.substr(6, colon - 6));
    const auto at = std::stoul(c.substr(colon + 1));
    REQUIRE(at < text.size());
    text[at] = static_cast<char>(~text[at]);
    dprl::write_file_atomic(to, text);
  } else if (c.rfind("@sub:", 0) == 0) {
    const auto bar1 = c.find('|'), bar2 = c.find('|', bar1 + 1);
    auto text = dprl::read_file(fx / c.substr(5, bar1 - 5));
    const auto from = c.substr(bar1 + 1, bar2 - bar1 - 1);
    const auto at = text.find(from);
    INFO(f.path, ": ", from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), c.substr(bar2 + 1));
    dprl::write_file_atomic(to, text);
  } else {
    dprl::write_file_atomic(to, c);
  }
}

// every entry under dir (relative path: "/" for folders, "|" for FIFOs, "@T" for links, else
// the bytes), links never followed (a link loop is an entry like any other)
inline void snapshot_into(const fs::path& root, const fs::path& dir,
                          std::map<std::string, std::string>& s) {
  for (const auto& e : fs::directory_iterator(dir)) {
    const auto st = fs::symlink_status(e.path());
    const auto rel = e.path().lexically_relative(root).string();
    if (fs::is_symlink(st)) {
      s[rel] = "@" + fs::read_symlink(e.path()).string();
    } else if (fs::is_fifo(st)) {
      s[rel] = "|";
    } else if (fs::is_directory(st)) {
      s[rel] = "/";
      snapshot_into(root, e.path(), s);
    } else {
      s[rel] = dprl::read_file(e.path());
    }
  }
}

inline std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> s;
  snapshot_into(dir, dir, s);
  return s;
}

inline bool has_control_characters(const std::string& line) {
  for (std::size_t i = 0; i + 1 < line.size(); ++i) {
    const auto c = static_cast<unsigned char>(line[i]);
    if (c < 0x20 || c == 0x7f) return true;
  }
  return false;
}

// Runs one case in a fresh folder <tmp>/<prefix><pid>_<n> holding a copy of fx/q as existing/.
inline void check_case(const std::string& group, const Case& c, const fs::path& fx,
                       const std::string& prefix) {
  static int n = 0;
  const auto dir =
      fs::temp_directory_path() / (prefix + std::to_string(::getpid()) + "_" + std::to_string(n++));
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy(fx / "q", dir / "existing", fs::copy_options::recursive);
  for (const auto& f : c.files) materialise(dir, f, fx);
  const auto before = snapshot(dir);
  const auto args = replace_all(replace_all(c.args, "{d}", dir.string()), "{fx}", fx.string());
  const auto r = run_case_in(dir, args);
  std::string inputs;
  for (const auto& f : c.files) inputs += " [" + f.path + ": " + f.content.substr(0, 160) + "]";
  INFO(group, ": dprl ", args, inputs);
  INFO("stderr: ", r.err);
  INFO("stdout: ", r.out.substr(0, 400));
  CHECK(r.code == c.code);
  const bool one_line = !r.err.empty() && r.err.find('\n') == r.err.size() - 1;
  CHECK(one_line);
  CHECK(r.err.rfind("dprl: ", 0) == 0);
  CHECK(r.err.find(c.needle) != std::string::npos);
  CHECK_FALSE(has_control_characters(r.err));
  CHECK(r.out.empty());
  const auto after = snapshot(dir);
  for (const auto& [path, bytes] : after) {
    INFO("file ", path);
    CHECK(before.count(path) == 1);
    if (before.count(path) == 1) CHECK(before.at(path) == bytes);
  }
  CHECK(before.size() == after.size());
  fs::remove_all(dir);
}

}  // namespace bad_input
