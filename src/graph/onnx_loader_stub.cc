// The ONNX front end in a build without libonnx: every call explains what is missing.
#include "graph/onnx_loader.h"

#ifndef FTAX_HAVE_ONNX

namespace ftax {

Status OnnxLoadOptions::Validate() const { return Status::Ok(); }

bool OnnxLoaderAvailable() { return false; }

Expected<Graph> LoadOnnxBuffer(const void*, size_t, const std::string& source,
                               const OnnxLoadOptions&) {
  return Unsupported(source + ": this ftax was built without libonnx (install libonnx-dev "
                     "and libprotobuf-dev, then re-run cmake)");
}

Expected<Graph> LoadOnnxFile(const std::string& path, const OnnxLoadOptions& options) {
  return LoadOnnxBuffer(nullptr, 0, path, options);
}

}  // namespace ftax

#endif  // FTAX_HAVE_ONNX
