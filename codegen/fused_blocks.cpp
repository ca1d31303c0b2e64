#include "codegen/fused_blocks.h"

#include <stdexcept>

namespace normjit::codegen {
namespace {

// The line without its leading spaces is exactly the marker.
bool is_marker(const std::string& text, size_t begin, size_t end, const char* marker) {
  while (begin < end && text[begin] == ' ') ++begin;
  return text.compare(begin, end - begin, marker) == 0;
}

}  // namespace

std::string select_fused_blocks(const std::string& text, bool keep) {
  std::string out;
  out.reserve(text.size());
  bool inside = false;
  for (size_t begin = 0; begin < text.size();) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    const size_t next = end < text.size() ? end + 1 : end;
    if (is_marker(text, begin, end, "// fused:begin")) {
      if (inside) throw std::logic_error("kernel template: a fused:begin inside a fused block");
      inside = true;
    } else if (is_marker(text, begin, end, "// fused:end")) {
      if (!inside) throw std::logic_error("kernel template: a fused:end without its fused:begin");
      inside = false;
    } else if (keep || !inside) {
      out.append(text, begin, next - begin);
    }
    begin = next;
  }
  if (inside) throw std::logic_error("kernel template: a fused block without its fused:end");
  return out;
}

}  // namespace normjit::codegen
