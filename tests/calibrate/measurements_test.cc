// Measurement files: valid files load, partial lists are accepted, and every malformed field
// is rejected with a message that names the file, the row and the field.
#include "calibrate/measurements.h"

#include <cstdio>
#include <fstream>

#include <gtest/gtest.h>

#include <tuple>

namespace ftax {
namespace {

using json = nlohmann::json;

json ValidFile() {
  return json::parse(R"({
    "schema_version": 1, "kind": "ftax-measurements",
    "host": {"gpu": "SYNTHETIC test host", "sm_count": 132, "synthetic": true},
    "kernels": [
      {"class": "gemm", "dtype": "fp16", "label": "gemm 128x768x768", "m": 128, "n": 768,
       "k": 768, "batch": 1, "flops": 1.5e8, "bytes": 2.6e6, "kernels_per_call": 1,
       "kernel_us": {"median": 7.1, "p10": 7.0, "p90": 7.3}},
      {"class": "reduction", "dtype": "bf16", "flops": 1e6, "bytes": 4e6, "kernels_per_call": 2,
       "kernel_us": {"median": 5.0}}
    ],
    "dispatch": [
      {"framework": "libtorch-eager", "class": "kernel", "n_ops": 64, "modules": 0,
       "call_us": {"median": 300, "p10": 290, "p90": 320}, "gpu_kernel_us": 96,
       "gpu_span_us": 280},
      {"framework": "pytorch-eager", "class": "view", "n_ops": 8, "modules": 4,
       "call_us": {"median": 80}, "gpu_kernel_us": null}
    ],
    "failures": [{"what": "gemm bf16 8192x8192x8192", "error": "out of memory"}]
  })");
}

std::string ErrorOf(const json& j) {
  Expected<Measurements> m = MeasurementsFromJson(j);
  EXPECT_FALSE(m.ok()) << "accepted: " << j.dump();
  return m.ok() ? "" : m.status().message();
}

std::string WriteTemp(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

TEST(MeasurementsTest, ParsesAValidFile) {
  Expected<Measurements> m = MeasurementsFromJson(ValidFile());
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ(m->kernels.size(), 2u);
  EXPECT_EQ(m->kernels[0].work.cls, KernelClass::kGemm);
  EXPECT_EQ(m->kernels[0].work.dtype, DType::kFloat16);
  EXPECT_EQ(m->kernels[0].work.m, 128);
  EXPECT_DOUBLE_EQ(m->kernels[0].kernel_us.median, 7.1);
  EXPECT_EQ(m->kernels[0].label, "gemm 128x768x768");
  EXPECT_EQ(m->kernels[1].kernels_per_call, 2);
  EXPECT_EQ(m->kernels[1].work.m, 0);
  EXPECT_EQ(m->kernels[1].work.batch, 1);
  EXPECT_DOUBLE_EQ(m->kernels[1].kernel_us.p90, 5.0);  // missing quantiles: the median
  ASSERT_EQ(m->dispatch.size(), 2u);
  EXPECT_EQ(m->dispatch[0].framework, Framework::kLibtorchEager);
  EXPECT_DOUBLE_EQ(m->dispatch[0].gpu_span_us, 280);
  EXPECT_EQ(m->dispatch[1].modules, 4);
  EXPECT_LT(m->dispatch[1].gpu_kernel_us, 0);  // null: unknown
  EXPECT_LT(m->dispatch[1].gpu_span_us, 0);    // missing: unknown
  EXPECT_EQ(m->failures.size(), 1u);
  EXPECT_EQ(m->host["sm_count"], 132);
}

TEST(MeasurementsTest, AcceptsPartialLists) {
  json j = ValidFile();
  j.erase("dispatch");
  j.erase("failures");
  Expected<Measurements> m = MeasurementsFromJson(j);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->kernels.size(), 2u);
  EXPECT_TRUE(m->dispatch.empty());
  j.erase("kernels");
  j["dispatch"] = json::array();
  EXPECT_TRUE(MeasurementsFromJson(j).ok());
}

TEST(MeasurementsTest, RejectsWrongSchemaVersionAndKind) {
  json j = ValidFile();
  j["schema_version"] = 2;
  EXPECT_NE(ErrorOf(j).find("schema_version: 2 is not supported"), std::string::npos);
  j.erase("schema_version");
  EXPECT_NE(ErrorOf(j).find("schema_version"), std::string::npos);
  j = ValidFile();
  j["schema_version"] = "1";
  EXPECT_NE(ErrorOf(j).find("schema_version"), std::string::npos);
  j = ValidFile();
  j["kind"] = "ftax-host-profile";
  EXPECT_NE(ErrorOf(j).find("kind"), std::string::npos);
  EXPECT_NE(ErrorOf(json::array()).find("top level"), std::string::npos);
}

TEST(MeasurementsTest, AGapChainKeepsItsElementsAndOnlyAnEagerKernelChainHasThem) {
  json j = ValidFile();
  j["dispatch"][0]["elements"] = 8388608;
  Expected<Measurements> m = MeasurementsFromJson(j);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->dispatch[0].elements, 8388608);
  EXPECT_EQ(m->dispatch[1].elements, 0);
  json ts = ValidFile();
  ts["dispatch"][1]["elements"] = 8388608;  // a Python eager view chain
  EXPECT_NE(ErrorOf(ts).find("dispatch[1].elements: only a libtorch-eager chain of kernel-class ops"),
            std::string::npos);
  json zero = ValidFile();
  zero["dispatch"][0]["elements"] = 0;
  EXPECT_NE(ErrorOf(zero).find("dispatch[0].elements"), std::string::npos);
}

