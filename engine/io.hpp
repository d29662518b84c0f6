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
// Whole file as bytes; throws DataError "cannot read <path>: <reason>".
std::string read_file(const std::filesystem::path& path);
// Creates the directory (and parents); throws DataError naming it.
void make_dirs(const std::filesystem::path& dir);

}  // namespace dprl
