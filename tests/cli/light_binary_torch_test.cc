// The light `ftax` (no LibTorch linked) and its hand-off to the full binary, ftax-torch: the
// light binary's ELF file needs no LibTorch, CUDA or CUPTI library; TorchScript files, bench
// and validate still work through it; a missing full binary is a clear error (exit 2) naming
// where it was looked for; and NeedsLibTorch reads a command line exactly.
#include <elf.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../ftax_cli_run.h"
#include "calibrate/helper_scripts.h"
#include "cli/torch_handoff.h"

namespace {

namespace fs = std::filesystem;
using ::ftax::testing::CliRun;
using ::ftax::testing::RunCli;
using ::ftax::testing::SlurpFile;

const std::string kCnn = "tests/data/torchscript/tiny_cnn.v113.pt";
const std::string kProfile = "validation/h200/2026-11-22b/profile.json";

// The DT_NEEDED entries of a 64-bit ELF file, read from its dynamic section.
std::vector<std::string> NeededLibraries(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> out;
  Elf64_Ehdr eh;
  if (b.size() < sizeof(eh)) return out;
  std::memcpy(&eh, b.data(), sizeof(eh));
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64) return out;
  auto section = [&](size_t i) {
    Elf64_Shdr sh{};
    const size_t at = eh.e_shoff + i * eh.e_shentsize;
    if (at + sizeof(sh) <= b.size()) std::memcpy(&sh, b.data() + at, sizeof(sh));
    return sh;
  };
  for (size_t i = 0; i < eh.e_shnum; ++i) {
    const Elf64_Shdr dyn = section(i);
    if (dyn.sh_type != SHT_DYNAMIC) continue;
    const Elf64_Shdr str = section(dyn.sh_link);
    for (size_t at = dyn.sh_offset; at + sizeof(Elf64_Dyn) <= dyn.sh_offset + dyn.sh_size && at + sizeof(Elf64_Dyn) <= b.size();
         at += sizeof(Elf64_Dyn)) {
      Elf64_Dyn d;
      std::memcpy(&d, b.data() + at, sizeof(d));
      if (d.d_tag == DT_NULL) break;
      if (d.d_tag == DT_NEEDED && str.sh_offset + d.d_un.d_val < b.size())
        out.emplace_back(b.c_str() + str.sh_offset + d.d_un.d_val);
    }
  }
  return out;
}

bool NeedsAny(const std::vector<std::string>& needed, const std::vector<std::string>& prefixes) {
  for (const auto& n : needed)
    for (const auto& p : prefixes)
      if (n.rfind(p, 0) == 0) return true;
  return false;
}

