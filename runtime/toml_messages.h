// Wording of TOML values in error messages, shared by the config and shape-file readers.
#pragma once
#include <string>
#include <toml++/toml.h>

namespace normjit::runtime {

// A value quoted for a message, cut short so a huge value cannot flood the terminal.
std::string quoted(const std::string& value);
// What a TOML value is, with the value itself where it is short: "the integer 5".
std::string describe_value(const toml::node& node);

}  // namespace normjit::runtime