TEST(MeasurementsTest, OnlyATorchCompileChainTakesParametersAsGraphInputs) {
  json j = ValidFile();
  j["dispatch"][0]["framework"] = "torch-compile";
  j["dispatch"][0]["graph_inputs"] = 32;
  Expected<Measurements> m = MeasurementsFromJson(j);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->dispatch[0].graph_inputs, 32);
  EXPECT_EQ(m->dispatch[1].graph_inputs, 0);  // a row without the field: none
  json eager = ValidFile();
  eager["dispatch"][0]["graph_inputs"] = 32;  // a libtorch-eager chain
  EXPECT_NE(ErrorOf(eager).find("dispatch[0].graph_inputs: only a torch.compile chain"), std::string::npos);
  json replay = j;  // reduce-overhead's library chain takes its matrix as an input too
  replay["dispatch"][0]["framework"] = "torch-compile-reduce-overhead";
  replay["dispatch"][0]["graph_inputs"] = 1;
  EXPECT_TRUE(MeasurementsFromJson(replay).ok());
  json negative = j;
  negative["dispatch"][0]["graph_inputs"] = -1;
  EXPECT_NE(ErrorOf(negative).find("dispatch[0].graph_inputs"), std::string::npos);
  json text = j;
  text["dispatch"][0]["graph_inputs"] = "many";
  EXPECT_NE(ErrorOf(text).find("dispatch[0].graph_inputs"), std::string::npos);
}

