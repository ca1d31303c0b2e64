// Progress of a batch on stderr, one report per finished item. On a terminal the line is
// rewritten in place (\r), so a long batch takes one line; in a log (not a TTY) every item gets
// its own line, since carriage returns would garble it. Safe to call from many threads.
#pragma once
#include <cstddef>
#include <mutex>
#include <string>

namespace normjit::tools {

class ProgressLine {
 public:
  explicit ProgressLine(size_t total);
  ~ProgressLine();  // ends the rewritten line, if any

  // "[done/total] what: outcome". On a narrow terminal `what` is shortened, never `outcome`.
  void report(const std::string& what, const std::string& outcome);

 private:
  std::mutex mu_;
  size_t total_;
  size_t done_ = 0;
  size_t last_width_ = 0;
  bool in_place_;
};

}  // namespace normjit::tools
