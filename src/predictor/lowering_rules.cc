#include "predictor/lowering_rules.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

namespace ftax {

// The text of lowering_table.json, generated at build time (cmake/FtaxEmbedText.cmake).
extern const char kEmbeddedLoweringTableJson[];

namespace {

using json = nlohmann::json;

// The fields of a row: required ones first, in the order errors report them missing.
const char* const kRequiredFields[] = {"domain", "op_type", "dispatch", "class", "recipe", "bias_foldable"};
const char* const kOptionalFields[] = {"cost_key", "why"};
const char* const kTopLevelFields[] = {"notes", "classes", "recipes", "rows"};

std::string Quoted(const std::string& s) { return json(s).dump(); }

template <typename Names>
std::string List(const Names& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

std::vector<std::string> DispatchClassNames() {
  std::vector<std::string> names;
  for (int c = 0; c < kNumDispatchClasses; ++c) names.push_back(DispatchClassName(DispatchClass(c)));
  return names;
}

std::vector<std::string> RecipeNames() {
  std::vector<std::string> names;
  for (KernelRecipe r : AllKernelRecipes()) names.push_back(KernelRecipeName(r));
  return names;
}

// A legend ("classes", "recipes"): an object whose keys are exactly `known`, each with a
// description.
Status CheckLegend(const json& doc, const char* field, const std::vector<std::string>& known) {
  auto it = doc.find(field);
  if (it == doc.end()) return Status::Ok();
  const std::string where = std::string("\"") + field + "\"";
  if (!it->is_object()) return InvalidInput(where + " is not an object of name: description");
  for (const auto& [name, text] : it->items()) {
    if (std::find(known.begin(), known.end(), name) == known.end())
      return InvalidInput(where + " describes " + Quoted(name) + ", which is none of " + List(known));
    if (!text.is_string()) return InvalidInput(where + "." + name + " is not a string");
  }
  for (const std::string& name : known)
    if (!it->contains(name)) return InvalidInput(where + " does not describe " + Quoted(name));
  return Status::Ok();
}

// What a row is called in errors: its index, and its op where it has one.
std::string RowName(size_t i, const json& row) {
  std::string name = "rows[" + std::to_string(i) + "]";
  if (!row.is_object()) return name;
  auto d = row.find("domain");
  auto t = row.find("op_type");
  if (t == row.end() || !t->is_string() || t->get<std::string>().empty()) return name;
  const std::string type = t->get<std::string>();
  if (d != row.end() && d->is_string() && d->get<std::string>() == "aten") return name + " (aten::" + type + ")";
  if (d != row.end() && d->is_string() && d->get<std::string>().empty()) return name + " (ONNX " + type + ")";
  return name + " (" + type + ")";
}

Expected<LoweringTableRow> ParseRow(const json& row) {
  if (!row.is_object()) return InvalidInput("is not an object");
  for (const char* f : kRequiredFields)
    if (!row.contains(f)) return InvalidInput(std::string("has no \"") + f + "\"");
  for (const auto& [name, value] : row.items()) {
    const auto is = [&name = name](const char* f) { return name == f; };
    if (std::none_of(std::begin(kRequiredFields), std::end(kRequiredFields), is) &&
        std::none_of(std::begin(kOptionalFields), std::end(kOptionalFields), is))
      return InvalidInput("unknown field " + Quoted(name) + "; a row has " + List(kRequiredFields) + " and optionally " +
                          List(kOptionalFields));
  }
  for (const char* f : {"domain", "op_type", "class", "recipe", "cost_key", "why"})
    if (row.contains(f) && !row[f].is_string()) return InvalidInput(std::string("\"") + f + "\" is not a string");
  for (const char* f : {"dispatch", "bias_foldable"})
    if (!row[f].is_boolean()) return InvalidInput(std::string("\"") + f + "\" is not true or false");

  LoweringTableRow r;
  r.domain = row["domain"].get<std::string>();
  if (r.domain != "aten" && !r.domain.empty())
    return InvalidInput("domain " + Quoted(r.domain) + " is neither \"aten\" nor \"\" (the ONNX default domain)");
  r.op_type = row["op_type"].get<std::string>();
  if (r.op_type.empty()) return InvalidInput("\"op_type\" is empty");
  r.rule.dispatch = row["dispatch"].get<bool>();
  const std::string cls = row["class"].get<std::string>();
  auto dc = ParseDispatchClass(cls);
  if (!dc) return InvalidInput("unknown class " + Quoted(cls) + "; known: " + List(DispatchClassNames()));
  r.rule.dispatch_class = *dc;
  const std::string recipe = row["recipe"].get<std::string>();
  auto kr = ParseKernelRecipe(recipe);
  if (!kr) return InvalidInput("unknown recipe " + Quoted(recipe) + "; known: " + List(RecipeNames()));
  r.rule.recipe = *kr;
  r.rule.bias_foldable = row["bias_foldable"].get<bool>();
  if (row.contains("cost_key")) {
    r.cost_key = row["cost_key"].get<std::string>();
    if (r.cost_key.empty()) return InvalidInput("\"cost_key\" is empty (leave it out for the default key)");
  }
  if (row.contains("why") && row["why"].get<std::string>().empty()) return InvalidInput("\"why\" is empty");
  return r;
}

// The parsed embedded table, looked up by op type alone so that a lookup allocates nothing:
// op type -> rows for the ONNX domain (first) and the aten domain (second); null where the
// domain has no row.
struct Table {
  std::vector<LoweringTableRow> rows;  // never resized once built: the map points into it
  using Entry = std::pair<const LoweringTableRow*, const LoweringTableRow*>;
  std::unordered_map<std::string, Entry> by_type;

  const LoweringTableRow* Find(bool aten, const std::string& op_type) const {
    auto it = by_type.find(op_type);
    if (it == by_type.end()) return nullptr;
    return aten ? it->second.second : it->second.first;
  }
};

const Table& GetTable() {
  static const Table* table = [] {
    Expected<std::vector<LoweringTableRow>> rows = ParseLoweringTable(EmbeddedLoweringTable());
    if (!rows.ok()) {
      // Only a broken build gets here: tests/predictor/lowering_table_test.cc parses the same
      // text and fails naming the row.
      std::fprintf(stderr, "ftax: a broken build, its built-in %s (src/predictor/lowering_table.json)\n",
                   rows.status().message().c_str());
      std::abort();
    }
    auto* t = new Table{std::move(rows.value()), {}};
    for (const LoweringTableRow& r : t->rows) {
      Table::Entry& e = t->by_type[r.op_type];
      (r.domain == "aten" ? e.second : e.first) = &r;
    }
    return t;
  }();
  return *table;
}

// "hardswish_" is the in-place form of "hardswish"; "__and__" is no in-place form.
bool IsInPlaceForm(const std::string& op_type) {
  return op_type.size() > 1 && op_type.back() == '_' && op_type[op_type.size() - 2] != '_';
}

}  // namespace

const char* KernelRecipeName(KernelRecipe r) {
  switch (r) {
    case KernelRecipe::kNone: return "none";
    case KernelRecipe::kLinear: return "linear";
    case KernelRecipe::kMatMul: return "matmul";
    case KernelRecipe::kGemmOnnx: return "gemm_onnx";
    case KernelRecipe::kConv: return "conv";
    case KernelRecipe::kAttention: return "attention";
    case KernelRecipe::kReduction: return "reduction";
    case KernelRecipe::kNorm: return "norm";
    case KernelRecipe::kElementwise: return "elementwise";
    case KernelRecipe::kCopy: return "copy";
    case KernelRecipe::kGather: return "gather";
    case KernelRecipe::kNativeMha: return "native_mha";
    case KernelRecipe::kCounted: return "counted";
  }
  return "?";
}

std::vector<KernelRecipe> AllKernelRecipes() {
  return {KernelRecipe::kNone,        KernelRecipe::kLinear,    KernelRecipe::kMatMul,
          KernelRecipe::kGemmOnnx,    KernelRecipe::kConv,      KernelRecipe::kAttention,
          KernelRecipe::kReduction,   KernelRecipe::kNorm,      KernelRecipe::kElementwise,
          KernelRecipe::kCopy,        KernelRecipe::kGather,    KernelRecipe::kNativeMha,
          KernelRecipe::kCounted};
}

std::optional<KernelRecipe> ParseKernelRecipe(const std::string& name) {
  for (KernelRecipe r : AllKernelRecipes())
    if (name == KernelRecipeName(r)) return r;
  return std::nullopt;
}

Expected<std::vector<LoweringTableRow>> ParseLoweringTable(std::string_view json_text) {
  const auto error = [](const std::string& m) { return InvalidInput("lowering table: " + m); };
  json doc;
  try {
    doc = json::parse(json_text.begin(), json_text.end());
  } catch (const json::parse_error& e) {
    return error(std::string("not valid JSON: ") + e.what());  // says the line and column
  }
  if (!doc.is_object()) return error("not a JSON object");
  for (const auto& [name, value] : doc.items())
    if (std::find(std::begin(kTopLevelFields), std::end(kTopLevelFields), name) == std::end(kTopLevelFields))
      return error("unknown top-level field " + Quoted(name) + "; the table has " + List(kTopLevelFields));
  if (doc.contains("notes")) {
    const json& notes = doc["notes"];
    if (!notes.is_array() || !std::all_of(notes.begin(), notes.end(), [](const json& n) { return n.is_string(); }))
      return error("\"notes\" is not a list of strings");
  }
  if (Status s = CheckLegend(doc, "classes", DispatchClassNames()); !s.ok()) return error(s.message());
  if (Status s = CheckLegend(doc, "recipes", RecipeNames()); !s.ok()) return error(s.message());
  if (!doc.contains("rows")) return error("no \"rows\"");
  const json& rows = doc["rows"];
  if (!rows.is_array()) return error("\"rows\" is not a list");

  std::vector<LoweringTableRow> out;
  out.reserve(rows.size());
  std::map<std::pair<std::string, std::string>, size_t> first_row;
  for (size_t i = 0; i < rows.size(); ++i) {
    Expected<LoweringTableRow> r = ParseRow(rows[i]);
    if (!r.ok()) return error(RowName(i, rows[i]) + ": " + r.status().message());
    auto [at, fresh] = first_row.emplace(std::make_pair(r->domain, r->op_type), i);
    if (!fresh)
      return error(RowName(i, rows[i]) + ": a second row for this op (the first is rows[" +
                   std::to_string(at->second) + "])");
    out.push_back(std::move(r.value()));
  }
  return out;
}

std::string_view EmbeddedLoweringTable() { return kEmbeddedLoweringTableJson; }

const LoweringRule* FindLoweringRule(const std::string& domain, const std::string& op_type) {
  const std::string_view d(domain);
  const bool aten = d == "aten";
  if (!aten && !d.empty() && d != "ai.onnx") return nullptr;
  const Table& table = GetTable();
  const LoweringTableRow* r = table.Find(aten, op_type);
  if (!r && aten && IsInPlaceForm(op_type)) r = table.Find(true, op_type.substr(0, op_type.size() - 1));
  return r ? &r->rule : nullptr;
}

const std::string& DispatchCostKey(const std::string& domain, const std::string& op_type) {
  static const std::string kNone;
  // Interned keys, so that a work list's dispatches point at them.
  static auto* interned = new std::unordered_map<std::string, std::string>();
  static std::mutex mu;
  const std::string_view d(domain);
  const Table& table = GetTable();
  std::string key;
  if (d == "aten") {
    // The row's cost_key; for an in-place form ("relu_"), its own row's, else its out-of-place
    // form's row's; else the op's own name (the out-of-place one's for an in-place form).
    const bool in_place = IsInPlaceForm(op_type);
    std::string base = op_type;
    if (in_place) base.pop_back();
    const LoweringTableRow* own = table.Find(true, op_type);
    const LoweringTableRow* of_base = in_place ? table.Find(true, base) : nullptr;
    if (own && !own->cost_key.empty())
      key = own->cost_key;
    else if (of_base && !of_base->cost_key.empty())
      key = of_base->cost_key;
    else
      key = base;
  } else if (d.empty() || d == "ai.onnx") {
    const LoweringTableRow* r = table.Find(false, op_type);
    if (!r || r->cost_key.empty()) return kNone;
    key = r->cost_key;
  } else {
    return kNone;
  }
  std::lock_guard<std::mutex> lock(mu);
  return interned->emplace(key, key).first->second;
}

std::vector<std::pair<std::string, std::string>> LoweringTableKeys() {
  std::vector<std::pair<std::string, std::string>> keys;
  for (const LoweringTableRow& r : GetTable().rows) keys.emplace_back(r.domain, r.op_type);
  std::sort(keys.begin(), keys.end());
  return keys;
}

}  // namespace ftax
