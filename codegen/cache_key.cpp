#include "codegen/cache_key.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA256.h"

namespace normjit::codegen {

const char* normjit_version() { return NORMJIT_VERSION; }

std::vector<std::string> compile_options(const CompileTarget& target) {
  std::vector<std::string> options{"--gpu-architecture=" + target.arch(), "-std=c++17", kPtxasReportOption};
  if (target.line_info) options.push_back("--generate-line-info");
  return options;
}

std::string cache_key(const std::string& source, const CompileTarget& target) {
  llvm::SHA256 hash;
  // Length-prefixed fields, so no two different inputs concatenate to the same bytes.
  auto field = [&hash](const std::string& value) {
    hash.update(std::to_string(value.size()));
    hash.update(":");
    hash.update(value);
  };
  field("normjit-cubin-v1");
  field(normjit_version());
  field(target.nvrtc_version);
  field(target.arch());
  for (const std::string& option : compile_options(target)) field(option);
  field(source);
  return llvm::toHex(hash.final(), /*LowerCase=*/true);
}

}  // namespace normjit::codegen