TEST(MeasurementsTest, GroupedRowsOfOtherWidthsAndBatchNormShapesAreReadAsTheLoweringPricesThem) {
  json j = ValidFile();
  j["kernels"] = json::array();
  // A grouped row of 24 channels a group, one of 32 (the bench writes both as grouped).
  j["kernels"].push_back({{"class", "conv"}, {"dtype", "fp16"}, {"variant", "grouped"},
                          {"label", "layer conv n1 96->96 56x56 k3x3 s1x1 p1x1 g4"}, {"m", 3136}, {"n", 24},
                          {"k", 216}, {"batch", 4}, {"flops", 1.3e8}, {"bytes", 2.3e6},
                          {"kernel_us", {{"median", 19.6}}}});
  j["kernels"].push_back({{"class", "conv"}, {"dtype", "fp16"}, {"variant", "grouped"},
                          {"label", "layer conv n1 128->128 56x56 k3x3 s1x1 p1x1 g4"}, {"m", 3136}, {"n", 32},
                          {"k", 288}, {"batch", 4}, {"flops", 2.3e8}, {"bytes", 3.2e6},
                          {"kernel_us", {{"median", 10.5}}}});
  // Channels-last grouped rows as host run ce's bench wrote them (nhwc, batch = groups): 24
  // channels a group are read as their own variant, 32 stay nhwc, and so does a dense row.
  j["kernels"].push_back({{"class", "conv"}, {"dtype", "fp16"}, {"variant", "nhwc"},
                          {"label", "layer conv n1 384->384 14x14 k3x3 s1x1 p1x1 g16 nhwc w-nhwc"}, {"m", 196},
                          {"n", 24}, {"k", 216}, {"batch", 16}, {"flops", 3.3e7}, {"bytes", 4.7e5},
                          {"kernel_us", {{"median", 30.3}}}});
  j["kernels"].push_back({{"class", "conv"}, {"dtype", "fp16"}, {"variant", "nhwc"},
                          {"label", "layer conv n1 512->512 14x14 k3x3 s1x1 p1x1 g16 nhwc w-nhwc"}, {"m", 196},
                          {"n", 32}, {"k", 288}, {"batch", 16}, {"flops", 5.8e7}, {"bytes", 6.3e5},
                          {"kernel_us", {{"median", 4.1}}}});
  j["kernels"].push_back({{"class", "conv"}, {"dtype", "fp16"}, {"variant", "nhwc"},
                          {"label", "layer conv n1 3->24 224x224 k3x3 s2x2 p1x1 g1 nhwc"}, {"m", 12544},
                          {"n", 24}, {"k", 27}, {"batch", 1}, {"flops", 1.6e7}, {"bytes", 9.0e5},
                          {"kernel_us", {{"median", 4.3}}}});
  // A batch-norm row: its shape from its label.
  j["kernels"].push_back({{"class", "norm"}, {"dtype", "fp16"}, {"variant", "batch_norm"},
                          {"main_kernel_only", true}, {"label", "batch_norm n8 64x56x56"}, {"flops", 1.6e7},
                          {"bytes", 6.4e6}, {"kernel_us", {{"median", 9.0}}}});
  Expected<Measurements> m = MeasurementsFromJson(j);
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ(m->kernels.size(), 6u);
  EXPECT_EQ(m->kernels[0].work.variant, KernelVariant::kGroupedNonPow2);
  EXPECT_EQ(m->kernels[1].work.variant, KernelVariant::kGrouped);
  EXPECT_EQ(m->kernels[2].work.variant, KernelVariant::kNhwcGroupedNonPow2);
  EXPECT_EQ(m->kernels[3].work.variant, KernelVariant::kNhwc);
  EXPECT_EQ(m->kernels[4].work.variant, KernelVariant::kNhwc);
  EXPECT_EQ(m->kernels[5].work.variant, KernelVariant::kBatchNorm);
  EXPECT_EQ(m->kernels[5].work.m, 8 * 56 * 56);
  EXPECT_EQ(m->kernels[5].work.n, 64);
  EXPECT_EQ(m->kernels[5].work.k, 1);
}

TEST(MeasurementsTest, MissingFieldsAreNamed) {
  struct Case {
    const char* list;
    int row;
    const char* field;
    const char* expect;
  } cases[] = {
      {"kernels", 0, "class", "kernels[0] (\"gemm 128x768x768\").class: required"},
      {"kernels", 0, "dtype", "kernels[0] (\"gemm 128x768x768\").dtype: required"},
      {"kernels", 1, "flops", "kernels[1].flops: required"},
      {"kernels", 1, "bytes", "kernels[1].bytes: required"},
      {"kernels", 1, "kernel_us", "kernels[1].kernel_us: required"},
      {"dispatch", 0, "framework", "dispatch[0].framework: required"},
      {"dispatch", 0, "n_ops", "dispatch[0].n_ops: required"},
      {"dispatch", 1, "call_us", "dispatch[1].call_us: required"},
  };
  for (const Case& c : cases) {
    json j = ValidFile();
    j[c.list][c.row].erase(c.field);
    EXPECT_EQ(ErrorOf(j), c.expect);
  }
  json j = ValidFile();
  j["kernels"][1]["kernel_us"].erase("median");
  EXPECT_EQ(ErrorOf(j), "kernels[1].kernel_us.median: required");
}

