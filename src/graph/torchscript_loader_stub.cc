// The part of the TorchScript front end that needs no LibTorch (LooksLikeTorchScript), and the
// whole front end where FTAX_HAVE_TORCH is not defined (a build without LibTorch, and the light
// `ftax` of a build with it, which hands TorchScript files to ftax-torch before it gets here),
// where every call explains what is missing.
#include "graph/torchscript_loader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

namespace ftax {

bool LooksLikeTorchScript(const std::string& path) {
  // Only a regular file is opened: a FIFO or a device given as a model (or as any other
  // argument the light ftax looks at, cli/torch_handoff.h) must neither make this wait nor be
  // disturbed by an open (the ONNX loader then says what the path is). O_NONBLOCK and the
  // check on the open descriptor cover a file swapped between the two.
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  char magic[4] = {};
  const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  const bool read4 = regular && ::read(fd, magic, 4) == 4;
  ::close(fd);
  return read4 && magic[0] == 'P' && magic[1] == 'K' && magic[2] == 3 && magic[3] == 4;
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
