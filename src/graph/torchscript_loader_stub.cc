// The part of the TorchScript front end that needs no LibTorch (LooksLikeTorchScript), and the
// whole front end in a build without LibTorch, where every call explains what is missing.
#include "graph/torchscript_loader.h"

#include <fstream>

namespace ftax {

bool LooksLikeTorchScript(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  return in.gcount() == 4 && magic[0] == 'P' && magic[1] == 'K' && magic[2] == 3 && magic[3] == 4;
}

#ifndef FTAX_HAVE_TORCH

bool TorchScriptLoaderAvailable() { return false; }

struct TorchScriptModel::Impl {};

Expected<TorchScriptModel> TorchScriptModel::Load(const std::string& path) {
  return Unsupported(path + ": this ftax was built without LibTorch, which TorchScript files "
                            "need (install libtorch-dev, or point cmake at the PyTorch wheel's "
                            "LibTorch with -DTorch_DIR=..., then re-run cmake)");
}

const std::vector<std::string>& TorchScriptModel::input_names() const {
  static const std::vector<std::string> kNone;
  return kNone;
}

const std::string& TorchScriptModel::path() const {
  static const std::string kNone;
  return kNone;
}

Expected<Graph> TorchScriptModel::Walk(const std::vector<InputShapeFlag>&,
                                       const TorchScriptWalkOptions&) const {
  return Unsupported("this ftax was built without LibTorch");
}

#endif  // FTAX_HAVE_TORCH

}  // namespace ftax
