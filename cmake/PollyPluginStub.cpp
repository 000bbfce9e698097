// libLLVMLTO.a (which lld's static library pulls in) calls
// getPollyPluginInfo(), which Debian's LLVM defines only inside libLLVM.so.
// kiln never loads Polly: an empty plugin satisfies the reference.
#include "llvm/Plugins/PassPlugin.h"

llvm::PassPluginLibraryInfo getPollyPluginInfo() { return {}; }