TEST(MeasurementsTest, NegativeAndZeroTimesAreRejected) {
  json j = ValidFile();
  j["kernels"][1]["kernel_us"]["median"] = -3.0;
  EXPECT_NE(ErrorOf(j).find("kernels[1].kernel_us.median: must be > 0"), std::string::npos);
  j["kernels"][1]["kernel_us"]["median"] = 0;
  EXPECT_NE(ErrorOf(j).find("kernels[1].kernel_us.median: must be > 0"), std::string::npos);
  j = ValidFile();
  j["dispatch"][0]["call_us"]["p10"] = -1;
  EXPECT_NE(ErrorOf(j).find("dispatch[0].call_us.p10: must be >= 0"), std::string::npos);
  j = ValidFile();
  j["dispatch"][0]["gpu_span_us"] = -5;
  EXPECT_NE(ErrorOf(j).find("dispatch[0].gpu_span_us: must be >= 0"), std::string::npos);
  j = ValidFile();
  j["kernels"][0]["bytes"] = -1;
  EXPECT_NE(ErrorOf(j).find("bytes: must be >= 0"), std::string::npos);
}

TEST(MeasurementsTest, BadValuesAreNamed) {
  json j = ValidFile();
  j["kernels"][0]["class"] = "matmul";
  EXPECT_NE(ErrorOf(j).find(".class: unknown kernel class 'matmul'"), std::string::npos);
  j = ValidFile();
  j["kernels"][0]["dtype"] = "fp13";
  EXPECT_NE(ErrorOf(j).find(".dtype: unknown dtype 'fp13'"), std::string::npos);
  j = ValidFile();
  j["kernels"][0]["m"] = 1.5;
  EXPECT_NE(ErrorOf(j).find(".m: expected an integer"), std::string::npos);
  j = ValidFile();
  j["kernels"][0]["kernels_per_call"] = 0;
  EXPECT_NE(ErrorOf(j).find(".kernels_per_call: must be >= 1"), std::string::npos);
  j = ValidFile();
  j["kernels"][0]["flops"] = "many";
  EXPECT_NE(ErrorOf(j).find(".flops: expected a number"), std::string::npos);
  j = ValidFile();
  j["kernels"][0]["kernel_us"] = {{"median", 7.0}, {"p10", 8.0}};
  EXPECT_NE(ErrorOf(j).find("quantiles out of order"), std::string::npos);
  j = ValidFile();
  j["dispatch"][0]["class"] = "python";
  EXPECT_NE(ErrorOf(j).find("dispatch[0].class: unknown dispatch class"), std::string::npos);
  j = ValidFile();
  j["dispatch"][0]["framework"] = "tensorflow";
  EXPECT_NE(ErrorOf(j).find("unknown framework 'tensorflow'"), std::string::npos);
  j = ValidFile();
  j["dispatch"][0]["n_ops"] = 0;
  EXPECT_NE(ErrorOf(j).find("dispatch[0].n_ops: must be >= 1"), std::string::npos);
  j = ValidFile();
  j["dispatch"][0]["gpu_span_us"] = 50;  // < gpu_kernel_us 96
  EXPECT_NE(ErrorOf(j).find("gpu_span_us: smaller than gpu_kernel_us"), std::string::npos);
  j = ValidFile();
  j["kernels"] = json::object();
  EXPECT_EQ(ErrorOf(j), "kernels: expected an array");
  j = ValidFile();
  j["kernels"][0] = 3;
  EXPECT_NE(ErrorOf(j).find("kernels[0]: expected an object"), std::string::npos);
}

TEST(MeasurementsTest, FileErrorsNameTheFile) {
  Expected<Measurements> m = LoadMeasurements("/nonexistent/x.measurements.json");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(m.status().message().find("/nonexistent/x.measurements.json"), std::string::npos);

  std::string bad = WriteTemp("not-json.measurements.json", "{\"schema_version\": 1, \"kernels\": [");
  m = LoadMeasurements(bad);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), ErrorCode::kInvalidInput);
  EXPECT_NE(m.status().message().find(bad), std::string::npos);
  EXPECT_NE(m.status().message().find("not valid JSON"), std::string::npos);

  json j = ValidFile();
  j["kernels"][1]["kernel_us"]["median"] = -1;
  std::string neg = WriteTemp("negative.measurements.json", j.dump());
  m = LoadMeasurements(neg);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message().rfind(neg + ": kernels[1].kernel_us.median", 0), 0u)
      << m.status().message();

  std::string good = WriteTemp("good.measurements.json", ValidFile().dump());
  m = LoadMeasurements(good);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->source, good);
}

