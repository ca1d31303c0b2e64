// normjit bench --overhead: the host's cost of a backward call on a cache hit.
#pragma once
#include <cuda.h>

#include "normjit/normjit.hpp"

namespace normjit::tools {

// Prints the table; ctx must be current and stream belong to it.
void run_overhead(Engine& engine, CUcontext ctx, CUstream stream);

}  // namespace normjit::tools
