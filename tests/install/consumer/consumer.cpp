// The C++ API from an installed normjit: normjit.hpp must compile with nothing but the
// installed include folder and the standard library.
#include <normjit/normjit.hpp>

#include <cstdio>

int main() {
  std::printf("consumer_cpp: normjit %s\n", normjit::version_string());
  try {
    normjit::Engine engine;
    normjit::NormProblem problem;
    problem.kind = normjit::NormKind::RMSNorm;
    problem.n = 5003;
    problem.x_dtype = normjit::DType::F16;
    problem.weight_dtype = normjit::DType::F32;
    try {
      std::printf("consumer_cpp: workspace for RMSNorm fp16 64 x 5003: %zu bytes\n", engine.workspace_size(problem, 64));
    } catch (const normjit::Error& e) {
      if (e.status() != normjit::Status::NoDriver && e.status() != normjit::Status::NoDevice) throw;
      std::printf("consumer_cpp: no GPU: %s\n", e.what());
    }
  } catch (const normjit::Error& e) {
    std::fprintf(stderr, "consumer_cpp: %s\n", e.what());
    return 1;
  }
  std::printf("consumer_cpp: ok\n");
  return 0;
}
