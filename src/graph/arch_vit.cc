// `vit` generator: not built yet.
#include "graph/graph_builder.h"

namespace ftax {
namespace arch {

Status BuildVit(const ArchParams& p, Graph* g) {
  return Unsupported("family 'vit' is not built yet");
}

}  // namespace arch
}  // namespace ftax
