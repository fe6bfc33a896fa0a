// Spec parsing and dispatch to the per-family generators (arch_<family>.cc).
#include "graph/arch_spec.h"

#include <cctype>

#include "graph/graph_builder.h"

namespace ftax {
namespace {

using arch::ArchParams;

struct KeyInfo {
  const char* key;
  const char* def;  // default as shown in help
};

struct FamilyInfo {
  const char* name;
  const char* what;
  std::vector<KeyInfo> keys;
  bool uses_seq;
  Status (*build)(const ArchParams&, Graph*);
};

const std::vector<FamilyInfo>& Families() {
  static const std::vector<FamilyInfo> families = {
      {"bert", "BERT encoder (HF BertModel, with pooler)",
       {{"layers", "12"}, {"hidden", "768"}, {"heads", "hidden/64"}, {"ffn", "4*hidden"},
        {"vocab", "30522"}, {"max_pos", "512"}, {"type_vocab", "2"}},
       true, &arch::BuildBert},
      {"distilbert", "DistilBERT encoder (HF DistilBertModel: no token types, no pooler)",
       {{"layers", "6"}, {"hidden", "768"}, {"heads", "hidden/64"}, {"ffn", "4*hidden"},
        {"vocab", "30522"}, {"max_pos", "512"}},
       true, &arch::BuildDistilbert},
      {"gpt", "GPT-2 decoder (HF GPT2Model); kv_cache=1: one new token after `past` tokens",
       {{"layers", "12"}, {"hidden", "768"}, {"heads", "hidden/64"}, {"ffn", "4*hidden"},
        {"vocab", "50257"}, {"max_pos", "1024"}, {"kv_cache", "0"}, {"past", "seq"},
        {"lm_head", "0"}},
       true, &arch::BuildGpt},
      {"resnet", "ResNet v1.5 (torchvision); depth picks blocks and block type",
       {{"depth", "50"}, {"blocks", "from depth"}, {"bottleneck", "from depth"},
        {"width", "64"}, {"classes", "1000"}, {"image", "224"}},
       false, &arch::BuildResnet},
      {"mobilenet", "MobileNetV2 (torchvision)",
       {{"width_mult", "1.0"}, {"expansion", "6"}, {"classes", "1000"}, {"image", "224"}},
       false, &arch::BuildMobilenet},
      {"vit", "Vision Transformer (torchvision vit_b_16 layout)",
       {{"layers", "12"}, {"hidden", "768"}, {"heads", "hidden/64"}, {"ffn", "4*hidden"},
        {"patch", "16"}, {"image", "224"}, {"classes", "1000"}, {"fast_path", "1"}},
       false, &arch::BuildVit},
  };
  return families;
}

std::string Trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::string FamilyNames() {
  std::string out;
  for (const FamilyInfo& f : Families()) {
    if (!out.empty()) out += ", ";
    out += f.name;
  }
  return out;
}

std::string KeyNames(const FamilyInfo& f) {
  std::string out;
  for (const KeyInfo& k : f.keys) {
    if (!out.empty()) out += ", ";
    out += k.key;
  }
  return out;
}

Status BuildInto(const std::string& spec, const DimBindings& dims, ArchFlavor flavor, DType dtype,
                 Graph* graph);

constexpr int64_t kMaxBatch = int64_t{1} << 20;
constexpr int64_t kMaxSeq = int64_t{1} << 20;

Status ReadDim(const std::string& spec, const DimBindings& dims, const char* name, int64_t def,
               int64_t max, int64_t* out) {
  auto it = dims.find(name);
  if (it == dims.end()) {
    *out = def;
    return Status::Ok();
  }
  if (it->second <= 0) {
    return InvalidInput("arch spec '" + spec + "': dim '" + name + "' must be positive, got " +
                        std::to_string(it->second));
  }
  if (it->second > max) {
    return InvalidInput("arch spec '" + spec + "': dim '" + name + "' must be at most " +
                        std::to_string(max) + ", got " + std::to_string(it->second));
  }
  *out = it->second;
  return Status::Ok();
}

}  // namespace

Expected<Graph> BuildArchGraph(const std::string& spec, const DimBindings& dims,
                               ArchFlavor flavor) {
  return BuildArchGraph(spec, dims, flavor, DType::kFloat32);
}

Expected<Graph> BuildArchGraph(const std::string& spec, const DimBindings& dims, ArchFlavor flavor,
                               DType dtype) {
  Graph g;
  Status s = BuildArchGraphInto(spec, dims, flavor, dtype, &g);
  if (!s.ok()) return s;
  return g;
}

Status BuildArchGraphInto(const std::string& spec, const DimBindings& dims, ArchFlavor flavor,
                          DType dtype, Graph* graph) {
  Status s = BuildInto(spec, dims, flavor, dtype, graph);
  if (!s.ok()) *graph = Graph();
  return s;
}

namespace {

Status BuildInto(const std::string& spec, const DimBindings& dims, ArchFlavor flavor, DType dtype,
                 Graph* graph) {
  ArchParams p;
  p.spec = spec;
  p.flavor = flavor;
  p.dtype = dtype;
  if (dtype != DType::kFloat32 && dtype != DType::kFloat16 && dtype != DType::kBFloat16 &&
      dtype != DType::kFloat64) {
    return InvalidInput("arch spec '" + spec + "': dtype " + DTypeName(dtype) +
                        " is not supported (fp32, fp16, bf16, fp64)");
  }

  size_t colon = spec.find(':');
  p.family = Trim(spec.substr(0, colon));
  const FamilyInfo* family = nullptr;
  for (const FamilyInfo& f : Families()) {
    if (p.family == f.name) family = &f;
  }
  if (!family) {
    if (p.family.empty()) {
      return InvalidInput("arch spec '" + spec + "': no family given (FAMILY[:KEY=VALUE,...]; " +
                          "families: " + FamilyNames() + ")");
    }
    return InvalidInput("arch spec '" + spec + "': unknown family '" + p.family +
                        "' (families: " + FamilyNames() + ")");
  }

  if (colon != std::string::npos) {
    std::string rest = spec.substr(colon + 1);
    size_t start = 0;
    while (start <= rest.size()) {
      size_t comma = rest.find(',', start);
      std::string item =
          Trim(rest.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      start = comma == std::string::npos ? rest.size() + 1 : comma + 1;
      if (item.empty()) {
        if (comma == std::string::npos && !p.kv.empty()) break;  // one trailing comma is fine
        if (comma == std::string::npos && rest.find_first_not_of(" \t") == std::string::npos) {
          break;  // "bert:" with nothing after the colon
        }
        return InvalidInput("arch spec '" + spec + "': empty KEY=VALUE item");
      }
      size_t eq = item.find('=');
      if (eq == std::string::npos) {
        return InvalidInput("arch spec '" + spec + "': '" + item +
                            "' is not KEY=VALUE (keys of " + family->name + ": " +
                            KeyNames(*family) + ")");
      }
      std::string key = Trim(item.substr(0, eq));
      std::string value = Trim(item.substr(eq + 1));
      bool known = false;
      for (const KeyInfo& k : family->keys) {
        if (key == k.key) known = true;
      }
      if (!known) {
        std::string hint;
        if (key == "batch" || key == "seq") {
          hint = "; '" + key + "' is a dim: bind it with --dim " + key + "=N";
        }
        return InvalidInput("arch spec '" + spec + "': unknown key '" + key + "' for family '" +
                            family->name + "' (keys: " + KeyNames(*family) + ")" + hint);
      }
      if (p.Find(key)) {
        return InvalidInput("arch spec '" + spec + "': key '" + key + "' given twice");
      }
      if (value.empty()) {
        return InvalidInput("arch spec '" + spec + "': key '" + key + "' has no value");
      }
      p.kv.emplace_back(std::move(key), std::move(value));
    }
  }

  Status s = ReadDim(spec, dims, "batch", 1, kMaxBatch, &p.batch);
  if (!s.ok()) return s;
  if (family->uses_seq) {
    s = ReadDim(spec, dims, "seq", 128, kMaxSeq, &p.seq);
    if (!s.ok()) return s;
  }

  graph->name = family->name;
  graph->source = spec;
  graph->opset.clear();
  if (flavor == ArchFlavor::kOnnx) graph->opset[""] = 17;
  s = family->build(p, graph);
  if (!s.ok()) {
    if (s.message().rfind("arch spec '", 0) == 0) return s;
    return s.WithContext("arch spec '" + spec + "'");
  }
  return Status::Ok();
}

}  // namespace

std::string ArchSpecHelp() {
  std::string out =
      "Architecture specs: FAMILY[:KEY=VALUE[,KEY=VALUE...]]; dims: --dim batch=N (default 1)";
  out += ", --dim seq=N for sequence models (default 128)\n";
  for (const FamilyInfo& f : Families()) {
    out += "  ";
    out += f.name;
    out += std::string(f.name).size() < 10 ? std::string(10 - std::string(f.name).size(), ' ')
                                           : std::string(" ");
    for (size_t i = 0; i < f.keys.size(); ++i) {
      if (i) out += ", ";
      out += f.keys[i].key;
      out += '=';
      out += f.keys[i].def;
    }
    out += "  (";
    out += f.what;
    out += ")\n";
  }
  return out;
}

}  // namespace ftax
