// Which kernel of a problem a config, a tuning or a tuning key is about: the backward (the
// library's first job) or the forward (docs/FORWARD.md).
#pragma once

namespace normjit::codegen {

enum class Pass { Backward, Forward };

inline const char* pass_name(Pass pass) { return pass == Pass::Forward ? "forward" : "backward"; }

}  // namespace normjit::codegen
