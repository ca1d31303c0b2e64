// Force-included (-include) into every C++ file of the fuzz build, before anything else.
//
// normjit's real build is g++ Release: NDEBUG is defined, and g++ 12 has no __builtin_assume,
// so toml++ 3.3.0's internal TOML_ASSERT_ASSUME(...) checks compile to nothing. Under clang
// with NDEBUG they would become __builtin_assume(...), and some of them are false on malformed
// input (marzer/tomlplusplus#301: "[{", "[[=" headers; parse_time on "1979-05-27T=07:32:00Z"):
// undefined behaviour that exists only in the fuzz build and that no sanitizer reports.
// Making TOML_ASSUME a no-op here lets the fuzzer parse exactly as the shipped library does.
// (A build without NDEBUG aborts on those inputs instead: see docs/RELIABILITY.md.)
#pragma once
#include <toml++/impl/preprocessor.h>
#undef TOML_ASSUME
#define TOML_ASSUME(...) static_assert(true)
