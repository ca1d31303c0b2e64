#include "support/ptx_text.h"

#include <sstream>

namespace normjit::test {

std::vector<std::string> entry_body(const std::string& ptx, const std::string& entry) {
  const size_t at = ptx.find(".entry " + entry + "(");
  if (at == std::string::npos) return {};
  size_t open = ptx.find('{', ptx.find(')', at));
  int depth = 0;
  size_t end = open;
  for (; end < ptx.size(); ++end) {
    if (ptx[end] == '{') ++depth;
    if (ptx[end] == '}' && --depth == 0) break;
  }
  std::vector<std::string> lines;
  std::istringstream in(ptx.substr(open, end - open));
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace normjit::test