// Runs `binary args` from the source directory.
// A temporary folder, removed with everything in it.
struct TempDir {
  fs::path path;
  TempDir() {
    char name[] = "/tmp/ftax-light-XXXXXX";
    path = mkdtemp(name);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

TEST(LightBinary, LinksNoLibTorchCudaOrCupti) {
  const std::vector<std::string> light = NeededLibraries(FTAX_BINARY);
  ASSERT_FALSE(light.empty()) << FTAX_BINARY << ": no DT_NEEDED entries read";
  const std::vector<std::string> heavy = {"libtorch", "libc10", "libcuda", "libcupti", "libcublas", "libnvrtc"};
  for (const auto& n : light) EXPECT_FALSE(NeedsAny({n}, heavy)) << FTAX_BINARY << " needs " << n;
  // The same reader sees LibTorch in the full binary, so the check above can fail.
  EXPECT_TRUE(NeedsAny(NeededLibraries(FTAX_TORCH_BINARY), {"libtorch", "libc10"})) << FTAX_TORCH_BINARY;
}

TEST(LightBinary, HandsTorchScriptPredictionsToTheFullBinary) {
  CliRun r = RunCli(FTAX_BINARY, "predict " + kCnn + " --input-shape 1x3x32x32 --profile " + kProfile +
                                  " --framework pytorch-eager --batch 1,8 --format json");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["predictions"].size(), 2u) << r.out.substr(0, 400);
  // The full binary's output, byte for byte.
  CliRun full = RunCli(FTAX_TORCH_BINARY, "predict " + kCnn + " --input-shape 1x3x32x32 --profile " + kProfile +
                                           " --framework pytorch-eager --batch 1,8 --format json");
  EXPECT_EQ(r.out, full.out);
  // --opt=value spelling and the model after the options; its exit code passes through.
  r = RunCli(FTAX_BINARY, "inspect --format=json " + kCnn);
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_NE(r.err.find("--input-shape"), std::string::npos) << r.err;
  // compare: any of several models.
  r = RunCli(FTAX_BINARY, "compare arch:resnet:blocks=1 " + kCnn + " --profile " + kProfile + " --batch 1 --dim batch=1");
  EXPECT_NE(r.rc, 3) << r.err;
  EXPECT_EQ(r.err.find("without LibTorch"), std::string::npos) << r.err;
}

TEST(LightBinary, MissingFullBinaryIsAClearError) {
  TempDir t;
  fs::create_directories(t.path / "bin");
  const fs::path light = t.path / "bin" / "ftax";
  fs::copy_file(FTAX_BINARY, light);
  // What needs no LibTorch runs without the full binary.
  EXPECT_EQ(RunCli(light.string(), "--version").rc, 0);
  CliRun r = RunCli(light.string(), "predict --arch bert --profile " + kProfile + " --batch 1");
  EXPECT_EQ(r.rc, 0) << r.err;
  r = RunCli(light.string(), "inspect tests/data/onnx/tiny_cnn.onnx --dim N=1");
  EXPECT_EQ(r.rc, 0) << r.err;
  // What does is exit code 2, naming the places looked at.
  for (const std::string& args : {"predict " + kCnn + " --input-shape 1x3x32x32 --profile " + kProfile,
                                   std::string("bench -o /dev/null --quick"),
                                   "validate --measured nothing.json --profile " + kProfile}) {
    r = RunCli(light.string(), args);
    EXPECT_EQ(r.rc, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find("needs LibTorch"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find((t.path / "bin" / "libexec" / "ftax" / "ftax-torch").string()), std::string::npos) << r.err;
    EXPECT_NE(r.err.find((t.path / "bin" / ".." / "libexec" / "ftax" / "ftax-torch").string()), std::string::npos)
        << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  // Installed layout: PREFIX/bin/ftax hands off to PREFIX/libexec/ftax/ftax-torch.
  fs::create_directories(t.path / "libexec" / "ftax");
  fs::create_symlink(FTAX_TORCH_BINARY, t.path / "libexec" / "ftax" / "ftax-torch");
  r = RunCli(light.string(), "predict " + kCnn + " --input-shape 1x3x32x32 --profile " + kProfile + " --batch 1 --format json");
  EXPECT_EQ(r.rc, 0) << r.err;
}

TEST(LightBinary, FullBinaryFindsTheHelpersBesideItself) {
  // ftax-torch lives in BUILD/libexec/ftax/, with the Python helpers.
  ftax::Expected<std::string> p = ftax::FindHelperScript("bench_eager.py", FTAX_TORCH_BINARY);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(fs::path(p.value()).parent_path(), fs::path(FTAX_TORCH_BINARY).parent_path());
  ftax::Expected<std::string> full = ftax::FindHelperProgram("ftax-torch", FTAX_BINARY);
  ASSERT_TRUE(full.ok()) << full.status().message();
  EXPECT_TRUE(fs::equivalent(full.value(), FTAX_TORCH_BINARY));
}

// A command line like ftax's: NeedsLibTorch with a stand-in setup.
struct Fake {
  std::string model, arch, profile, out;
  std::vector<std::string> models;
  int ran = 0;
};

std::string Needs(std::vector<std::string> args, const std::shared_ptr<Fake>& f) {
  args.insert(args.begin(), "ftax");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  return ftax::cli::NeedsLibTorch(static_cast<int>(argv.size()), argv.data(), [f](CLI::App& app) {
    app.require_subcommand(1);
    app.set_version_flag("--version", "ftax test");
    CLI::App* p = app.add_subcommand("predict");
    p->add_option("model", f->model);
    p->add_option("--arch", f->arch);
    p->add_option("--profile", f->profile);
    p->add_option("-o,--output", f->out);
    p->callback([f] { ++f->ran; });
    CLI::App* c = app.add_subcommand("compare");
    c->add_option("models", f->models)->required();
    c->callback([f] { ++f->ran; });
    CLI::App* b = app.add_subcommand("bench");
    b->add_option("-o,--output", f->out)->required();
    b->callback([f] { ++f->ran; });
    app.add_subcommand("validate")->callback([f] { ++f->ran; });
  });
}

TEST(NeedsLibTorch, ReadsTheCommandLineExactlyAndRunsNothing) {
  TempDir t;
  const std::string zip = (t.path / "model.bin").string();  // TorchScript by content, not by name
  fs::copy_file(fs::path(FTAX_SOURCE_DIR) / kCnn, zip);
  const std::string onnx = std::string(FTAX_SOURCE_DIR) + "/tests/data/onnx/tiny_cnn.onnx";
  auto f = std::make_shared<Fake>();
  EXPECT_EQ(Needs({"predict", zip, "--profile", "h200"}, f), "predict");
  EXPECT_EQ(Needs({"predict", "--profile", "h200", zip}, f), "predict");
  EXPECT_EQ(Needs({"predict", "--profile=h200", "--arch=x", "--output=" + zip}, f), "predict");
  EXPECT_EQ(Needs({"predict", onnx, "--profile", "h200"}, f), "");
  EXPECT_EQ(Needs({"predict", "--arch", "bert", "--profile", "h200"}, f), "");
  EXPECT_EQ(Needs({"compare", "arch:bert", onnx, zip}, f), "compare");
  EXPECT_EQ(Needs({"compare", "arch:bert", onnx}, f), "");
  EXPECT_EQ(Needs({"bench", "-o", "m.json"}, f), "bench");
  EXPECT_EQ(Needs({"validate"}, f), "validate");
  // Help, version and bad command lines stay in the light binary, which answers them.
  EXPECT_EQ(Needs({"bench", "--help"}, f), "");
  EXPECT_EQ(Needs({"--version"}, f), "");
  EXPECT_EQ(Needs({"bench"}, f), "");  // -o missing
  EXPECT_EQ(Needs({"predict", zip, "--bogus"}, f), "");
  EXPECT_EQ(Needs({}, f), "");
  EXPECT_EQ(f->ran, 0) << "a command ran during NeedsLibTorch";
}

TEST(NeedsLibTorch, DoesNotWaitOnAFifo) {
  TempDir t;
  const std::string fifo = (t.path / "models").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto f = std::make_shared<Fake>();
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(Needs({"predict", fifo, "--profile", "h200"}, f), "");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

}  // namespace
