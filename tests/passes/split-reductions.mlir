// kiln-split-reductions turns a reduction with few outputs and long rows
// into a tree: a full sum keeps a whole dimension in the first stage and
// reshapes the second; a column sum splits its rows by a reshape; a max of
// few long rows splits each row (50257 = 29 x 1733); f32 sums go through
// f64. Many outputs, short rows, a prime row length and integer sums are
// left alone (the negative twins). Counting as a GPU does (a thread
// per column, a warp per contiguous row), the column sum gets more parts
// and the rows of 768 stay whole. With contiguous parts (the CPU's
// form) a full sum splits its outermost dimension only, each part one
// run of memory (without, 16 parts of the 50257 x 768 sum take 48
// columns each across all the rows); a column sum, or a reduction with
// enough outputs, is left alone.
// RUN: kiln-opt %s --split-input-file --kiln-split-reductions | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-split-reductions="parallelism=1" | FileCheck %s --check-prefix=OFF
// RUN: kiln-opt %s --split-input-file --kiln-split-reductions="parallelism=262144 max-serial=256 row-lanes=32" | FileCheck %s --check-prefix=GPU
// RUN: kiln-opt %s --split-input-file --kiln-split-reductions="parallelism=256 max-serial=65536 contiguous-parts=1" | FileCheck %s --check-prefix=CPU
// RUN: kiln-opt %s --split-input-file --kiln-split-reductions="parallelism=16" | FileCheck %s --check-prefix=FEW
// The pipeline's options reach the pass: the GPU's and the CPU's forms
// through --kiln-pipeline (what compileExecutable sets for each backend).
// RUN: kiln-opt %s --split-input-file --kiln-pipeline="fuse=false schedule=false partition=false join-sums=false split-reductions-below=262144 split-reductions-max-serial=256 split-reductions-row-lanes=32" | FileCheck %s --check-prefix=GPU
// RUN: kiln-opt %s --split-input-file --kiln-pipeline="fuse=false schedule=false partition=false join-sums=false split-reductions-below=256 split-reductions-max-serial=65536 split-reductions-contiguous-parts=true" | FileCheck %s --check-prefix=CPU

// CHECK-LABEL: func.func @full(
// CHECK: %[[W:.+]] = kiln.convert %{{.+}} : tensor<4096x768xf32> -> tensor<4096x768xf64>
// CHECK: %[[A:.+]] = kiln.reduce sum %[[W]], dims = [1] : tensor<4096x768xf64> -> tensor<4096xf64>
// CHECK: %[[B:.+]] = kiln.reshape %[[A]] : tensor<4096xf64> -> tensor<128x32xf64>
// CHECK: %[[C:.+]] = kiln.reduce sum %[[B]], dims = [1] : tensor<128x32xf64> -> tensor<128xf64>
// CHECK: %[[D:.+]] = kiln.reduce sum %[[C]], dims = [0] : tensor<128xf64> -> tensor<f64>
// CHECK: %[[E:.+]] = kiln.convert %[[D]] : tensor<f64> -> tensor<f32>
// CHECK: return %[[E]]
// OFF-LABEL: func.func @full(
// OFF-NEXT: kiln.reduce sum %{{.+}}, dims = [0, 1]
// CPU-LABEL: func.func @full(
// CPU: kiln.reshape %{{.+}} : tensor<4096x768xf64> -> tensor<256x16x768xf64>
// CPU: kiln.reduce sum %{{.+}}, dims = [1, 2] : tensor<256x16x768xf64> -> tensor<256xf64>
// CPU-NEXT: kiln.reduce sum %{{.+}}, dims = [0] : tensor<256xf64> -> tensor<f64>
// CPU-NEXT: kiln.convert
// CPU-NEXT: return
func.func @full(%x: tensor<4096x768xf32>) -> tensor<f32> {
  %s = kiln.reduce sum %x, dims = [0, 1] : tensor<4096x768xf32> -> tensor<f32>
  return %s : tensor<f32>
}

// -----

