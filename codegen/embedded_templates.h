// The kernel templates of templates/, compiled into the library as text.
#pragma once
#include <string>
#include <vector>

namespace normjit::codegen {

struct EmbeddedTemplate {
  const char* name;  // file name, e.g. "norm_backward.cuh"
  const char* text;
};

const std::vector<EmbeddedTemplate>& embedded_templates();
// The text of one template; throws std::logic_error for an unknown name (a build defect).
const char* template_text(const std::string& name);

}  // namespace normjit::codegen
