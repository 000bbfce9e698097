// The flash attention fatbin (FlashAttention.cu), embedded in the
// library with .incbin when nvcc built it (runtime/CMakeLists.txt defines
// KILN_FLASH_FATBIN_PATH then), so a relocated build carries it.
#include "runtime/cuda/AttentionRunner.h"

#include <cstddef>
#include <string_view>

namespace kiln::runtime::cuda {

#ifdef KILN_FLASH_FATBIN_PATH
__asm__(".section .rodata\n"
        ".balign 64\n"
        ".globl kiln_flash_attention_fatbin\n"
        "kiln_flash_attention_fatbin:\n"
        ".incbin \"" KILN_FLASH_FATBIN_PATH "\"\n"
        ".globl kiln_flash_attention_fatbin_end\n"
        "kiln_flash_attention_fatbin_end:\n"
        ".byte 0\n"
        ".previous\n");
extern "C" const char kiln_flash_attention_fatbin[];
extern "C" const char kiln_flash_attention_fatbin_end[];

std::string_view flashAttentionFatbin() {
  return {kiln_flash_attention_fatbin,
          static_cast<size_t>(kiln_flash_attention_fatbin_end -
                              kiln_flash_attention_fatbin)};
}
#else
std::string_view flashAttentionFatbin() { return {}; }
#endif

} // namespace kiln::runtime::cuda