TEST(MeasurementsTest, MergeConcatenatesRowsAndKeepsFirstHostValue) {
  Measurements a = MeasurementsFromJson(ValidFile()).value();
  a.source = "a.json";
  json jb = ValidFile();
  jb["host"] = {{"gpu", "other"}, {"python", "3.11"}};
  Measurements b = MeasurementsFromJson(jb).value();
  b.source = "b.json";
  Measurements m = MergeMeasurements({a, b});
  EXPECT_EQ(m.kernels.size(), 4u);
  EXPECT_EQ(m.dispatch.size(), 4u);
  EXPECT_EQ(m.failures.size(), 2u);
  EXPECT_EQ(m.host["gpu"], "SYNTHETIC test host");
  EXPECT_EQ(m.host["python"], "3.11");
  EXPECT_EQ(m.host["sm_count"], 132);
  EXPECT_EQ(m.source, "a.json + b.json");
  EXPECT_TRUE(MergeMeasurements({}).kernels.empty());
}

// A kernel row of `class` with `label`, as `ftax bench` writes it; `variant` is left out
// unless given (files from before variants were written have none).
json KernelRow(const std::string& cls, const std::string& label, const char* variant = nullptr) {
  json r = {{"class", cls},   {"dtype", "fp16"}, {"label", label},
            {"flops", 1e9},   {"bytes", 1e7},    {"kernel_us", {{"median", 20.0}}}};
  if (variant) r["variant"] = variant;
  return r;
}

Expected<Measurements> WithKernel(const json& row) {
  json j = ValidFile();
  j["kernels"] = json::array({row});
  return MeasurementsFromJson(j);
}

TEST(MeasurementsTest, LegacyK1ConvLabelsReadAsPointwise) {
  // No variant field: a conv whose label names a 1x1 kernel (" k1 ") is a pointwise conv.
  Expected<Measurements> m = WithKernel(KernelRow("conv", "conv n8 64->256 56px k1 s1 g1"));
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->kernels[0].work.cls, KernelClass::kConv);
  EXPECT_EQ(m->kernels[0].work.variant, KernelVariant::kPointwise);

  // Other kernel sizes stay plain, k11 included (" k1 " is matched with its spaces).
  for (const char* label : {"conv n8 64->64 56px k3 s1 g1", "conv n8 64->64 56px k11 s1 g1",
                            "conv n8 64->64 56px k7 s2 g1"}) {
    m = WithKernel(KernelRow("conv", label));
    ASSERT_TRUE(m.ok()) << m.status().message();
    EXPECT_EQ(m->kernels[0].work.variant, KernelVariant::kPlain) << label;
  }
  // The rule is for convolutions only: a GEMM whose label happens to contain " k1 " is plain.
  m = WithKernel(KernelRow("gemm", "gemm m64 k1 n64"));
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->kernels[0].work.variant, KernelVariant::kPlain);
  // An explicit variant wins over the label: newer files mark pointwise convs themselves,
  // and a conv they leave plain stays plain whatever its label says.
  m = WithKernel(KernelRow("conv", "conv n8 64->256 56px k1 s1 g1", ""));
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->kernels[0].work.variant, KernelVariant::kPlain);
  m = WithKernel(KernelRow("conv", "conv n8 64->256 56px k3 s1 g1", "pointwise"));
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->kernels[0].work.variant, KernelVariant::kPointwise);
}

