// Benchmarks of `ftax inspect`'s library path: load + bind + infer + count.
//
//   BM_InspectFixture/bert_base   structure-only BERT-base (tests/data/onnx, external data dropped)
//   BM_InspectInlineWeights       a ~1 GB single-file ONNX with every weight inline (generated in
//                                 /tmp on first use by a child process, deleted at exit)
//   BM_InspectExternalWeights     the same graph with its weights as external data (the data
//                                 file is never written): time must not depend on weight size
//
// Counters: file_MB, and peak_rss_MB of this process (ru_maxrss; the generator runs in a
// forked child so its memory is not counted). Targets: <= 2 s and peak memory
// <= 1.2x file size for the 1 GB file.
//
//   build-onnx/bench/inspect_onnx_bench --benchmark_min_time=1
//   FTAX_BENCH_ONNX_MB=2048 build-onnx/bench/inspect_onnx_bench   (a file over 2 GB)
#include <benchmark/benchmark.h>
#include <onnx/onnx_pb.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "graph/graph_stats.h"
#include "graph/onnx_loader.h"

namespace {

double PeakRssMb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024.0;  // KiB on Linux
}

double FileMb(const std::string& path) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  return f.good() ? static_cast<double>(f.tellg()) / (1024.0 * 1024.0) : 0;
}

// One load + bind + infer + count; returns the MACs (negative after reporting an error).
double InspectOnce(benchmark::State& state, const std::string& path, const ftax::DimBindings& dims) {
  ftax::Expected<ftax::Graph> g = ftax::LoadOnnxFile(path);
  if (!g.ok()) {
    state.SkipWithError(g.status().message().c_str());
    return -1;
  }
  ftax::Status s = ftax::PrepareGraph(&g.value(), dims, {});
  if (!s.ok()) {
    state.SkipWithError(s.message().c_str());
    return -1;
  }
  ftax::Expected<ftax::GraphStats> st = ftax::ComputeStats(g.value());
  if (!st.ok()) {
    state.SkipWithError(st.status().message().c_str());
    return -1;
  }
  return st->totals.macs;
}

void BM_InspectFixture(benchmark::State& state, const char* name) {
  std::string path = std::string(FTAX_TEST_DATA) + "/onnx/" + name + ".onnx";
  if (FileMb(path) == 0) {
    state.SkipWithError(("fixture absent: " + path).c_str());
    return;
  }
  double macs = 0;
  for (auto _ : state) macs = InspectOnce(state, path, {{"batch", 1}, {"seq", 128}});
  state.SetLabel("GMACs=" + std::to_string(macs / 1e9));
  state.counters["file_MB"] = FileMb(path);
  state.counters["peak_rss_MB"] = PeakRssMb();
}
BENCHMARK_CAPTURE(BM_InspectFixture, bert_base, "bert_base")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_InspectFixture, resnet50, "resnet50")->Unit(benchmark::kMillisecond);

