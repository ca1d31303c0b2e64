// Small POSIX file helpers shared by the files normjit writes (disk cache entries, the tuning
// database): unique temporary names and new files written with every step checked.
#pragma once
#include <string>
#include <vector>

namespace normjit::runtime {

// strerror-like text for an errno value.
std::string errno_text(int err);
// "<pid>.<16 hex digits>": unique among processes and threads, for temporary file names.
std::string unique_suffix();
// Writes a new file (never an existing one: O_EXCL), checking every step including close,
// which is where some file systems first report a full disk. On failure `why` says what.
bool write_new_file(const std::string& path, const std::vector<char>& bytes, std::string& why);

}  // namespace normjit::runtime