// Benches before the pointwise_odd variant wrote 1x1 convolutions over odd positions per
// image as pointwise: read back, they are the odd variant, found from m over the images the
// label names. Even positions, one position, and rows whose label names no images stay.
TEST(MeasurementsTest, OddPositionPointwiseRowsOfOlderBenchesReadAsTheirOwnVariant) {
  auto variant_of = [](const std::string& label, int64_t m, const char* variant) {
    json r = KernelRow("conv", label, variant);
    r["m"] = m;
    r["n"] = 512;
    r["k"] = 2048;
    Expected<Measurements> read = WithKernel(r);
    EXPECT_TRUE(read.ok()) << read.status().message();
    return read.ok() ? read->kernels[0].work.variant : KernelVariant::kPlain;
  };
  EXPECT_EQ(variant_of("conv n8 2048->512 7px k1 s1 g1", 8 * 49, "pointwise"), KernelVariant::kPointwiseOdd);
  EXPECT_EQ(variant_of("layer conv n64 2048->512 7x7 k1x1 s1x1 p0x0 g1", 64 * 49, "pointwise"),
            KernelVariant::kPointwiseOdd);
  EXPECT_EQ(variant_of("conv n8 2048->512 7px k1 s1 g1", 8 * 49, nullptr), KernelVariant::kPointwiseOdd);
  EXPECT_EQ(variant_of("layer conv n8 1024->256 14x14 k1x1 s1x1 p0x0 g1", 8 * 196, "pointwise"),
            KernelVariant::kPointwise);
  EXPECT_EQ(variant_of("layer conv n8 1248->52 1x1 k1x1 s1x1 p0x0 g1", 8, "pointwise"), KernelVariant::kPointwise);
  EXPECT_EQ(variant_of("pointwise 49 positions", 49, "pointwise"), KernelVariant::kPointwise);
  EXPECT_EQ(variant_of("layer conv n8 2048->512 7x7 k1x1 s1x1 p0x0 g1", 8 * 49, "pointwise_odd"),
            KernelVariant::kPointwiseOdd);
}

// The lowering shapes an odd-position 1x1 convolution as one GEMM per image; rows of benches
// that shaped it as one GEMM over all images (m = images x positions, batch 1) are read in
// that shape, and rows already per image are kept as written.
TEST(MeasurementsTest, OddPositionRowsAreReadAsOneGemmPerImage) {
  auto read = [](const std::string& label, int64_t m, int64_t batch, const char* variant) {
    json r = KernelRow("conv", label, variant);
    r["m"] = m;
    r["n"] = 512;
    r["k"] = 2048;
    r["batch"] = batch;
    Expected<Measurements> got = WithKernel(r);
    EXPECT_TRUE(got.ok()) << got.status().message();
    return got.ok() ? got->kernels[0].work : KernelWork{};
  };
  KernelWork w = read("conv n8 2048->512 7px k1 s1 g1", 8 * 49, 1, "pointwise");
  EXPECT_EQ(w.variant, KernelVariant::kPointwiseOdd);
  EXPECT_EQ(w.m, 49);
  EXPECT_EQ(w.batch, 8);
  w = read("layer conv n8 192->64 17x17 k1x1 s1x1 p0x0 g1", 8 * 289, 1, "pointwise_odd");
  EXPECT_EQ(w.m, 289);
  EXPECT_EQ(w.batch, 8);
  w = read("layer conv n8 192->64 17x17 k1x1 s1x1 p0x0 g1", 289, 8, "pointwise_odd");
  EXPECT_EQ(w.m, 289);
  EXPECT_EQ(w.batch, 8);
  w = read("layer conv n1 192->64 17x17 k1x1 s1x1 p0x0 g1", 289, 1, "pointwise_odd");
  EXPECT_EQ(w.m, 289);
  EXPECT_EQ(w.batch, 1);
  w = read("layer conv n8 1024->256 14x14 k1x1 s1x1 p0x0 g1", 8 * 196, 1, "pointwise");
  EXPECT_EQ(w.variant, KernelVariant::kPointwise);
  EXPECT_EQ(w.m, 8 * 196);
  EXPECT_EQ(w.batch, 1);
}

TEST(MeasurementsTest, KnownVariantsAreRead) {
  // Each variant on the class it belongs to; "plain" and "" on any class.
  const std::tuple<const char*, const char*, KernelVariant> cases[] = {
      {"gemm", "nn", KernelVariant::kGemmNN},
      {"gemm", "nn_bias", KernelVariant::kGemmNNBias},
      {"elementwise", "broadcast", KernelVariant::kBroadcast},
      {"conv", "pointwise", KernelVariant::kPointwise},
      {"conv", "pointwise_odd", KernelVariant::kPointwiseOdd},
      {"elementwise", "strided", KernelVariant::kStrided},
      {"gemm", "plain", KernelVariant::kPlain},
      {"norm", "", KernelVariant::kPlain}};
  for (const auto& [cls, name, variant] : cases) {
    Expected<Measurements> m = WithKernel(KernelRow(cls, std::string(cls) + " row", name));
    ASSERT_TRUE(m.ok()) << name << ": " << m.status().message();
    EXPECT_EQ(m->kernels[0].work.variant, variant) << name;
  }
}