// GPU-LABEL: func.func @columns(
// GPU: kiln.reshape %{{.+}} : tensor<8192x768xf64> -> tensor<256x32x768xf64>
// GPU: kiln.reduce sum %{{.+}}, dims = [1] : tensor<256x32x768xf64> -> tensor<256x768xf64>
// GPU: kiln.reduce sum %{{.+}}, dims = [0] : tensor<256x768xf64> -> tensor<768xf64>
// CPU-LABEL: func.func @columns(
// CPU-NOT: kiln.reshape
// CPU: kiln.reduce sum %{{.+}}, dims = [0] : tensor<8192x768xf32> -> tensor<768xf32>
// CPU-NEXT: return
// CHECK-LABEL: func.func @columns(
// CHECK: kiln.reshape %{{.+}} : tensor<8192x768xf64> -> tensor<32x256x768xf64>
// CHECK: kiln.reduce sum %{{.+}}, dims = [1] : tensor<32x256x768xf64> -> tensor<32x768xf64>
// CHECK: kiln.reduce sum %{{.+}}, dims = [0] : tensor<32x768xf64> -> tensor<768xf64>
func.func @columns(%x: tensor<8192x768xf32>) -> tensor<768xf32> {
  %s = kiln.reduce sum %x, dims = [0] : tensor<8192x768xf32> -> tensor<768xf32>
  return %s : tensor<768xf32>
}

// -----

// CPU-LABEL: func.func @rows_max(
// CPU-NOT: kiln.reshape
// CPU: kiln.reduce max %{{.+}}, dims = [1] : tensor<333x50257xf32> -> tensor<333xf32>
// CPU-NEXT: return
// CHECK-LABEL: func.func @rows_max(
// CHECK-NOT: kiln.convert
// CHECK: kiln.reshape %{{.+}} : tensor<333x50257xf32> -> tensor<333x29x1733xf32>
// CHECK: kiln.reduce max %{{.+}}, dims = [2] : tensor<333x29x1733xf32> -> tensor<333x29xf32>
// CHECK: kiln.reduce max %{{.+}}, dims = [1] : tensor<333x29xf32> -> tensor<333xf32>
func.func @rows_max(%x: tensor<333x50257xf32>) -> tensor<333xf32> {
  %s = kiln.reduce max %x, dims = [1] : tensor<333x50257xf32> -> tensor<333xf32>
  return %s : tensor<333xf32>
}

// -----

// GPU-LABEL: func.func @left_alone(
// GPU-NOT: kiln.reshape
// GPU: kiln.reduce sum %{{.+}}, dims = [1] : tensor<8192x768xf32> -> tensor<8192xf32>
// CHECK-LABEL: func.func @left_alone(
// CHECK-NOT: kiln.reshape
// CHECK-NOT: kiln.convert
// CHECK: kiln.reduce sum %{{.+}}, dims = [1] : tensor<8192x768xf32> -> tensor<8192xf32>
// CHECK: kiln.reduce sum %{{.+}}, dims = [1] : tensor<7x2053xf32> -> tensor<7xf32>
// CHECK: kiln.reduce sum %{{.+}}, dims = [1] : tensor<64x4096xi64> -> tensor<64xi64>
// CHECK-NEXT: return
func.func @left_alone(%x: tensor<8192x768xf32>, %y: tensor<7x2053xf32>, %z: tensor<64x4096xi64>) -> (tensor<8192xf32>, tensor<7xf32>, tensor<64xi64>) {
  %a = kiln.reduce sum %x, dims = [1] : tensor<8192x768xf32> -> tensor<8192xf32>
  %b = kiln.reduce sum %y, dims = [1] : tensor<7x2053xf32> -> tensor<7xf32>
  %c = kiln.reduce sum %z, dims = [1] : tensor<64x4096xi64> -> tensor<64xi64>
  return %a, %b, %c : tensor<8192xf32>, tensor<7xf32>, tensor<64xi64>
}

// -----

// FEW-LABEL: func.func @full_wte(
// FEW: kiln.reshape %{{.+}} : tensor<50257x768xf64> -> tensor<50257x16x48xf64>
// FEW: kiln.reduce sum %{{.+}}, dims = [0, 2] : tensor<50257x16x48xf64> -> tensor<16xf64>
// CPU-LABEL: func.func @full_wte(
// CPU: kiln.reshape %{{.+}} : tensor<50257x768xf64> -> tensor<1733x29x768xf64>
// CPU: kiln.reduce sum %{{.+}}, dims = [1, 2] : tensor<1733x29x768xf64> -> tensor<1733xf64>
// CPU-NEXT: kiln.reduce sum %{{.+}}, dims = [0] : tensor<1733xf64> -> tensor<f64>
func.func @full_wte(%x: tensor<50257x768xf32>) -> tensor<f32> {
  %s = kiln.reduce sum %x, dims = [0, 1] : tensor<50257x768xf32> -> tensor<f32>
  return %s : tensor<f32>
}
