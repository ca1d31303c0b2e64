#include "runtime/shape_file.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <toml++/toml.h>

#include "codegen/norm_problem.h"
#include "normjit/normjit.hpp"
#include "runtime/toml_messages.h"

namespace normjit::runtime {
namespace {

// Shape files list tens of problems; anything this large is the wrong file.
constexpr uint64_t kMaxShapeFileBytes = 4 << 20;
// An entry expands to one problem per (n, align) pair, and each problem carries the entry's M
// buckets: two lists of a few thousand numbers must not expand into gigabytes (found by
// tests/fuzz/shape_file_fuzz.cpp). Both limits are far above any model's needs.
constexpr size_t kMaxProblems = 4096;
constexpr size_t kMaxBuckets = 256;
constexpr const char* kKeys[] = {"kind",   "n",    "dtype", "dy_dtype", "dx_dtype", "weight_dtype",
                                 "weight", "bias", "align", "m"};
constexpr const char* kKeyList = "kind, n, dtype, dy_dtype, dx_dtype, weight_dtype, weight, bias, align and m";

[[noreturn]] void bad(const std::string& where, const std::string& what, const std::string& accepted) {
  throw Error(Status::ConfigError, "normjit: shapes " + where + " " + what + "; " + accepted + ".");
}

// Reads one [[problem]] table; `where` prefixes every message with the file and the entry.
class EntryReader {
 public:
  EntryReader(const toml::table& table, std::string where) : table_(table), where_(std::move(where)) {}

  std::string at(const std::string& key) const { return where_ + ": " + key; }
  const std::string& where() const { return where_; }

  void reject_unknown_keys() const {
    for (const auto& [key, node] : table_) {
      const std::string name(key.str());
      if (std::find(std::begin(kKeys), std::end(kKeys), name) == std::end(kKeys))
        bad(at(name), "is not a known key", std::string("the keys of [[problem]] are ") + kKeyList);
    }
  }

  const toml::node* find(const std::string& key) const { return table_.get(key); }

  const toml::node& required(const std::string& key, const std::string& accepted) const {
    const toml::node* node = find(key);
    if (!node) bad(at(key), "is missing", accepted);
    return *node;
  }

  std::string string(const toml::node& node, const std::string& key, const std::string& accepted) const {
    if (!node.is_string()) bad(at(key), "is " + describe_value(node), accepted);
    return node.as_string()->get();
  }

  bool boolean(const std::string& key, bool fallback) const {
    const toml::node* node = find(key);
    if (!node) return fallback;
    if (!node->is_boolean()) bad(at(key), "is " + describe_value(*node), "it must be true or false");
    return node->as_boolean()->get();
  }

  // One integer or a non-empty array of integers, each accepted by `ok`.
  template <class Ok>
  std::vector<int64_t> integers(const std::string& key, const std::string& accepted, Ok ok) const {
    const toml::node* node = find(key);
    if (!node) return {};
    std::vector<int64_t> out;
    auto take = [&](const toml::node& item, const std::string& item_where) {
      if (!item.is_integer() || !ok(item.as_integer()->get())) bad(item_where, "is " + describe_value(item), accepted);
      out.push_back(item.as_integer()->get());
    };
    if (const toml::array* list = node->as_array()) {
      if (list->empty()) bad(at(key), "is an empty array", accepted);
      for (size_t i = 0; i < list->size(); ++i) take(*list->get(i), at(key) + "[" + std::to_string(i) + "]");
    } else {
      take(*node, at(key));
    }
    return out;
  }

  DType dtype(const std::string& key, DType fallback, bool allow_same) const {
    const std::string accepted = allow_same ? "use \"fp32\", \"fp16\", \"bf16\" or \"same\" (as dtype)"
                                            : "use \"fp32\", \"fp16\" or \"bf16\"";
    const toml::node* node = find(key);
    if (!node) return fallback;
    const std::string v = string(*node, key, accepted);
    if (v == "fp32") return DType::F32;
    if (v == "fp16") return DType::F16;
    if (v == "bf16") return DType::BF16;
    if (allow_same && v == "same") return DType::Default;
    bad(at(key), "is " + describe_value(*node), accepted);
  }

