// Which library runs attention thunks (AttentionRunner.h).
#include "runtime/cuda/AttentionRunner.h"

#include <cstdlib>

namespace kiln::runtime::cuda {

AttentionLibrary attentionLibraryFromEnvironment() {
  const char *choice = std::getenv("KILN_CUDA_ATTENTION");
  return choice && std::string_view(choice) == "cudnn" ? AttentionLibrary::cudnn
                                                       : AttentionLibrary::kiln;
}

} // namespace kiln::runtime::cuda
