#include "tools/progress_line.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>

namespace normjit::tools {

ProgressLine::ProgressLine(size_t total) : total_(total), in_place_(::isatty(STDERR_FILENO) == 1) {}

ProgressLine::~ProgressLine() {
  if (in_place_ && last_width_ > 0) std::fputc('\n', stderr);
}

void ProgressLine::report(const std::string& what, const std::string& outcome) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string count = "[" + std::to_string(++done_) + "/" + std::to_string(total_) + "] ";
  const std::string tail = ": " + outcome;
  if (!in_place_) {
    std::fprintf(stderr, "%s%s%s\n", count.c_str(), what.c_str(), tail.c_str());
    return;
  }
  // \r returns to the start of the screen row only: a line that wrapped would leave its first
  // rows behind, so fit it to the terminal's width, shortening `what` rather than the outcome.
  struct winsize ws {};
  const size_t columns = ::ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 ? ws.ws_col : 80;
  std::string shown = count + what + tail;
  if (shown.size() >= columns) {
    const size_t room = columns - 1 > count.size() + tail.size() + 3 ? columns - 1 - count.size() - tail.size() - 3 : 0;
    shown = (count + what.substr(0, room) + "..." + tail).substr(0, columns - 1);
  }
  // Pad over the tail of a longer previous line.
  const size_t pad = last_width_ > shown.size() ? last_width_ - shown.size() : 0;
  std::fprintf(stderr, "\r%s%*s", shown.c_str(), static_cast<int>(pad), "");
  std::fflush(stderr);
  last_width_ = shown.size();
}

}  // namespace normjit::tools
