// `resnet` generator: not built yet.
#include "graph/graph_builder.h"

namespace ftax {
namespace arch {

Status BuildResnet(const ArchParams& p, Graph* g) {
  return Unsupported("family 'resnet' is not built yet");
}

}  // namespace arch
}  // namespace ftax