TEST(MeasurementsTest, BatchNormVariantReadsAsPlainNorm) {
  Expected<Measurements> m = WithKernel(KernelRow("norm", "batch_norm n1 c64 56px", "batch_norm"));
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->kernels[0].work.cls, KernelClass::kNorm);
  EXPECT_EQ(m->kernels[0].work.variant, KernelVariant::kPlain);
  EXPECT_DOUBLE_EQ(m->kernels[0].kernel_us.median, 20.0);  // the row is kept, not dropped
  // Rows of benches since 2026-11-23 time the transform kernel alone and say so: those are
  // the batch_norm variant.
  json row = KernelRow("norm", "batch_norm n8 256x56x56", "batch_norm");
  row["main_kernel_only"] = true;
  m = WithKernel(row);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->kernels[0].work.variant, KernelVariant::kBatchNorm);
  // "batch_norm" is no variant of other classes, nor "nn" of a norm row.
  json j = ValidFile();
  j["kernels"][0]["variant"] = "batch_norm";
  EXPECT_EQ(ErrorOf(j), "kernels[0] (\"gemm 128x768x768\").variant: 'batch_norm' is no variant of class gemm");
  m = WithKernel(KernelRow("norm", "layer_norm 128x768", "nn"));
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("'nn' is no variant of class norm"), std::string::npos)
      << m.status().message();
}

TEST(MeasurementsTest, UnknownVariantIsAnErrorNamingTheRow) {
  json j = ValidFile();
  j["kernels"][0]["variant"] = "tn";
  EXPECT_EQ(ErrorOf(j), "kernels[0] (\"gemm 128x768x768\").variant: unknown variant 'tn'");
  j = ValidFile();
  j["kernels"][1]["variant"] = "Pointwise";  // names are case-sensitive
  EXPECT_EQ(ErrorOf(j), "kernels[1].variant: unknown variant 'Pointwise'");
  j = ValidFile();
  j["kernels"][1]["variant"] = 3;
  EXPECT_EQ(ErrorOf(j), "kernels[1].variant: expected a string");
}

// A cuda-graph row timing a chain of model-sized blocks (docs/calibration.md).
json ChainRow() {
  return json::parse(R"({"framework": "cuda-graph", "class": "kernel", "chain": "transformer",
    "dtype": "fp16", "n_ops": 16, "nodes": 64, "call_us": {"median": 900, "p10": 880, "p90": 950},
    "gpu_kernel_us": 850, "gpu_span_us": 870})");
}

json WithChainRow(const json& row) {
  json j = ValidFile();
  j["dispatch"].push_back(row);  // dispatch[2]
  return j;
}

TEST(MeasurementsTest, ReadsChainDispatchRows) {
  Expected<Measurements> m = MeasurementsFromJson(WithChainRow(ChainRow()));
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ(m->dispatch.size(), 3u);
  const DispatchMeasurement& d = m->dispatch[2];
  EXPECT_EQ(d.framework, Framework::kCudaGraph);
  EXPECT_EQ(d.chain, "transformer");
  EXPECT_EQ(d.dtype, "fp16");
  EXPECT_DOUBLE_EQ(d.nodes, 64);
  EXPECT_EQ(d.n_ops, 16);
  EXPECT_DOUBLE_EQ(d.gpu_kernel_us, 850);
  EXPECT_DOUBLE_EQ(d.call_us.median, 900);
  // Rows of tiny-op chains have no chain name and unknown nodes.
  EXPECT_TRUE(m->dispatch[0].chain.empty());
  EXPECT_TRUE(m->dispatch[0].dtype.empty());
  EXPECT_LT(m->dispatch[0].nodes, 0);

  // dtype is optional in a chain row.
  json row = ChainRow();
  row.erase("dtype");
  m = MeasurementsFromJson(WithChainRow(row));
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_TRUE(m->dispatch[2].dtype.empty());
  EXPECT_EQ(m->dispatch[2].chain, "transformer");
  row = ChainRow();
  row["chain"] = "resnet";
  row["dtype"] = "bf16";
  row["nodes"] = 1;  // the lower bound is allowed
  m = MeasurementsFromJson(WithChainRow(row));
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->dispatch[2].chain, "resnet");
  EXPECT_EQ(m->dispatch[2].dtype, "bf16");
  EXPECT_DOUBLE_EQ(m->dispatch[2].nodes, 1);
}

