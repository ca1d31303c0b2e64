// The one Engine the GPU test binary shares, so kernels compiled by one test serve the next.
#pragma once
#include <string>

#include "normjit/normjit.hpp"

namespace normjit::test {

// Created on first use with its disk cache in a fresh temporary directory (so no earlier run's
// cubins are reused), which is removed at exit.
Engine& shared_engine();

// A fresh temporary directory ("/tmp/normjit-test-XXXXXX"), for engines that need their own.
std::string make_temp_dir();

}  // namespace normjit::test
