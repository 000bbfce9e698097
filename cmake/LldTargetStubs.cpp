// The bundle (cmake/KilnBundle.cmake) links LLVM's X86 and NVPTX targets
// only. lld's ELF driver, which the CPU backend runs in process to link its
// kernel objects, initialises every target LLVM was built with, for
// link-time optimisation kiln never asks of it. These empty initialisers
// stand in for the targets left out (weak, so a target linked in wins): lld
// then finds them unregistered, which only LTO would notice.
#define KILN_UNUSED_TARGET(T)                                                  \
  __attribute__((weak)) void LLVMInitialize##T##TargetInfo() {}                \
  __attribute__((weak)) void LLVMInitialize##T##Target() {}                    \
  __attribute__((weak)) void LLVMInitialize##T##TargetMC() {}                  \
  __attribute__((weak)) void LLVMInitialize##T##AsmPrinter() {}                \
  __attribute__((weak)) void LLVMInitialize##T##AsmParser() {}

extern "C" {
KILN_UNUSED_TARGET(AArch64)
KILN_UNUSED_TARGET(AMDGPU)
KILN_UNUSED_TARGET(ARM)
KILN_UNUSED_TARGET(AVR)
KILN_UNUSED_TARGET(BPF)
KILN_UNUSED_TARGET(Hexagon)
KILN_UNUSED_TARGET(Lanai)
KILN_UNUSED_TARGET(LoongArch)
KILN_UNUSED_TARGET(M68k)
KILN_UNUSED_TARGET(MSP430)
KILN_UNUSED_TARGET(Mips)
KILN_UNUSED_TARGET(PowerPC)
KILN_UNUSED_TARGET(RISCV)
KILN_UNUSED_TARGET(SPIRV)
KILN_UNUSED_TARGET(Sparc)
KILN_UNUSED_TARGET(SystemZ)
KILN_UNUSED_TARGET(VE)
KILN_UNUSED_TARGET(WebAssembly)
KILN_UNUSED_TARGET(XCore)
KILN_UNUSED_TARGET(Xtensa)
}
