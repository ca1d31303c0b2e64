#include "runtime/toml_messages.h"

#include <sstream>

namespace normjit::runtime {

std::string quoted(const std::string& v) {
  constexpr size_t kShown = 80;
  return "\"" + (v.size() > kShown ? v.substr(0, kShown) + "..." : v) + "\"";
}

std::string describe_value(const toml::node& n) {
  std::ostringstream s;
  switch (n.type()) {
    case toml::node_type::string: return "the string " + quoted(n.as_string()->get());
    case toml::node_type::integer: s << "the integer " << n.as_integer()->get(); return s.str();
    case toml::node_type::floating_point: s << "the number " << n.as_floating_point()->get(); return s.str();
    case toml::node_type::boolean: return n.as_boolean()->get() ? "the boolean true" : "the boolean false";
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    default: return "a date/time";
  }
}

}  // namespace normjit::runtime