void PutVarint(std::ostream& f, uint64_t v) {
  while (v >= 0x80) {
    f.put(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  f.put(static_cast<char>(v));
}

// Writes one length-delimited field (tag `field`, wire type 2) holding `bytes`.
uint64_t PutField(std::ostream& f, int field, const std::string& bytes) {
  std::ostringstream head;
  head.put(static_cast<char>((field << 3) | 2));
  PutVarint(head, bytes.size());
  f << head.str();
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return head.str().size() + bytes.size();
}

// A stack of `layers` blocks (MatMul with a hidden x hidden weight, Add bias, Gelu,
// LayerNormalization) whose weights total about `megabytes`. The GraphProto is streamed field
// by field (protobuf cannot serialize a message over 2 GB in one piece), one weight in memory
// at a time.
void WriteModel(const std::string& path, int64_t megabytes, bool inline_weights) {
  const int64_t hidden = 4096;
  const int64_t weight_bytes = hidden * hidden * 4;  // 64 MiB per layer
  int64_t layers = std::max<int64_t>(1, megabytes * 1024 * 1024 / weight_bytes);
  std::string body_path = path + ".graph";
  uint64_t body_size = 0;
  {
    std::ofstream body(body_path, std::ios::binary);
    onnx::GraphProto g;  // only the small fields; initializers are written one at a time
    g.set_name("mlp_stack");
    auto* in = g.add_input();
    in->set_name("x");
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    tt->mutable_shape()->add_dim()->set_dim_param("batch");
    tt->mutable_shape()->add_dim()->set_dim_value(hidden);
    std::string prev = "x";
    for (int64_t l = 0; l < layers; ++l) {
      std::string p = "/layer." + std::to_string(l) + "/";
      auto add_init = [&](const std::string& name, std::vector<int64_t> dims) {
        onnx::TensorProto t;
        t.set_name(name);
        t.set_data_type(onnx::TensorProto::FLOAT);
        int64_t n = 1;
        for (int64_t d : dims) {
          t.add_dims(d);
          n *= d;
        }
        if (inline_weights) {
          t.mutable_raw_data()->assign(static_cast<size_t>(n * 4), '\0');
        } else {
          t.set_data_location(onnx::TensorProto::EXTERNAL);
          auto* e = t.add_external_data();
          e->set_key("location");
          e->set_value("weights_not_written.bin");
        }
        body_size += PutField(body, 5, t.SerializeAsString());  // GraphProto.initializer
      };
      add_init(p + "w", {hidden, hidden});
      add_init(p + "b", {hidden});
      add_init(p + "gamma", {hidden});
      auto node = [&](const char* type, std::vector<std::string> ins, const std::string& out) {
        auto* n = g.add_node();
        n->set_op_type(type);
        n->set_name(p + type);
        for (auto& i : ins) n->add_input(i);
        n->add_output(out);
      };
      node("MatMul", {prev, p + "w"}, p + "mm");
      node("Add", {p + "mm", p + "b"}, p + "add");
      node("Gelu", {p + "add"}, p + "gelu");
      node("LayerNormalization", {p + "gelu", p + "gamma"}, p + "out");
      prev = p + "out";
    }
    g.add_output()->set_name(prev);
    std::string rest = g.SerializeAsString();
    body.write(rest.data(), static_cast<std::streamsize>(rest.size()));
    body_size += rest.size();
  }
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("ftax bench/inspect_onnx_bench.cc");
  m.add_opset_import()->set_version(17);
  std::ofstream f(path, std::ios::binary);
  f << m.SerializeAsString();
  f.put(static_cast<char>((7 << 3) | 2));  // ModelProto.graph
  PutVarint(f, body_size);
  std::ifstream body(body_path, std::ios::binary);
  f << body.rdbuf();
  body.close();
  std::remove(body_path.c_str());
}

// Generates the model in a forked child so that its memory does not count in our peak RSS.
std::string Generated(bool inline_weights) {
  static std::string paths[2];
  std::string& path = paths[inline_weights ? 1 : 0];
  if (!path.empty()) return path;
  const char* env = std::getenv("FTAX_BENCH_ONNX_MB");
  int64_t mb = env ? std::atoll(env) : 1024;
  path = std::string("/tmp/ftax_bench_") + std::to_string(::getpid()) +
         (inline_weights ? "_inline.onnx" : "_external.onnx");
  pid_t pid = fork();
  if (pid == 0) {
    WriteModel(path, mb, inline_weights);
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  std::atexit([] {
    for (const auto& p : paths)
      if (!p.empty()) std::remove(p.c_str());
  });
  return path;
}

void BM_InspectInlineWeights(benchmark::State& state) {
  std::string path = Generated(true);
  double rss_before = PeakRssMb();
  double macs = 0;
  for (auto _ : state) macs = InspectOnce(state, path, {{"batch", 1}});
  state.SetLabel("GMACs=" + std::to_string(macs / 1e9));
  state.counters["file_MB"] = FileMb(path);
  state.counters["peak_rss_MB"] = PeakRssMb();
  state.counters["rss_growth_MB"] = PeakRssMb() - rss_before;
}
BENCHMARK(BM_InspectInlineWeights)->Unit(benchmark::kMillisecond)->Iterations(5);

void BM_InspectExternalWeights(benchmark::State& state) {
  std::string path = Generated(false);
  double macs = 0;
  for (auto _ : state) macs = InspectOnce(state, path, {{"batch", 1}});
  state.SetLabel("GMACs=" + std::to_string(macs / 1e9));
  state.counters["file_MB"] = FileMb(path);
  state.counters["peak_rss_MB"] = PeakRssMb();
}
BENCHMARK(BM_InspectExternalWeights)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
