// Measured rows predicted from their TorchScript file ("source" + "inputs"): the file opened
// as graph/open_model.h opens it, at the row's batch; rows it cannot open are skipped with
// the reason.
#include "calibrate/validation_report.h"
#include "calibrate/profile_file.h"

#include <gtest/gtest.h>

#include "graph/torchscript_loader.h"
#include "predictor/predict.h"

namespace ftax {
namespace {

using json = nlohmann::json;

const std::string kBert = std::string(FTAX_TEST_DATA) + "/torchscript/tiny_bert_base.pt";  // input_ids, attention_mask

json Row(int64_t batch, json inputs, const std::string& source = kBert) {
  return {{"model", "tiny-bert"}, {"framework", "pytorch-eager"}, {"precision", "fp16"}, {"batch", batch},
          {"latency_ms", {{"median", 1.0}, {"p10", 0.9}, {"p90", 1.1}}}, {"kernel_ms", 0.2},
          {"source", source}, {"inputs", inputs}};
}

TEST(ValidationReportTorchScript, ARowIsPredictedFromItsFileAtItsBatch) {
  Expected<HostProfile> prof = LoadHostProfile(std::string(FTAX_SOURCE_DIR) + "/validation/h200/2026-11-22b/profile.json");
  ASSERT_TRUE(prof.ok()) << prof.status().message();
  const json inputs = json::array({{{"shape", {1, 16}}, {"dtype", "int64"}}, {{"shape", {1, 16}}, {"dtype", "int64"}}});
  json measured = {{"rows", {Row(1, inputs), Row(8, inputs), Row(8, json::array({inputs[0]})),
                             Row(8, inputs, kBert + ".absent")}}};
  CompareOptions opt;
  opt.interval_samples = 0;
  Expected<ValidationReport> rep = CompareMeasurements(measured, prof.value(), opt);
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  ASSERT_EQ(rep->rows.size(), 2u);
  // Each row as the file walked by hand at the row's batch predicts it.
  Expected<TorchScriptModel> m = TorchScriptModel::Load(kBert);
  ASSERT_TRUE(m.ok()) << m.status().message();
  for (const ValidationRow& r : rep->rows) {
    Expected<Graph> g = m->Walk({{"input_ids", {r.batch, 16}, {}, DType::kInt64},
                                 {"attention_mask", {r.batch, 16}, {}, DType::kInt64}});
    ASSERT_TRUE(g.ok()) << g.status().message();
    Expected<PredictionPoint> p =
        PredictPoint(g.value(), prof.value(), Framework::kPytorchEager, DType::kFloat16, 0, 1, nullptr);
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_DOUBLE_EQ(r.predicted.latency_ms, p->latency_ms) << "batch " << r.batch;
    EXPECT_DOUBLE_EQ(r.predicted.compute_ms, p->compute_ms) << "batch " << r.batch;
  }
  // The row's batch reaches the graph (the file's own shapes say batch 1).
  EXPECT_NE(rep->rows[0].predicted.compute_ms, rep->rows[1].predicted.compute_ms);
  ASSERT_EQ(rep->skipped.size(), 2u);
  EXPECT_NE(rep->skipped[0].find("rows[2] (tiny-bert): " + kBert + ": 1 input shapes given in forward's order"),
            std::string::npos) << rep->skipped[0];
  EXPECT_NE(rep->skipped[1].find("rows[3] (tiny-bert): " + kBert + ".absent"), std::string::npos) << rep->skipped[1];
}

}  // namespace
}  // namespace ftax
