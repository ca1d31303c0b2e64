#include <stdexcept>

#include "codegen/embedded_templates.h"

namespace normjit::codegen {

const char* template_text(const std::string& name) {
  for (const EmbeddedTemplate& t : embedded_templates())
    if (name == t.name) return t.text;
  throw std::logic_error("normjit was built without the kernel template '" + name + "'");
}

}  // namespace normjit::codegen
