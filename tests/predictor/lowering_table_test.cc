// The lowering table as data: src/predictor/lowering_table.json, built into the predictor.
// A bad row in it fails here, named; the parser's errors are checked on hand-made bad tables.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include "predictor/lowering_rules.h"

namespace ftax {
namespace {

// The first error of the built-in table, naming its row, fails the test.
TEST(LoweringTableFileTest, BuiltInTableParses) {
  Expected<std::vector<LoweringTableRow>> rows = ParseLoweringTable(EmbeddedLoweringTable());
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  EXPECT_GT(rows->size(), 400u);
}

// What the library holds is the file in the source tree: a build re-embeds the file when it
// changes.
TEST(LoweringTableFileTest, BuiltInTableIsTheSourceFile) {
  std::ifstream in(std::string(FTAX_SOURCE_DIR) + "/src/predictor/lowering_table.json", std::ios::binary);
  ASSERT_TRUE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_TRUE(text.str() == EmbeddedLoweringTable()) << "rebuild: the embedded table is stale";
}

// Each row is served as written by the lookups, and the lookups serve no op without a row.
TEST(LoweringTableFileTest, LookupsServeEachRowAsWritten) {
  Expected<std::vector<LoweringTableRow>> rows = ParseLoweringTable(EmbeddedLoweringTable());
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  std::vector<std::pair<std::string, std::string>> keys;
  for (const LoweringTableRow& r : rows.value()) {
    const std::string op = r.domain + "::" + r.op_type;
    keys.emplace_back(r.domain, r.op_type);
    const LoweringRule* found = FindLoweringRule(r.domain, r.op_type);
    ASSERT_NE(found, nullptr) << op;
    EXPECT_EQ(found->dispatch, r.rule.dispatch) << op;
    EXPECT_EQ(found->dispatch_class, r.rule.dispatch_class) << op;
    EXPECT_EQ(found->recipe, r.rule.recipe) << op;
    EXPECT_EQ(found->bias_foldable, r.rule.bias_foldable) << op;
    if (!r.cost_key.empty()) {
      EXPECT_EQ(DispatchCostKey(r.domain, r.op_type), r.cost_key) << op;
    }
  }
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(LoweringTableKeys(), keys);
  EXPECT_EQ(FindLoweringRule("aten", "no_such_op"), nullptr);
  EXPECT_EQ(FindLoweringRule("", "NoSuchOp"), nullptr);
  EXPECT_EQ(DispatchCostKey("aten", "no_such_op"), "no_such_op");
  EXPECT_EQ(DispatchCostKey("aten", "addmm_"), "linear");  // the out-of-place row's key
  EXPECT_EQ(DispatchCostKey("", "NoSuchOp"), "");
}

// A row as the table writes it, with one field replaced (or, with an empty value, removed).
std::string Row(const std::string& op_type, const std::string& field = "", const std::string& value = "") {
  std::vector<std::pair<std::string, std::string>> fields = {
      {"domain", "\"aten\""}, {"op_type", "\"" + op_type + "\""}, {"dispatch", "true"},
      {"class", "\"kernel\""}, {"recipe", "\"elementwise\""}, {"bias_foldable", "false"}};
  bool replaced = false;
  for (auto& [name, v] : fields)
    if (name == field) v = value, replaced = true;
  if (!field.empty() && !replaced) fields.emplace_back(field, value);
  std::string row;
  for (const auto& [name, v] : fields)
    if (!v.empty()) row += (row.empty() ? "" : ", ") + ("\"" + name + "\": ") + v;
  return "{" + row + "}";
}

std::string Table(const std::vector<std::string>& rows) {
  std::string text = "{\"notes\": [\"a hand-made table\"], \"rows\": [\n";
  for (size_t i = 0; i < rows.size(); ++i) text += (i ? ",\n" : "") + rows[i];
  return text + "\n]}";
}

// The error a bad table gives; the test fails if it parses.
std::string ErrorOf(const std::string& text) {
  Expected<std::vector<LoweringTableRow>> rows = ParseLoweringTable(text);
  EXPECT_FALSE(rows.ok()) << text;
  return rows.ok() ? "" : rows.status().message();
}

TEST(LoweringTableFileTest, HandMadeTableParsesToItsRows) {
  Expected<std::vector<LoweringTableRow>> rows = ParseLoweringTable(Table(
      {Row("relu"), Row("conv2d", "recipe", "\"conv\""),
       R"({"domain": "", "op_type": "Add", "dispatch": true, "class": "kernel", "recipe": "elementwise",
           "bias_foldable": true, "cost_key": "add", "why": "folds into a MatMul's bias epilogue"})",
       R"({"domain": "aten", "op_type": "size", "dispatch": false, "class": "view", "recipe": "none",
           "bias_foldable": false})"}));
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 4u);
  EXPECT_EQ(rows.value()[0].rule.recipe, KernelRecipe::kElementwise);
  EXPECT_EQ(rows.value()[1].rule.recipe, KernelRecipe::kConv);
  EXPECT_EQ(rows.value()[2].domain, "");
  EXPECT_TRUE(rows.value()[2].rule.bias_foldable);
  EXPECT_EQ(rows.value()[2].cost_key, "add");
  EXPECT_FALSE(rows.value()[3].rule.dispatch);
  EXPECT_EQ(rows.value()[3].rule.dispatch_class, DispatchClass::kView);
  EXPECT_EQ(rows.value()[3].rule.recipe, KernelRecipe::kNone);
  EXPECT_EQ(rows.value()[3].cost_key, "");
  // One op type in both domains is two rows, not a duplicate.
  EXPECT_TRUE(ParseLoweringTable(Table({Row("Relu"), Row("Relu", "domain", "\"\"")})).ok());
}

