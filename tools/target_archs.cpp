#include "tools/target_archs.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "runtime/cuda_driver.h"
#include "tools/problem_flags.h"

namespace normjit::tools {

std::vector<int> parse_arch_list(const std::vector<std::string>& values) {
  std::vector<int> out;
  for (const std::string& value : values) {
    std::stringstream list(value);
    for (std::string arch; std::getline(list, arch, ',');) {
      const bool digits = arch.size() > 3 && arch.size() <= 6 &&
                          std::all_of(arch.begin() + 3, arch.end(), [](char c) { return c >= '0' && c <= '9'; });
      if (arch.rfind("sm_", 0) != 0 || !digits)
        throw std::invalid_argument("--arch '" + arch + "' is not of the form sm_XY (e.g. sm_90 or sm_80,sm_90)");
      const int sm = std::stoi(arch.substr(3));
      if (std::find(out.begin(), out.end(), sm) == out.end()) out.push_back(sm);
    }
  }
  return out;
}

std::vector<int> gpu_archs(std::string* why) {
  std::vector<int> out;
  if (!runtime::cuda_available(why)) return out;
  const auto& d = runtime::driver();
  int count = 0;
  d.cuDeviceGetCount(&count);
  for (int i = 0; i < count; ++i) {
    CUdevice dev;
    int major = 0, minor = 0;
    if (d.cuDeviceGet(&dev, i) != CUDA_SUCCESS) continue;
    d.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    d.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    const int sm = major * 10 + minor;
    if (sm > 0 && std::find(out.begin(), out.end(), sm) == out.end()) out.push_back(sm);
  }
  if (out.empty() && why) *why = "no device reported a compute capability";
  return out;
}

std::vector<std::string> take_repeated_option(std::vector<std::string>& args, const std::string& name) {
  std::vector<std::string> out;
  for (std::string v = take_option(args, name); !v.empty(); v = take_option(args, name)) out.push_back(v);
  return out;
}

}  // namespace normjit::tools
