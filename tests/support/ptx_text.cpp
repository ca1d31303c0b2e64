#include "support/ptx_text.h"

#include <sstream>

#include "codegen/cache_key.h"
#include "runtime/nvrtc.h"

namespace normjit::test {

std::string sm90_ptx(const codegen::KernelSource& src, const std::string& what) {
  const auto& nvrtc = runtime::Nvrtc::get();
  return nvrtc.compile_to_ptx(src.text, src.name, codegen::compile_options({90, nvrtc.version()}), what);
}

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