TEST(LoweringTableFileTest, UnknownClassOrRecipeNamesTheRow) {
  std::string e = ErrorOf(Table({Row("relu"), Row("gelu", "class", "\"kernal\"")}));
  EXPECT_NE(e.find("rows[1] (aten::gelu)"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown class \"kernal\"; known: view, kernel, library"), std::string::npos) << e;
  e = ErrorOf(Table({Row("relu"), Row("gelu", "recipe", "\"elementwse\"")}));
  EXPECT_NE(e.find("rows[1] (aten::gelu)"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown recipe \"elementwse\""), std::string::npos) << e;
  EXPECT_NE(e.find("native_mha"), std::string::npos) << e;  // lists the known ones
}

TEST(LoweringTableFileTest, DuplicateRowNamesBothRows) {
  std::string e = ErrorOf(Table({Row("relu"), Row("gelu"), Row("relu", "recipe", "\"copy\"")}));
  EXPECT_NE(e.find("rows[2] (aten::relu): a second row for this op (the first is rows[0])"), std::string::npos) << e;
  e = ErrorOf(Table({Row("Add", "domain", "\"\""), Row("Add", "domain", "\"\"")}));
  EXPECT_NE(e.find("rows[1] (ONNX Add)"), std::string::npos) << e;
}

TEST(LoweringTableFileTest, MissingFieldNamesTheRowAndTheField) {
  for (const char* field : {"domain", "dispatch", "class", "recipe", "bias_foldable"}) {
    std::string e = ErrorOf(Table({Row("relu"), Row("gelu", field, "")}));
    EXPECT_NE(e.find("rows[1]"), std::string::npos) << e;
    EXPECT_NE(e.find("gelu"), std::string::npos) << e;
    EXPECT_NE(e.find(std::string("has no \"") + field + "\""), std::string::npos) << e;
  }
  std::string e = ErrorOf(Table({Row("relu"), Row("gelu", "op_type", "")}));
  EXPECT_NE(e.find("rows[1]: has no \"op_type\""), std::string::npos) << e;
}

TEST(LoweringTableFileTest, MistypedOrUnknownFieldNamesTheRow) {
  struct Case {
    const char* field;
    const char* value;
    const char* says;
  };
  for (const Case& c : std::vector<Case>{
           {"dispatch", "\"yes\"", "\"dispatch\" is not true or false"},
           {"bias_foldable", "1", "\"bias_foldable\" is not true or false"},
           {"class", "2", "\"class\" is not a string"},
           {"domain", "\"com.microsoft\"", "domain \"com.microsoft\" is neither"},
           {"op_type", "\"\"", "\"op_type\" is empty"},
           {"cost_key", "\"\"", "\"cost_key\" is empty"},
           {"cost_kye", "\"conv\"", "unknown field \"cost_kye\""},
       }) {
    std::string e = ErrorOf(Table({Row("relu"), Row("gelu", c.field, c.value)}));
    EXPECT_NE(e.find("rows[1]"), std::string::npos) << c.field << ": " << e;
    EXPECT_NE(e.find(c.says), std::string::npos) << c.field << ": " << e;
  }
  std::string e = ErrorOf(Table({Row("relu"), "[\"gelu\"]"}));
  EXPECT_NE(e.find("rows[1]: is not an object"), std::string::npos) << e;
}

TEST(LoweringTableFileTest, BadDocumentSaysWhat) {
  std::string e = ErrorOf("{\"rows\": [" + Row("relu") + ",]}");
  EXPECT_NE(e.find("not valid JSON"), std::string::npos) << e;
  EXPECT_NE(e.find("line 1"), std::string::npos) << e;
  EXPECT_NE(ErrorOf("[]").find("not a JSON object"), std::string::npos);
  EXPECT_NE(ErrorOf("{}").find("no \"rows\""), std::string::npos);
  EXPECT_NE(ErrorOf("{\"rows\": {}}").find("\"rows\" is not a list"), std::string::npos);
  EXPECT_NE(ErrorOf("{\"row\": []}").find("unknown top-level field \"row\""), std::string::npos);
  EXPECT_NE(ErrorOf("{\"notes\": \"one\", \"rows\": []}").find("\"notes\" is not a list of strings"),
            std::string::npos);
}

// The legends describe exactly the names the C++ knows, so a reader's list is never stale.
TEST(LoweringTableFileTest, LegendsListExactlyTheKnownNames) {
  EXPECT_TRUE(ParseLoweringTable(R"({"classes": {"view": "v", "kernel": "k", "library": "l"}, "rows": []})").ok());
  std::string e = ErrorOf(R"({"classes": {"view": "v", "kernel": "k"}, "rows": []})");
  EXPECT_NE(e.find("\"classes\" does not describe \"library\""), std::string::npos) << e;
  e = ErrorOf(R"({"recipes": {"fused": "?"}, "rows": []})");
  EXPECT_NE(e.find("\"recipes\" describes \"fused\", which is none of"), std::string::npos) << e;
}

TEST(LoweringTableFileTest, RecipeNamesRoundTrip) {
  for (KernelRecipe r : AllKernelRecipes()) EXPECT_EQ(ParseKernelRecipe(KernelRecipeName(r)), r);
  EXPECT_EQ(ParseKernelRecipe("kLinear"), std::nullopt);
}

}  // namespace
}  // namespace ftax
