// `mobilenet` generator: not built yet.
#include "graph/graph_builder.h"

namespace ftax {
namespace arch {

Status BuildMobilenet(const ArchParams& p, Graph* g) {
  return Unsupported("family 'mobilenet' is not built yet");
}

}  // namespace arch
}  // namespace ftax
