// File input and output that never leaves anything half-written.
//
// write_file_atomic writes to "<path>.tmp.<pid>.<n>" in the same directory, flushes and fsyncs
// it, renames it over path and fsyncs the directory, so readers see the old content or the new,
// never a fragment, and once it returns the new content survives a crash or power loss (the
// privacy ledger relies on that: a charge is durable before the release it pays for). Errors
// throw DataError naming the path.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace dprl {

void write_file_atomic(const std::filesystem::path& path, std::string_view content);
// fsync(2) of a directory, which makes the renames and creations in it durable.
void sync_directory(const std::filesystem::path& dir);
// Whole file as bytes; throws DataError "cannot read <path>: <reason>". A FIFO is opened without
// waiting for a writer: with none it reads as empty instead of blocking for ever.
std::string read_file(const std::filesystem::path& path);
// What keeps path from being read as a regular file, for a one-line message: "" when it is a
// regular file this process can open; else "missing", "is a folder", "is a FIFO (named pipe), not
// a regular file", "is a socket, not a regular file", "is a device, not a regular file", or
// "cannot be accessed (<reason>)" (a permission, a symlink loop, a path through a file).
std::string file_problem(const std::filesystem::path& path);
// Creates the directory (and parents); throws DataError naming it.
void make_dirs(const std::filesystem::path& dir);
// Whether make_dirs(dir) would succeed, checked without creating anything that stays: dir is a
// folder, or its nearest existing ancestor is a folder in which a scratch folder can be created
// (and is removed at once). Returns "" when it can, else why not ("<ancestor> is not a folder",
// "cannot create in <ancestor>: <reason>"), for refusals before any work is done.
std::string dir_problem(const std::filesystem::path& dir);

}  // namespace dprl
