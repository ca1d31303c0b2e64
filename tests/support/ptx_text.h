// Reading a PTX module as text, for tests that check what a kernel's code does or leaves out.
#pragma once
#include <string>
#include <vector>

namespace normjit::test {

// The lines of one .entry's body in a PTX module (empty if the module has no such entry).
std::vector<std::string> entry_body(const std::string& ptx, const std::string& entry);

}  // namespace normjit::test
