// File input and output that never leaves anything half-written.
//
// write_file_atomic writes to "<path>.tmp.<pid>.<n>" in the same directory, flushes and renames
// over path, so readers see the old content or the new, never a fragment. Errors throw DataError
// naming the path.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace dprl {

void write_file_atomic(const std::filesystem::path& path, std::string_view content);
// Whole file as bytes; throws DataError "cannot read <path>: <reason>".
std::string read_file(const std::filesystem::path& path);
// Creates the directory (and parents); throws DataError naming it.
void make_dirs(const std::filesystem::path& dir);

}  // namespace dprl
