// The gnuplot scripts of `predict --plot` and `validate --plot`, read as text: one key per
// figure, outside the data; a colour per framework and a dash type per precision; crossover
// labels that do not overprint; and the extensions --plot takes.
#include "cli/plot_script.h"

#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace ftax::cli {
namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The `plot` command's curves (joined over continuation lines), split at top-level commas.
std::vector<std::vector<std::string>> PlotCommands(const std::string& script) {
  std::vector<std::vector<std::string>> plots;
  std::string joined;
  for (const std::string& l : Lines(script)) {
    if (!l.empty() && l.back() == '\\') {
      joined += l.substr(0, l.size() - 1);
      continue;
    }
    joined += l;
    if (joined.rfind("plot ", 0) == 0) {
      std::vector<std::string> curves;
      std::string cur;
      bool quoted = false;
      for (char ch : joined.substr(5)) {
        if (ch == '\'') quoted = !quoted;
        if (ch == ',' && !quoted) {
          curves.push_back(cur);
          cur.clear();
        } else {
          cur += ch;
        }
      }
      curves.push_back(cur);
      plots.push_back(curves);
    }
    joined.clear();
  }
  return plots;
}

std::string Field(const std::string& curve, const std::string& key) {
  std::smatch m;
  if (std::regex_search(curve, m, std::regex(" " + key + " (rgb '[^']*'|[0-9.]+)"))) return m[1];
  return "";
}

PredictionReport FourFrameworksTwoPrecisions() {
  PredictionReport r;
  for (Framework f : {Framework::kPytorchEager, Framework::kTorchscript, Framework::kCudaGraph,
                      Framework::kLibtorchEager})
    for (DType d : {DType::kFloat16, DType::kFloat32})
      for (int64_t b : {1, 2, 4, 8}) {
        PredictionPoint p;
        p.framework = f;
        p.precision = d;
        p.batch = b;
        p.latency_ms = 1 + b;
        p.interval_lo_ms = 0.9 + b;
        p.interval_hi_ms = 1.1 + b;
        p.framework_ms = 1;
        p.compute_ms = 0.5 * b;
        r.points.push_back(p);
      }
  return r;
}

TEST(PredictionPlotTest, OneKeyOutsideTheDataListingColoursAndDashTypesOnce) {
  const GnuplotJob job = PredictionPlotJob(FourFrameworksTwoPrecisions(), "bert-base on H200");
  EXPECT_EQ(Count(job.script, "\nset key"), 1u) << job.script;
  EXPECT_NE(job.script.find("set key outside right top"), std::string::npos) << job.script;
  const auto plots = PlotCommands(job.script);
  ASSERT_EQ(plots.size(), 1u);
  // 8 series x 3 curves, none with a key entry of its own; the key lists 4 frameworks,
  // 2 precisions, 3 kinds of curve and 3 headings.
  size_t data_curves = 0, titled = 0;
  for (const std::string& c : plots[0]) {
    if (c.find("index") != std::string::npos) {
      ++data_curves;
      EXPECT_NE(c.find("notitle"), std::string::npos) << c;
    } else if (c.find(" title ") != std::string::npos) {
      ++titled;
    }
  }
  EXPECT_EQ(data_curves, 24u);
  EXPECT_EQ(titled, 4u + 2u + 3u + 3u);
  for (const char* name : {"'pytorch-eager'", "'torchscript'", "'cuda-graph'", "'libtorch-eager'", "'fp16'", "'fp32'"})
    EXPECT_EQ(Count(job.script, name), 1u) << name;
}

TEST(PredictionPlotTest, FrameworksByColourPrecisionsByDashType) {
  const PredictionReport r = FourFrameworksTwoPrecisions();
  const GnuplotJob job = PredictionPlotJob(r, "t");
  // Latency curves ("using 1:2:3:4") in data order: series i is framework i / 2, precision i % 2.
  const auto plots = PlotCommands(job.script);
  ASSERT_EQ(plots.size(), 1u);
  std::vector<std::pair<std::string, std::string>> style;
  for (const std::string& c : plots[0])
    if (c.find("using 1:2:3:4") != std::string::npos) style.push_back({Field(c, "lc"), Field(c, "dt")});
  ASSERT_EQ(style.size(), 8u);
  std::set<std::string> colours, dashes;
  std::set<std::pair<std::string, std::string>> pairs;
  for (size_t i = 0; i < style.size(); ++i) {
    ASSERT_FALSE(style[i].first.empty());
    ASSERT_FALSE(style[i].second.empty());
    colours.insert(style[i].first);
    dashes.insert(style[i].second);
    pairs.insert(style[i]);
    EXPECT_EQ(style[i].first, style[i - i % 2].first) << "one colour per framework";
    EXPECT_EQ(style[i].second, style[i % 2].second) << "one dash type per precision";
  }
  EXPECT_EQ(colours.size(), 4u);
  EXPECT_EQ(dashes.size(), 2u);
  EXPECT_EQ(pairs.size(), 8u) << "every series looks different";
  // The three curves of a series share its colour and dash type and differ in marker.
  std::set<std::string> markers;
  for (const std::string& c : plots[0])
    if (c.find("index 0 ") != std::string::npos) {
      EXPECT_EQ(Field(c, "lc"), style[0].first);
      EXPECT_EQ(Field(c, "dt"), style[0].second);
      markers.insert(Field(c, "pt"));
    }
  EXPECT_EQ(markers.size(), 3u);
}