TEST(MeasurementsTest, ChainRowsNeedNodesAndGpuKernelTime) {
  json row = ChainRow();
  row.erase("nodes");
  EXPECT_EQ(ErrorOf(WithChainRow(row)), "dispatch[2].nodes: required");
  row = ChainRow();
  row["nodes"] = nullptr;
  EXPECT_EQ(ErrorOf(WithChainRow(row)), "dispatch[2].nodes: required");
  row = ChainRow();
  row["nodes"] = 0;
  EXPECT_NE(ErrorOf(WithChainRow(row)).find("dispatch[2].nodes: must be >= 1"), std::string::npos);
  row = ChainRow();
  row["nodes"] = "64";
  EXPECT_NE(ErrorOf(WithChainRow(row)).find("dispatch[2].nodes: expected a number"),
            std::string::npos);

  // Without the GPU's kernel time a chain row cannot separate host from device time. The
  // span may go too (it is only checked against the kernel time when both are present).
  row = ChainRow();
  row.erase("gpu_kernel_us");
  row.erase("gpu_span_us");
  EXPECT_EQ(ErrorOf(WithChainRow(row)),
            "dispatch[2].gpu_kernel_us: required in a row of a model-sized chain");
  row = ChainRow();
  row["gpu_kernel_us"] = nullptr;  // null: unknown, which is no better than missing
  EXPECT_EQ(ErrorOf(WithChainRow(row)),
            "dispatch[2].gpu_kernel_us: required in a row of a model-sized chain");

  row = ChainRow();
  row["chain"] = "";
  EXPECT_EQ(ErrorOf(WithChainRow(row)), "dispatch[2].chain: empty");
  row = ChainRow();
  row["chain"] = 1;
  EXPECT_NE(ErrorOf(WithChainRow(row)).find("dispatch[2].chain: expected a string"),
            std::string::npos);
  row = ChainRow();
  row["dtype"] = 16;
  EXPECT_NE(ErrorOf(WithChainRow(row)).find("dispatch[2].dtype: expected a string"),
            std::string::npos);

  // Rows without a chain keep needing neither field (the file's tiny-op rows).
  json j = ValidFile();
  j["dispatch"][0].erase("gpu_kernel_us");
  EXPECT_TRUE(MeasurementsFromJson(j).ok());
}


// Rows of the per-op chains: the op's key, the host time until the chain returned, and the
// kernels one call launched; an op row of a replayed graph, or one that returned after its
// own synchronized end, is refused.
TEST(MeasurementsTest, PerOpRowsCarryTheOpAndItsIssueTime) {
  json j = ValidFile();
  json row = {{"framework", "pytorch-eager"}, {"class", "library"}, {"op", "conv"}, {"n_ops", 32},
              {"modules", 0}, {"call_us", {{"median", 600}}}, {"issue_us", {{"median", 580}}},
              {"kernels_per_call", 64}};
  j["dispatch"].push_back(row);
  Expected<Measurements> m = MeasurementsFromJson(j);
  ASSERT_TRUE(m.ok()) << m.status().message();
  const DispatchMeasurement& d = m->dispatch.back();
  EXPECT_EQ(d.op, "conv");
  ASSERT_TRUE(d.issue_us.has_value());
  EXPECT_DOUBLE_EQ(d.issue_us->median, 580);
  EXPECT_DOUBLE_EQ(d.kernels_per_call, 64);
  EXPECT_FALSE(m->dispatch[0].issue_us.has_value());
  EXPECT_LT(m->dispatch[0].kernels_per_call, 0);

  json late = j;
  late["dispatch"].back()["issue_us"]["median"] = 700;
  EXPECT_NE(ErrorOf(late).find(".issue_us: longer than call_us"), std::string::npos);
  json graph = j;
  graph["dispatch"].back()["framework"] = "cuda-graph";
  EXPECT_NE(ErrorOf(graph).find(".op: a replayed graph has no per-op dispatch"), std::string::npos);
  json empty = j;
  empty["dispatch"].back()["op"] = "";
  EXPECT_NE(ErrorOf(empty).find(".op: empty"), std::string::npos);
}

}  // namespace
}  // namespace ftax