 private:
  const toml::table& table_;
  std::string where_;
};

// `room`: how many more problems the file may expand to.
std::vector<ShapeProblem> read_entry(const toml::table& table, int entry, const std::string& origin, size_t room) {
  const EntryReader r(table, origin + ": problem " + std::to_string(entry) + " (line " +
                                 std::to_string(table.source().begin.line) + ")");
  r.reject_unknown_keys();

  NormProblem base;
  const std::string kinds = "use \"layernorm\" or \"rmsnorm\"";
  const toml::node& kind_node = r.required("kind", kinds);
  const std::string kind = r.string(kind_node, "kind", kinds);
  if (kind == "layernorm") base.kind = NormKind::LayerNorm;
  else if (kind == "rmsnorm") base.kind = NormKind::RMSNorm;
  else bad(r.at("kind"), "is " + describe_value(kind_node), kinds);

  r.required("n", "give the hidden size, or a list of them (n = [4096, 5120])");
  const std::vector<int64_t> ns =
      r.integers("n", "each hidden size must be an integer >= 1", [](int64_t v) { return v >= 1; });

  r.required("dtype", "give the dtype of x and dy: \"fp32\", \"fp16\" or \"bf16\"");
  base.x_dtype = r.dtype("dtype", DType::F32, /*allow_same=*/false);
  base.dy_dtype = r.dtype("dy_dtype", DType::Default, false);
  base.dx_dtype = r.dtype("dx_dtype", DType::Default, false);
  base.weight_dtype = r.dtype("weight_dtype", DType::Default, /*allow_same=*/true);
  base.has_weight = r.boolean("weight", true);
  // LayerNorm layers carry β exactly when they carry γ, unless told otherwise.
  base.has_bias = r.boolean("bias", base.kind == NormKind::LayerNorm && base.has_weight);
  if (base.kind == NormKind::RMSNorm && base.has_bias)
    bad(r.at("bias"), "is true for an rmsnorm problem", "RMSNorm has no bias: remove the key or set it to false");

  std::vector<int64_t> aligns = r.integers("align", "each alignment must be 1, 2, 4, 8 or 16 (bytes)", [](int64_t v) {
    return v == 1 || v == 2 || v == 4 || v == 8 || v == 16;
  });
  if (aligns.empty()) aligns = {16};
  const std::vector<int64_t> m =
      r.integers("m", "each M bucket must be an integer >= 1", [](int64_t v) { return v >= 1; });
  if (m.size() > kMaxBuckets)
    bad(r.at("m"), "lists " + std::to_string(m.size()) + " M buckets",
        "give at most " + std::to_string(kMaxBuckets) + " per problem");
  // Both sizes are bounded by the file size (4 MiB), so the product cannot overflow.
  if (ns.size() * aligns.size() > room)
    bad(r.where(), "expands to " + std::to_string(ns.size()) + " hidden sizes x " + std::to_string(aligns.size()) +
                       " alignments",
        "a shape file may list at most " + std::to_string(kMaxProblems) +
            " problems in all: remove repeated values or split the file");

  std::vector<ShapeProblem> out;
  for (int64_t n : ns)
    for (int64_t align : aligns) {
      ShapeProblem s;
      s.problem = base;
      s.problem.n = n;
      s.problem.alignment = static_cast<int>(align);
      s.m = m;
      s.entry = entry;
      try {
        codegen::validate_problem(s.problem);
      } catch (const Error& e) {  // e.g. weight_dtype fp16 with dtype bf16: say where it came from
        std::string why = e.what();
        if (why.rfind("normjit: ", 0) == 0) why = why.substr(9);
        throw Error(Status::ConfigError, "normjit: shapes " + r.where() + ": " + why);
      }
      out.push_back(s);
    }
  return out;
}

}  // namespace

std::vector<ShapeProblem> parse_shape_text(const std::string& text, const std::string& origin) {
  toml::table root;
  try {
    root = toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    std::ostringstream s;
    s << "normjit: shapes " << origin << " is not valid TOML: " << e.description() << " (line "
      << e.source().begin.line << ", column " << e.source().begin.column << "); fix the file.";
    throw Error(Status::ConfigError, s.str());
  }
  const std::string layout = "a shape file holds only [[problem]] tables (docs/CLI.md)";
  for (const auto& [key, node] : root)
    if (key.str() != "problem") bad(origin + ": " + std::string(key.str()), "is not a known key", layout);
  const toml::node* problems = root.get("problem");
  if (!problems) bad(origin, "lists no problems", "add a [[problem]] table with kind, n and dtype");
  const toml::array* list = problems->as_array();
  if (!list || !list->is_array_of_tables())
    bad(origin + ": problem", "is " + describe_value(*problems), "write each problem as a [[problem]] table");
  if (list->empty()) bad(origin, "lists no problems", "add a [[problem]] table with kind, n and dtype");

  std::vector<ShapeProblem> out;
  for (size_t i = 0; i < list->size(); ++i) {
    std::vector<ShapeProblem> entry =
        read_entry(*list->get(i)->as_table(), static_cast<int>(i) + 1, origin, kMaxProblems - out.size());
    out.insert(out.end(), entry.begin(), entry.end());
  }
  return out;
}

std::vector<ShapeProblem> load_shape_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw Error(Status::ConfigError, "normjit: shapes " + path + " does not exist: name an existing TOML file "
                                     "(examples/shapes/ has some).");
  if (std::filesystem::is_directory(path, ec))
    throw Error(Status::ConfigError, "normjit: shapes " + path + " is a directory: name a TOML file.");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(Status::ConfigError, "normjit: shapes " + path + " cannot be opened: check its permissions.");
  std::string text(kMaxShapeFileBytes + 1, '\0');
  f.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (f.bad()) throw Error(Status::ConfigError, "normjit: shapes " + path + " cannot be read.");
  text.resize(static_cast<size_t>(f.gcount()));
  if (text.size() > kMaxShapeFileBytes)
    throw Error(Status::ConfigError, "normjit: shapes " + path + " is larger than 4 MiB: is it a shape file?");
  return parse_shape_text(text, path);
}

}  // namespace normjit::runtime
