// `gpt` generator: not built yet.
#include "graph/graph_builder.h"

namespace ftax {
namespace arch {

Status BuildGpt(const ArchParams& p, Graph* g) {
  return Unsupported("family 'gpt' is not built yet");
}

}  // namespace arch
}  // namespace ftax