TEST(PredictionPlotTest, CrossoversAtNearbyBatchesShareOneLabel) {
  PredictionReport r = FourFrameworksTwoPrecisions();
  r.crossovers = {{Framework::kTorchscript, DType::kFloat16, 16, 128},
                  {Framework::kCudaGraph, DType::kFloat16, 16, 128},
                  {Framework::kPytorchEager, DType::kFloat16, 17, 128},
                  {Framework::kLibtorchEager, DType::kFloat32, 64, 128},
                  {Framework::kCudaGraph, DType::kFloat32, std::nullopt, 128},
                  {Framework::kLibtorchEager, DType::kFloat16, 1, 128}};
  const GnuplotJob job = PredictionPlotJob(r, "t");
  EXPECT_EQ(Count(job.script, "set arrow"), 5u);
  EXPECT_EQ(Count(job.script, "set label"), 3u) << job.script;
  // At the smallest batch the label goes right of its line, away from the y tic labels.
  EXPECT_NE(job.script.find("'crossover: libtorch-eager fp16' at 1, graph 0.98 rotate by 90 right offset 1.6,0"),
            std::string::npos) << job.script;
  EXPECT_NE(job.script.find("'crossover: torchscript fp16 b16, cuda-graph fp16 b16, pytorch-eager fp16 b17'"),
            std::string::npos) << job.script;
  EXPECT_NE(job.script.find("'crossover: libtorch-eager fp32' at 64, graph 0.98 rotate by 90 right offset -0.8,0"),
            std::string::npos) << job.script;
  EXPECT_NE(job.script.find("title 'crossover batch'"), std::string::npos);
}

TEST(PredictionPlotTest, LongTitlesAreShortenedAndLabelsStayLiterals) {
  const GnuplotJob job = PredictionPlotJob(FourFrameworksTwoPrecisions(), std::string(300, 'm') + "'; system('id')");
  EXPECT_EQ(Lines(job.script)[0], "set title '" + std::string(107, 'm') + "...' noenhanced font ',11'");
}

ValidationRow Row(const std::string& model, const std::string& fw, const std::string& prec, int64_t batch) {
  ValidationRow v;
  v.model = model;
  v.framework = fw;
  v.precision = prec;
  v.batch = batch;
  v.measured_ms = v.measured_p10 = v.measured_p90 = 1.0 + batch;
  v.predicted.latency_ms = 1.1 + batch;
  v.predicted.interval_lo_ms = 1.0 + batch;
  v.predicted.interval_hi_ms = 1.2 + batch;
  return v;
}

ValidationReport ThreeModels() {
  ValidationReport r;
  for (const char* m : {"bert-base", "gpt2", "resnet50"})
    for (const char* fw : {"torchscript", "cuda-graph", "pytorch-eager", "onnxruntime"})
      for (const char* p : {"fp16", "fp32"})
        for (int64_t b : {1, 8, 64}) r.rows.push_back(Row(m, fw, p, b));
  return r;
}

TEST(ValidationPlotTest, PanelsHaveNoKeyAndOneKeySitsBesideThem) {
  Expected<GnuplotJob> job = ValidationPlotJob(ThreeModels());
  ASSERT_TRUE(job.ok()) << job.status().message();
  const std::string& s = job->script;
  // 6 panels (3 models x 2 precisions) in 2 columns, then the key.
  const auto plots = PlotCommands(s);
  ASSERT_EQ(plots.size(), 7u);
  EXPECT_EQ(Count(s, "\nset key"), 1u);
  const size_t unset = s.find("unset key"), key = s.find("set key inside"), first_plot = s.find("\nplot ");
  ASSERT_NE(unset, std::string::npos);
  ASSERT_NE(key, std::string::npos);
  EXPECT_LT(unset, first_plot) << "no panel draws a key of its own";
  EXPECT_GT(key, s.rfind("\nplot ", s.rfind("\nplot ") - 1)) << "the key comes after the last panel";
  for (size_t i = 0; i + 1 < plots.size(); ++i)
    for (const std::string& c : plots[i]) EXPECT_NE(c.find("notitle"), std::string::npos) << c;
  // The key's plot has only NaN entries, and its origin is right of every panel.
  for (const std::string& c : plots.back()) EXPECT_EQ(c.find("index"), std::string::npos) << c;
  std::smatch m;
  std::vector<double> xs;
  std::string rest = s;
  while (std::regex_search(rest, m, std::regex("set origin ([0-9.e-]+),"))) {
    xs.push_back(std::stod(m[1]));
    rest = m.suffix();
  }
  ASSERT_EQ(xs.size(), 7u);
  const double panels_right = 2 * 560.0 / job->size.width;
  for (size_t i = 0; i + 1 < xs.size(); ++i) EXPECT_LT(xs[i], panels_right);
  EXPECT_NEAR(xs.back(), panels_right, 1e-4);
  EXPECT_EQ(job->size.width, 2 * 560 + 320);
  EXPECT_EQ(job->size.height, 3 * 380);
}

