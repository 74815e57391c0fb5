// Names no concurrent run shares: the process id plus 64 random bits. For temporary files
// (util/atomic_file.h) and per-run scratch folders (.landing/work/<id>-<time>-<pid>-<random>):
// two runs started in the same second, or two threads of one run, never collide.
//
//   const fs::path work = pfx::create_unique_directory(cache / "work", candidate_id + "-" + time);
#pragma once
#include <filesystem>
#include <string>

namespace pfx {

// "<pid>-<16 hex digits>"; the random part from getrandom(2).
std::string unique_suffix();

// Creates parent (and its parents) and in it a new folder "<stem>-<unique_suffix()>"; the name
// is retried until the creation itself succeeds, so the folder is this caller's alone. Throws
// pfx::Error naming the folder when it cannot be created.
std::filesystem::path create_unique_directory(const std::filesystem::path& parent, const std::string& stem);

}  // namespace pfx
