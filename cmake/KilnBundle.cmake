# KILN_BUNDLE (scripts/bundle.sh): one shared library, libkiln.so, holds all
# of kiln and the parts of LLVM and MLIR it uses, linked from their static
# archives; the programs that travel link only that library. Debian's
# libLLVM.so and libMLIR.so (380 MB with ICU, libxml2, z3 and every LLVM
# target) stay behind: a static archive gives only the objects something
# references, so the X86 and NVPTX targets come in and no other.
#
# kiln's own static libraries go in whole, so every symbol a program may
# call is there; LLVM and MLIR come in through those libraries' link
# interfaces (KILN_LLVM_LIBS). Each archive ends up in exactly one shared
# object: LLVM's global option registry aborts when it sees a second copy.

set(KILN_BUNDLE_LIBRARIES KilnSupport KilnIR KilnReference KilnPasses
  KilnPipeline KilnSignature KilnRuntime KilnCudaRuntime KilnCpuCodegen
  KilnCompiler KilnCachedCompiler KilnLazy KilnNN KilnData)
set(KILN_BUNDLE_PROGRAMS kiln-train kiln-run kiln-bench kilnc
  CudaRuntimeTest CudaRandomGraphTest CudaBackendTest CudaFlashAttentionTest
  NumericsTest LlamaTest)

add_library(kiln SHARED ${CMAKE_SOURCE_DIR}/cmake/PollyPluginStub.cpp
  ${CMAKE_SOURCE_DIR}/cmake/LldTargetStubs.cpp
  ${CMAKE_SOURCE_DIR}/cmake/BundleToolSymbols.cpp)
set(archives "")
set(present "")
foreach(lib ${KILN_BUNDLE_LIBRARIES})
  if(TARGET ${lib})
    list(APPEND archives $<TARGET_FILE:${lib}>)
    list(APPEND present ${lib})
  endif()
endforeach()
# The archives whole, then the libraries as targets: that second mention
# pulls nothing new but brings their link interfaces (LLVM, MLIR, lld,
# Abseil, oneDNN, ...). CMake's WHOLE_ARCHIVE feature cannot be used: it
# refuses a library that also appears without it, as each does through
# the others' interfaces.
target_link_libraries(kiln PRIVATE
  -Wl,--whole-archive ${archives} -Wl,--no-whole-archive ${present})
add_dependencies(kiln ${present})
# A library must not keep undefined references a program would trip on
# at run time.
target_link_options(kiln PRIVATE -Wl,--no-undefined)

# The programs link libkiln.so instead of the static libraries (and LLVM),
# and Abseil, whose inline code in kiln's headers they call themselves.
foreach(program ${KILN_BUNDLE_PROGRAMS})
  if(TARGET ${program})
    get_target_property(libs ${program} LINK_LIBRARIES)
    list(REMOVE_ITEM libs ${KILN_BUNDLE_LIBRARIES} ${KILN_LLVM_LIBS})
    set_property(TARGET ${program} PROPERTY LINK_LIBRARIES kiln ${libs}
      absl::status absl::statusor absl::strings)
  endif()
endforeach()
