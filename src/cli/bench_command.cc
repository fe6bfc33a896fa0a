// `ftax bench`: run the microbenchmarks of one CUDA host into a measurement file.
#include <algorithm>
#include <iostream>
#include <sstream>

#include "calibrate/bench.h"
#include "cli/commands.h"
#include "cli/sweep_args.h"

namespace ftax::cli {
namespace {

std::string CostFrameworkNames() {
  std::string out;
  for (Framework f : CostFrameworks()) out += (out.empty() ? "" : ", ") + std::string(FrameworkName(f));
  return out;
}

struct BenchCliOptions {
  int device = 0;
  std::vector<std::string> frameworks;
  std::vector<std::string> dtypes;
  std::vector<std::string> classes;
  bool quick = false;
  bool no_kernels = false;
  std::string output;
  std::string python = "python3";
  std::string layer_shapes;
  bool resume = false;
};

int RunBenchCommand(const BenchCliOptions& o) {
  BenchOptions b;
  b.device = o.device;
  b.quick = o.quick;
  b.kernels = !o.no_kernels;
  b.output = o.output;
  b.python = o.python;
  b.resume = o.resume;
  b.classes = o.classes;
  b.layer_shapes = o.layer_shapes;
  if (!o.dtypes.empty()) b.dtypes = o.dtypes;
  if (!o.frameworks.empty()) {
    auto fws = ParseFrameworkList(o.frameworks);
    if (!fws.ok()) return ReportError("bench", fws.status());
    // A framework that shares another's costs (cuda-graph-eager: cuda-graph's) is that one.
    b.frameworks.clear();
    for (Framework f : fws.value())
      if (std::find(b.frameworks.begin(), b.frameworks.end(), CostFramework(f)) == b.frameworks.end())
        b.frameworks.push_back(CostFramework(f));
  }
  for (const auto& c : o.classes)
    if (!ParseKernelClass(c))
      return ReportError("bench", InvalidInput("--classes: unknown kernel class '" + c + "'"));
  Status s = RunBench(b, [](const std::string& line) { std::cerr << "[bench] " << line << "\n"; });
  if (!s.ok()) return ReportError("bench", s);
  std::cout << "wrote " << o.output << "\n";
  return kExitOk;
}

}  // namespace

void SetupBenchCommand(CLI::App& app) {
  auto opt = std::make_shared<BenchCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bench",
      "Measure this CUDA host: GPU kernel classes over sizes and dtypes (CUPTI records) and\n"
      "CPU dispatch cost per framework (chains of tiny ops), and the host cost of one kernel\n"
      "launch (an empty kernel launched back to back). Writes a measurement file for\n"
      "`ftax calibrate`; rows are written as they are measured, so an interrupted run keeps\n"
      "every finished row (rerun with --resume to measure only what is missing). Host times\n"
      "are taken with no profiler attached; kernel records come from separate traced passes.\n"
      "It also times the convolution, pooling and layer-norm layers of real models\n"
      "(--layer-shapes). With --dtypes fp16 a run takes 2 to 3 minutes on an H100 or H200,\n"
      "layer rows and torch.compile's chains included (validation/README.md); the default three\n"
      "dtypes take longer. It prints\n"
      "\"[k of N] point, time left\" lines as it goes.");
  cmd->add_option("-o,--output", opt->output, "measurement file to write")->required();
  cmd->add_option("--device", opt->device, "CUDA device index")->capture_default_str();
  cmd->add_option("--frameworks", opt->frameworks,
                  "frameworks to measure (default all that keep costs of their own: " + CostFrameworkNames() +
                      "; cuda-graph-eager replays at cuda-graph's costs and is measured as it)")
      ->delimiter(',');
  cmd->add_option("--dtypes", opt->dtypes, "dtypes for kernel sweeps (default fp32,fp16,bf16)")
      ->delimiter(',');
  cmd->add_option("--classes", opt->classes,
                  "kernel classes to sweep (default all: gemm, conv, depthwise, attention, "
                  "elementwise, reduction, norm, copy, gather)")
      ->delimiter(',');
  cmd->add_flag("--quick", opt->quick, "fewer sizes and repetitions (well under a minute)");
  cmd->add_flag("--no-kernels", opt->no_kernels, "skip kernel sweeps, measure dispatch only");
  cmd->add_flag("--resume", opt->resume,
                "keep the rows an interrupted run already wrote to -o and measure only the rest "
                "(the file must come from this GPU)");
  cmd->add_option("--layer-shapes", opt->layer_shapes,
                  "convolution, pooling and layer-norm layers to time at real models' shapes (default: the "
                  "layer-shapes.json shipped beside ftax, made from the zoo's calibration models; "
                  "none: skip them)");
  cmd->add_option("--python", opt->python, "Python with torch for the pytorch-eager benchmark")
      ->capture_default_str();
  cmd->callback([opt] { ExitCode() = RunBenchCommand(*opt); });
}

}  // namespace ftax::cli