TEST(ValidationPlotTest, FrameworksByColourPrecisionsByDashTypeAndMarkerInEveryPanel) {
  Expected<GnuplotJob> job = ValidationPlotJob(ThreeModels());
  ASSERT_TRUE(job.ok());
  const auto plots = PlotCommands(job->script);
  std::map<std::string, std::set<std::string>> dash_by_prec, marker_by_prec;
  std::set<std::string> colours;
  // Panels come in (model, precision) order: fp16 before fp32 for each model.
  for (size_t i = 0; i + 1 < plots.size(); ++i) {
    const std::string prec = i % 2 == 0 ? "fp16" : "fp32";
    std::set<std::string> panel_colours;
    for (const std::string& c : plots[i]) {
      if (c.find("using 1:5 ") != std::string::npos) {
        dash_by_prec[prec].insert(Field(c, "dt"));
        panel_colours.insert(Field(c, "lc"));
      }
      if (c.find("yerrorbars") != std::string::npos) marker_by_prec[prec].insert(Field(c, "pt"));
    }
    EXPECT_EQ(panel_colours.size(), 4u) << "four frameworks, four colours";
    if (colours.empty()) colours = panel_colours;
    EXPECT_EQ(panel_colours, colours) << "a framework has the same colour in every panel";
  }
  ASSERT_EQ(dash_by_prec["fp16"].size(), 1u);
  ASSERT_EQ(dash_by_prec["fp32"].size(), 1u);
  EXPECT_NE(*dash_by_prec["fp16"].begin(), *dash_by_prec["fp32"].begin());
  EXPECT_EQ(*dash_by_prec["fp32"].begin(), "1") << "fp32 is drawn solid";
  ASSERT_EQ(marker_by_prec["fp16"].size(), 1u);
  ASSERT_EQ(marker_by_prec["fp32"].size(), 1u);
  EXPECT_NE(*marker_by_prec["fp16"].begin(), *marker_by_prec["fp32"].begin());
}

TEST(ValidationPlotTest, TooManyPanelsOrNoneAreRefused) {
  EXPECT_FALSE(ValidationPlotJob(ValidationReport{}).ok());
  ValidationReport many;
  for (int i = 0; i < 65; ++i) many.rows.push_back(Row("m" + std::to_string(i), "torchscript", "fp16", 1));
  Expected<GnuplotJob> job = ValidationPlotJob(many);
  ASSERT_FALSE(job.ok());
  EXPECT_NE(job.status().message().find("65 panels"), std::string::npos);
}

TEST(PlotPathTest, ExtensionPicksTheFormatAndUnknownOnesAreRefused) {
  EXPECT_EQ(PlotFormatOf("a.svg").value(), PlotFormat::kSvg);
  EXPECT_EQ(PlotFormatOf("dir.x/a.PNG").value(), PlotFormat::kPng);
  EXPECT_EQ(PlotFormatOf("it's a plot.pdf").value(), PlotFormat::kPdf);
  for (const char* bad : {"plot.jpg", "plot", "dir.svg/plot", ".svg", "plot.svg.gz"}) {
    Expected<PlotFormat> f = PlotFormatOf(bad);
    ASSERT_FALSE(f.ok()) << bad;
    EXPECT_EQ(f.status().code(), ErrorCode::kInvalidInput);
    const std::string& msg = f.status().message();
    EXPECT_NE(msg.find(std::string("'") + bad + "'"), std::string::npos) << msg;
    for (const char* ext : {".svg", ".png", ".pdf"}) EXPECT_NE(msg.find(ext), std::string::npos) << msg;
  }
  EXPECT_STREQ(GnuplotTerminal(PlotFormat::kPdf), "pdfcairo");
  EXPECT_STREQ(GnuplotTerminal(PlotFormat::kPng), "pngcairo");
  EXPECT_STREQ(GnuplotTerminal(PlotFormat::kSvg), "svg");
}

}  // namespace
}  // namespace ftax::cli
