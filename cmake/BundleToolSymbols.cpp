// libkiln.so (cmake/KilnBundle.cmake) holds the LLVM objects kiln's
// libraries reference. The programs linked against it also use a few that
// no library does; referencing them here pulls their objects in. Never
// called.
#include "llvm/Support/InitLLVM.h"

void kilnBundleToolSymbols(int argc, const char **argv) {
  llvm::InitLLVM init(argc, argv);
}
