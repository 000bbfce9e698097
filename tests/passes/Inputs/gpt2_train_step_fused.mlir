// A tiny GPT-2 training step (frontends/nn's GPT2 and AdamW, one forward,
// backward and update) as frontends/lazy lowers it since attention is one
// op: kiln.fused_attention and its gradient, and the backward seed tied to
// the loss by a gradient_seed barrier (what kiln-partition reads). The
// graph GPT2TrainTest writes with KILN_DUMP_GRAPHS set; a frozen snapshot
// for tests/unit/PipelineTest.cpp and tests/passes/partition.mlir.
module {
  func.func @main(%arg0: tensor<2xi64> {kiln.donate, kiln.output_alias = 0 : i64}, %arg1: tensor<256x64xf32> {kiln.donate, kiln.output_alias = 1 : i64}, %arg2: tensor<f64>, %arg3: tensor<f64>, %arg4: tensor<256x64xf32> {kiln.donate, kiln.output_alias = 29 : i64}, %arg5: tensor<4x32xi64>, %arg6: tensor<32x64xf32> {kiln.donate, kiln.output_alias = 2 : i64}, %arg7: tensor<64xf32> {kiln.donate, kiln.output_alias = 3 : i64}, %arg8: tensor<64xf32> {kiln.donate, kiln.output_alias = 4 : i64}, %arg9: tensor<64x192xf32> {kiln.donate, kiln.output_alias = 5 : i64}, %arg10: tensor<192xf32> {kiln.donate, kiln.output_alias = 6 : i64}, %arg11: tensor<64x64xf32> {kiln.donate, kiln.output_alias = 7 : i64}, %arg12: tensor<64xf32> {kiln.donate, kiln.output_alias = 8 : i64}, %arg13: tensor<64xf32> {kiln.donate, kiln.output_alias = 9 : i64}, %arg14: tensor<64xf32> {kiln.donate, kiln.output_alias = 10 : i64}, %arg15: tensor<64x256xf32> {kiln.donate, kiln.output_alias = 11 : i64}, %arg16: tensor<256xf32> {kiln.donate, kiln.output_alias = 12 : i64}, %arg17: tensor<256x64xf32> {kiln.donate, kiln.output_alias = 13 : i64}, %arg18: tensor<64xf32> {kiln.donate, kiln.output_alias = 14 : i64}, %arg19: tensor<64xf32> {kiln.donate, kiln.output_alias = 15 : i64}, %arg20: tensor<64xf32> {kiln.donate, kiln.output_alias = 16 : i64}, %arg21: tensor<64x192xf32> {kiln.donate, kiln.output_alias = 17 : i64}, %arg22: tensor<192xf32> {kiln.donate, kiln.output_alias = 18 : i64}, %arg23: tensor<64x64xf32> {kiln.donate, kiln.output_alias = 19 : i64}, %arg24: tensor<64xf32> {kiln.donate, kiln.output_alias = 20 : i64}, %arg25: tensor<64xf32> {kiln.donate, kiln.output_alias = 21 : i64}, %arg26: tensor<64xf32> {kiln.donate, kiln.output_alias = 22 : i64}, %arg27: tensor<64x256xf32> {kiln.donate, kiln.output_alias = 23 : i64}, %arg28: tensor<256xf32> {kiln.donate, kiln.output_alias = 24 : i64}, %arg29: tensor<256x64xf32> {kiln.donate, kiln.output_alias = 25 : i64}, %arg30: tensor<64xf32> {kiln.donate, kiln.output_alias = 26 : i64}, %arg31: tensor<64xf32> {kiln.donate, kiln.output_alias = 27 : i64}, %arg32: tensor<64xf32> {kiln.donate, kiln.output_alias = 28 : i64}, %arg33: tensor<256x64xf32> {kiln.donate, kiln.output_alias = 57 : i64}, %arg34: tensor<32x64xf32> {kiln.donate, kiln.output_alias = 30 : i64}, %arg35: tensor<32x64xf32> {kiln.donate, kiln.output_alias = 58 : i64}, %arg36: tensor<64xf32> {kiln.donate, kiln.output_alias = 31 : i64}, %arg37: tensor<64xf32> {kiln.donate, kiln.output_alias = 59 : i64}, %arg38: tensor<64xf32> {kiln.donate, kiln.output_alias = 32 : i64}, %arg39: tensor<64xf32> {kiln.donate, kiln.output_alias = 60 : i64}, %arg40: tensor<64x192xf32> {kiln.donate, kiln.output_alias = 33 : i64}, %arg41: tensor<64x192xf32> {kiln.donate, kiln.output_alias = 61 : i64}, %arg42: tensor<192xf32> {kiln.donate, kiln.output_alias = 34 : i64}, %arg43: tensor<192xf32> {kiln.donate, kiln.output_alias = 62 : i64}, %arg44: tensor<64x64xf32> {kiln.donate, kiln.output_alias = 35 : i64}, %arg45: tensor<64x64xf32> {kiln.donate, kiln.output_alias = 63 : i64}, %arg46: tensor<64xf32> {kiln.donate, kiln.output_alias = 36 : i64}, %arg47: tensor<64xf32> {kiln.donate, kiln.output_alias = 64 : i64}, %arg48: tensor<64xf32> {kiln.donate, kiln.output_alias = 37 : i64}, %arg49: tensor<64xf32> {kiln.donate, kiln.output_alias = 65 : i64}, %arg50: tensor<64xf32> {kiln.donate, kiln.output_alias = 38 : i64}, %arg51: tensor<64xf32> {kiln.donate, kiln.output_alias = 66 : i64}, %arg52: tensor<64x256xf32> {kiln.donate, kiln.output_alias = 39 : i64}, %arg53: tensor<64x256xf32> {kiln.donate, kiln.output_alias = 67 : i64}, %arg54: tensor<256xf32> {kiln.donate, kiln.output_alias = 40 : i64}, %arg55: tensor<256xf32> {kiln.donate, kiln.output_alias = 68 : i64}, %arg56: tensor<256x64xf32> {kiln.donate, kiln.output_alias = 41 : i64}, %arg57: tensor<256x64xf32> {kiln.donate, kiln.output_alias = 69 : i64}, %arg58: tensor<64xf32> {kiln.donate, kiln.output_alias = 42 : i64}, %arg59: tensor<64xf32> {kiln.donate, kiln.output_alias = 70 : i64}, %arg60: tensor<64xf32> {kiln.donate, kiln.output_alias = 43 : i64}, %arg61: tensor<64xf32> {kiln.donate, kiln.output_alias = 71 : i64}, %arg62: tensor<64xf32> {kiln.donate, kiln.output_alias = 44 : i64}, %arg63: tensor<64xf32> {kiln.donate, kiln.output_alias = 72 : i64}, %arg64: tensor<64x192xf32> {kiln.donate, kiln.output_alias = 45 : i64}, %arg65: tensor<64x192xf32> {kiln.donate, kiln.output_alias = 73 : i64}, %arg66: tensor<192xf32> {kiln.donate, kiln.output_alias = 46 : i64}, %arg67: tensor<192xf32> {kiln.donate, kiln.output_alias = 74 : i64}, %arg68: tensor<64x64xf32> {kiln.donate, kiln.output_alias = 47 : i64}, %arg69: tensor<64x64xf32> {kiln.donate, kiln.output_alias = 75 : i64}, %arg70: tensor<64xf32> {kiln.donate, kiln.output_alias = 48 : i64}, %arg71: tensor<64xf32> {kiln.donate, kiln.output_alias = 76 : i64}, %arg72: tensor<64xf32> {kiln.donate, kiln.output_alias = 49 : i64}, %arg73: tensor<64xf32> {kiln.donate, kiln.output_alias = 77 : i64}, %arg74: tensor<64xf32> {kiln.donate, kiln.output_alias = 50 : i64}, %arg75: tensor<64xf32> {kiln.donate, kiln.output_alias = 78 : i64}, %arg76: tensor<64x256xf32> {kiln.donate, kiln.output_alias = 51 : i64}, %arg77: tensor<64x256xf32> {kiln.donate, kiln.output_alias = 79 : i64}, %arg78: tensor<256xf32> {kiln.donate, kiln.output_alias = 52 : i64}, %arg79: tensor<256xf32> {kiln.donate, kiln.output_alias = 80 : i64}, %arg80: tensor<256x64xf32> {kiln.donate, kiln.output_alias = 53 : i64}, %arg81: tensor<256x64xf32> {kiln.donate, kiln.output_alias = 81 : i64}, %arg82: tensor<64xf32> {kiln.donate, kiln.output_alias = 54 : i64}, %arg83: tensor<64xf32> {kiln.donate, kiln.output_alias = 82 : i64}, %arg84: tensor<64xf32> {kiln.donate, kiln.output_alias = 55 : i64}, %arg85: tensor<64xf32> {kiln.donate, kiln.output_alias = 83 : i64}, %arg86: tensor<64xf32> {kiln.donate, kiln.output_alias = 56 : i64}, %arg87: tensor<64xf32> {kiln.donate, kiln.output_alias = 84 : i64}) -> (tensor<2xi64>, tensor<256x64xf32>, tensor<32x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x192xf32>, tensor<192xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x256xf32>, tensor<256xf32>, tensor<256x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x192xf32>, tensor<192xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x256xf32>, tensor<256xf32>, tensor<256x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<256x64xf32>, tensor<32x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x192xf32>, tensor<192xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x256xf32>, tensor<256xf32>, tensor<256x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x192xf32>, tensor<192xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x256xf32>, tensor<256xf32>, tensor<256x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<256x64xf32>, tensor<32x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x192xf32>, tensor<192xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x256xf32>, tensor<256xf32>, tensor<256x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x192xf32>, tensor<192xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x256xf32>, tensor<256xf32>, tensor<256x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<f32>) {
    %0 = kiln.constant dense<[0, 2048]> : tensor<2xi64>
    %1 = kiln.add %arg0, %0 : tensor<2xi64>
    %2 = kiln.constant dense<[0, 4096]> : tensor<2xi64>
    %3 = kiln.add %1, %2 : tensor<2xi64>
    %4 = kiln.constant dense<[0, 2048]> : tensor<2xi64>
    %5 = kiln.add %3, %4 : tensor<2xi64>
    %6 = kiln.constant dense<[0, 2048]> : tensor<2xi64>
    %7 = kiln.add %5, %6 : tensor<2xi64>
    %8 = kiln.constant dense<[0, 4096]> : tensor<2xi64>
    %9 = kiln.add %7, %8 : tensor<2xi64>
    %10 = kiln.constant dense<[0, 2048]> : tensor<2xi64>
    %11 = kiln.add %9, %10 : tensor<2xi64>
    %12 = kiln.constant dense<[0, 2048]> : tensor<2xi64>
    %13 = kiln.add %11, %12 : tensor<2xi64>
    %14 = kiln.constant dense<1.000000e+00> : tensor<f64>
    %15 = kiln.constant dense<1.000000e-02> : tensor<f64>
    %16 = kiln.mul %arg2, %15 : tensor<f64>
    %17 = kiln.sub %14, %16 : tensor<f64>
    %18 = kiln.convert %17 : tensor<f64> -> tensor<f32>
    %19 = kiln.broadcast_in_dim %18, dims = [] : tensor<f32> -> tensor<256x64xf32>
    %20 = kiln.mul %arg1, %19 : tensor<256x64xf32>
    %21 = kiln.constant dense<-0.10536051565782628> : tensor<f64>
    %22 = kiln.mul %arg3, %21 : tensor<f64>
    %23 = kiln.exp %22 : tensor<f64>
    %24 = kiln.sub %14, %23 : tensor<f64>
    %25 = kiln.div %arg2, %24 : tensor<f64>
    %26 = kiln.convert %25 : tensor<f64> -> tensor<f32>
    %27 = kiln.broadcast_in_dim %26, dims = [] : tensor<f32> -> tensor<256x64xf32>
    %28 = kiln.iota dim = 1 : tensor<124x256xi64>
    %29 = kiln.slice %arg5, start = [0, 1], limit = [4, 32], strides = [1, 1] : tensor<4x32xi64> -> tensor<4x31xi64>
    %30 = kiln.reshape %29 : tensor<4x31xi64> -> tensor<124xi64>
    %31 = kiln.reshape %30 : tensor<124xi64> -> tensor<124x1xi64>
    %32 = kiln.reshape %31 : tensor<124x1xi64> -> tensor<124xi64>
    %33 = kiln.broadcast_in_dim %32, dims = [0] : tensor<124xi64> -> tensor<124x256xi64>
    %34 = kiln.compare EQ, %28, %33 : tensor<124x256xi64>
    %35 = kiln.constant dense<1.000000e+00> : tensor<f32>
    %result, %new_state = kiln.rng_uniform %arg0 : tensor<2xi64> -> tensor<4x32x64xf32>
    %36 = kiln.constant dense<1.000000e-01> : tensor<f32>
    %37 = kiln.broadcast_in_dim %36, dims = [] : tensor<f32> -> tensor<4x32x64xf32>
    %38 = kiln.compare GE, %result, %37 : tensor<4x32x64xf32>
    %39 = kiln.gather %arg1[%arg5], axis = 0 : tensor<256x64xf32>, tensor<4x32xi64> -> tensor<4x32x64xf32>
    %40 = kiln.iota dim = 0 : tensor<32xi64>
    %41 = kiln.gather %arg6[%40], axis = 0 : tensor<32x64xf32>, tensor<32xi64> -> tensor<32x64xf32>
    %42 = kiln.broadcast_in_dim %41, dims = [1, 2] : tensor<32x64xf32> -> tensor<4x32x64xf32>
    %43 = kiln.add %39, %42 : tensor<4x32x64xf32>
    %44 = kiln.constant dense<1.11111116> : tensor<f32>
    %45 = kiln.broadcast_in_dim %44, dims = [] : tensor<f32> -> tensor<4x32x64xf32>
    %46 = kiln.mul %43, %45 : tensor<4x32x64xf32>
    %47 = kiln.constant dense<0.000000e+00> : tensor<f32>
    %48 = kiln.broadcast_in_dim %47, dims = [] : tensor<f32> -> tensor<4x32x64xf32>
    %49 = kiln.select %38, %46, %48 : tensor<4x32x64xi1>, tensor<4x32x64xf32>
    %result_0, %new_state_1 = kiln.rng_uniform %3 : tensor<2xi64> -> tensor<4x32x64xf32>
    %50 = kiln.compare GE, %result_0, %37 : tensor<4x32x64xf32>
    %51 = kiln.reduce sum %49, dims = [2] : tensor<4x32x64xf32> -> tensor<4x32xf32>
    %52 = kiln.reshape %51 : tensor<4x32xf32> -> tensor<4x32x1xf32>
    %53 = kiln.constant dense<6.400000e+01> : tensor<f32>
    %54 = kiln.broadcast_in_dim %53, dims = [] : tensor<f32> -> tensor<4x32x1xf32>
    %55 = kiln.div %52, %54 : tensor<4x32x1xf32>
    %56 = kiln.reshape %55 : tensor<4x32x1xf32> -> tensor<4x32xf32>
    %57 = kiln.broadcast_in_dim %56, dims = [0, 1] : tensor<4x32xf32> -> tensor<4x32x64xf32>
    %58 = kiln.sub %49, %57 : tensor<4x32x64xf32>
    %59 = kiln.mul %58, %58 : tensor<4x32x64xf32>
    %60 = kiln.reduce sum %59, dims = [2] : tensor<4x32x64xf32> -> tensor<4x32xf32>
    %61 = kiln.reshape %60 : tensor<4x32xf32> -> tensor<4x32x1xf32>
    %62 = kiln.div %61, %54 : tensor<4x32x1xf32>
    %63 = kiln.constant dense<9.99999974E-6> : tensor<f32>
    %64 = kiln.broadcast_in_dim %63, dims = [] : tensor<f32> -> tensor<4x32x1xf32>
    %65 = kiln.add %62, %64 : tensor<4x32x1xf32>
    %66 = kiln.rsqrt %65 : tensor<4x32x1xf32>
    %67 = kiln.reshape %66 : tensor<4x32x1xf32> -> tensor<4x32xf32>
    %68 = kiln.broadcast_in_dim %67, dims = [0, 1] : tensor<4x32xf32> -> tensor<4x32x64xf32>
    %69 = kiln.mul %58, %68 : tensor<4x32x64xf32>
    %70 = kiln.broadcast_in_dim %arg7, dims = [2] : tensor<64xf32> -> tensor<4x32x64xf32>
    %71 = kiln.mul %69, %70 : tensor<4x32x64xf32>
    %72 = kiln.broadcast_in_dim %arg8, dims = [2] : tensor<64xf32> -> tensor<4x32x64xf32>
    %73 = kiln.add %71, %72 : tensor<4x32x64xf32>
    %74 = kiln.reshape %73 : tensor<4x32x64xf32> -> tensor<128x64xf32>
    %75 = kiln.dot_general %74, %arg9, batch = [] x [], contract = [1] x [0] : tensor<128x64xf32>, tensor<64x192xf32> -> tensor<128x192xf32>
    %76 = kiln.reshape %75 : tensor<128x192xf32> -> tensor<4x32x192xf32>
    %77 = kiln.broadcast_in_dim %arg10, dims = [2] : tensor<192xf32> -> tensor<4x32x192xf32>
    %78 = kiln.add %76, %77 : tensor<4x32x192xf32>
    %79 = kiln.slice %78, start = [0, 0, 0], limit = [4, 32, 64], strides = [1, 1, 1] : tensor<4x32x192xf32> -> tensor<4x32x64xf32>
    %80 = kiln.reshape %79 : tensor<4x32x64xf32> -> tensor<4x32x4x16xf32>
    %81 = kiln.transpose %80, perm = [0, 2, 1, 3] : tensor<4x32x4x16xf32> -> tensor<4x4x32x16xf32>
    %82 = kiln.slice %78, start = [0, 0, 64], limit = [4, 32, 128], strides = [1, 1, 1] : tensor<4x32x192xf32> -> tensor<4x32x64xf32>
    %83 = kiln.reshape %82 : tensor<4x32x64xf32> -> tensor<4x32x4x16xf32>
    %84 = kiln.transpose %83, perm = [0, 2, 1, 3] : tensor<4x32x4x16xf32> -> tensor<4x4x32x16xf32>
    %85 = kiln.slice %78, start = [0, 0, 128], limit = [4, 32, 192], strides = [1, 1, 1] : tensor<4x32x192xf32> -> tensor<4x32x64xf32>
    %86 = kiln.reshape %85 : tensor<4x32x64xf32> -> tensor<4x32x4x16xf32>
    %87 = kiln.transpose %86, perm = [0, 2, 1, 3] : tensor<4x32x4x16xf32> -> tensor<4x4x32x16xf32>
    %88, %stats_88 = kiln.fused_attention %81, %84, %87, rng = %1 {causal, dropout = 1.000000e-01 : f64, scale = 2.500000e-01 : f64} : tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<2xi64> -> tensor<4x4x32x16xf32>, tensor<4x4x32xf32>
    %89 = kiln.transpose %88, perm = [0, 2, 1, 3] : tensor<4x4x32x16xf32> -> tensor<4x32x4x16xf32>
    %90 = kiln.reshape %89 : tensor<4x32x4x16xf32> -> tensor<4x32x64xf32>
    %91 = kiln.reshape %90 : tensor<4x32x64xf32> -> tensor<128x64xf32>
    %92 = kiln.dot_general %91, %arg11, batch = [] x [], contract = [1] x [0] : tensor<128x64xf32>, tensor<64x64xf32> -> tensor<128x64xf32>
    %93 = kiln.reshape %92 : tensor<128x64xf32> -> tensor<4x32x64xf32>
    %94 = kiln.broadcast_in_dim %arg12, dims = [2] : tensor<64xf32> -> tensor<4x32x64xf32>
    %95 = kiln.add %93, %94 : tensor<4x32x64xf32>
    %96 = kiln.mul %95, %45 : tensor<4x32x64xf32>
    %97 = kiln.select %50, %96, %48 : tensor<4x32x64xi1>, tensor<4x32x64xf32>
    %98 = kiln.add %49, %97 : tensor<4x32x64xf32>
    %result_2, %new_state_3 = kiln.rng_uniform %5 : tensor<2xi64> -> tensor<4x32x64xf32>
    %99 = kiln.compare GE, %result_2, %37 : tensor<4x32x64xf32>
    %100 = kiln.reduce sum %98, dims = [2] : tensor<4x32x64xf32> -> tensor<4x32xf32>
    %101 = kiln.reshape %100 : tensor<4x32xf32> -> tensor<4x32x1xf32>
    %102 = kiln.div %101, %54 : tensor<4x32x1xf32>
    %103 = kiln.reshape %102 : tensor<4x32x1xf32> -> tensor<4x32xf32>
    %104 = kiln.broadcast_in_dim %103, dims = [0, 1] : tensor<4x32xf32> -> tensor<4x32x64xf32>
    %105 = kiln.sub %98, %104 : tensor<4x32x64xf32>
    %106 = kiln.mul %105, %105 : tensor<4x32x64xf32>
    %107 = kiln.reduce sum %106, dims = [2] : tensor<4x32x64xf32> -> tensor<4x32xf32>
    %108 = kiln.reshape %107 : tensor<4x32xf32> -> tensor<4x32x1xf32>
    %109 = kiln.div %108, %54 : tensor<4x32x1xf32>
    %110 = kiln.add %109, %64 : tensor<4x32x1xf32>
    %111 = kiln.rsqrt %110 : tensor<4x32x1xf32>
    %112 = kiln.reshape %111 : tensor<4x32x1xf32> -> tensor<4x32xf32>
    %113 = kiln.broadcast_in_dim %112, dims = [0, 1] : tensor<4x32xf32> -> tensor<4x32x64xf32>
    %114 = kiln.mul %105, %113 : tensor<4x32x64xf32>
    %115 = kiln.broadcast_in_dim %arg13, dims = [2] : tensor<64xf32> -> tensor<4x32x64xf32>
    %116 = kiln.mul %114, %115 : tensor<4x32x64xf32>
    %117 = kiln.broadcast_in_dim %arg14, dims = [2] : tensor<64xf32> -> tensor<4x32x64xf32>
    %118 = kiln.add %116, %117 : tensor<4x32x64xf32>
    %119 = kiln.reshape %118 : tensor<4x32x64xf32> -> tensor<128x64xf32>
    %120 = kiln.dot_general %119, %arg15, batch = [] x [], contract = [1] x [0] : tensor<128x64xf32>, tensor<64x256xf32> -> tensor<128x256xf32>
    %121 = kiln.reshape %120 : tensor<128x256xf32> -> tensor<4x32x256xf32>
    %122 = kiln.broadcast_in_dim %arg16, dims = [2] : tensor<256xf32> -> tensor<4x32x256xf32>
    %123 = kiln.add %121, %122 : tensor<4x32x256xf32>
    %124 = kiln.constant dense<5.000000e-01> : tensor<f32>
    %125 = kiln.broadcast_in_dim %124, dims = [] : tensor<f32> -> tensor<4x32x256xf32>
    %126 = kiln.mul %123, %125 : tensor<4x32x256xf32>
    %127 = kiln.mul %123, %123 : tensor<4x32x256xf32>
    %128 = kiln.mul %127, %123 : tensor<4x32x256xf32>
    %129 = kiln.constant dense<4.471500e-02> : tensor<f32>
    %130 = kiln.broadcast_in_dim %129, dims = [] : tensor<f32> -> tensor<4x32x256xf32>
    %131 = kiln.mul %128, %130 : tensor<4x32x256xf32>
    %132 = kiln.add %123, %131 : tensor<4x32x256xf32>
    %133 = kiln.constant dense<0.797884583> : tensor<f32>
    %134 = kiln.broadcast_in_dim %133, dims = [] : tensor<f32> -> tensor<4x32x256xf32>
    %135 = kiln.mul %132, %134 : tensor<4x32x256xf32>
    %136 = kiln.tanh %135 : tensor<4x32x256xf32>
    %137 = kiln.broadcast_in_dim %35, dims = [] : tensor<f32> -> tensor<4x32x256xf32>
    %138 = kiln.add %136, %137 : tensor<4x32x256xf32>
    %139 = kiln.mul %126, %138 : tensor<4x32x256xf32>
    %140 = kiln.reshape %139 : tensor<4x32x256xf32> -> tensor<128x256xf32>
    %141 = kiln.dot_general %140, %arg17, batch = [] x [], contract = [1] x [0] : tensor<128x256xf32>, tensor<256x64xf32> -> tensor<128x64xf32>
    %142 = kiln.reshape %141 : tensor<128x64xf32> -> tensor<4x32x64xf32>
    %143 = kiln.broadcast_in_dim %arg18, dims = [2] : tensor<64xf32> -> tensor<4x32x64xf32>
    %144 = kiln.add %142, %143 : tensor<4x32x64xf32>
    %145 = kiln.mul %144, %45 : tensor<4x32x64xf32>
    %146 = kiln.select %99, %145, %48 : tensor<4x32x64xi1>, tensor<4x32x64xf32>
    %147 = kiln.add %98, %146 : tensor<4x32x64xf32>
    %result_4, %new_state_5 = kiln.rng_uniform %9 : tensor<2xi64> -> tensor<4x32x64xf32>
    %148 = kiln.compare GE, %result_4, %37 : tensor<4x32x64xf32>
    %149 = kiln.reduce sum %147, dims = [2] : tensor<4x32x64xf32> -> tensor<4x32xf32>
    %150 = kiln.reshape %149 : tensor<4x32xf32> -> tensor<4x32x1xf32>
    %151 = kiln.div %150, %54 : tensor<4x32x1xf32>
    %152 = kiln.reshape %151 : tensor<4x32x1xf32> -> tensor<4x32xf32>
    %153 = kiln.broadcast_in_dim %152, dims = [0, 1] : tensor<4x32xf32> -> tensor<4x32x64xf32>
    %154 = kiln.sub %147, %153 : tensor<4x32x64xf32>
    %155 = kiln.mul %154, %154 : tensor<4x32x64xf32>
    %156 = kiln.reduce sum %155, dims = [2] : tensor<4x32x64xf32> -> tensor<4x32xf32>
    %157 = kiln.reshape %156 : tensor<4x32xf32> -> tensor<4x32x1xf32>
    %158 = kiln.div %157, %54 : tensor<4x32x1xf32>
    %159 = kiln.add %158, %64 : tensor<4x32x1xf32>
    %160 = kiln.rsqrt %159 : tensor<4x32x1xf32>
    %161 = kiln.reshape %160 : tensor<4x32x1xf32> -> tensor<4x32xf32>
    %162 = kiln.broadcast_in_dim %161, dims = [0, 1] : tensor<4x32xf32> -> tensor<4x32x64xf32>
    %163 = kiln.mul %154, %162 : tensor<4x32x64xf32>
    %164 = kiln.broadcast_in_dim %arg19, dims = [2] : tensor<64xf32> -> tensor<4x32x64xf32>
    %165 = kiln.mul %163, %164 : tensor<4x32x64xf32>
    %166 = kiln.broadcast_in_dim %arg20, dims = [2] : tensor<64xf32> -> tensor<4x32x64xf32>
    %167 = kiln.add %165, %166 : tensor<4x32x64xf32>
    %168 = kiln.reshape %167 : tensor<4x32x64xf32> -> tensor<128x64xf32>
    %169 = kiln.dot_general %168, %arg21, batch = [] x [], contract = [1] x [0] : tensor<128x64xf32>, tensor<64x192xf32> -> tensor<128x192xf32>
    %170 = kiln.reshape %169 : tensor<128x192xf32> -> tensor<4x32x192xf32>
    %171 = kiln.broadcast_in_dim %arg22, dims = [2] : tensor<192xf32> -> tensor<4x32x192xf32>
    %172 = kiln.add %170, %171 : tensor<4x32x192xf32>
    %173 = kiln.slice %172, start = [0, 0, 0], limit = [4, 32, 64], strides = [1, 1, 1] : tensor<4x32x192xf32> -> tensor<4x32x64xf32>
    %174 = kiln.reshape %173 : tensor<4x32x64xf32> -> tensor<4x32x4x16xf32>
    %175 = kiln.transpose %174, perm = [0, 2, 1, 3] : tensor<4x32x4x16xf32> -> tensor<4x4x32x16xf32>
    %176 = kiln.slice %172, start = [0, 0, 64], limit = [4, 32, 128], strides = [1, 1, 1] : tensor<4x32x192xf32> -> tensor<4x32x64xf32>
    %177 = kiln.reshape %176 : tensor<4x32x64xf32> -> tensor<4x32x4x16xf32>
    %178 = kiln.transpose %177, perm = [0, 2, 1, 3] : tensor<4x32x4x16xf32> -> tensor<4x4x32x16xf32>
    %179 = kiln.slice %172, start = [0, 0, 128], limit = [4, 32, 192], strides = [1, 1, 1] : tensor<4x32x192xf32> -> tensor<4x32x64xf32>
    %180 = kiln.reshape %179 : tensor<4x32x64xf32> -> tensor<4x32x4x16xf32>
    %181 = kiln.transpose %180, perm = [0, 2, 1, 3] : tensor<4x32x4x16xf32> -> tensor<4x4x32x16xf32>
    %182, %stats_182 = kiln.fused_attention %175, %178, %181, rng = %7 {causal, dropout = 1.000000e-01 : f64, scale = 2.500000e-01 : f64} : tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<2xi64> -> tensor<4x4x32x16xf32>, tensor<4x4x32xf32>
    %183 = kiln.transpose %182, perm = [0, 2, 1, 3] : tensor<4x4x32x16xf32> -> tensor<4x32x4x16xf32>
    %184 = kiln.reshape %183 : tensor<4x32x4x16xf32> -> tensor<4x32x64xf32>
    %185 = kiln.reshape %184 : tensor<4x32x64xf32> -> tensor<128x64xf32>
    %186 = kiln.dot_general %185, %arg23, batch = [] x [], contract = [1] x [0] : tensor<128x64xf32>, tensor<64x64xf32> -> tensor<128x64xf32>
    %187 = kiln.reshape %186 : tensor<128x64xf32> -> tensor<4x32x64xf32>
    %188 = kiln.broadcast_in_dim %arg24, dims = [2] : tensor<64xf32> -> tensor<4x32x64xf32>
    %189 = kiln.add %187, %188 : tensor<4x32x64xf32>
    %190 = kiln.mul %189, %45 : tensor<4x32x64xf32>
    %191 = kiln.select %148, %190, %48 : tensor<4x32x64xi1>, tensor<4x32x64xf32>
    %192 = kiln.add %147, %191 : tensor<4x32x64xf32>
    %result_6, %new_state_7 = kiln.rng_uniform %11 : tensor<2xi64> -> tensor<4x32x64xf32>
    %193 = kiln.compare GE, %result_6, %37 : tensor<4x32x64xf32>
    %194 = kiln.reduce sum %192, dims = [2] : tensor<4x32x64xf32> -> tensor<4x32xf32>
    %195 = kiln.reshape %194 : tensor<4x32xf32> -> tensor<4x32x1xf32>
    %196 = kiln.div %195, %54 : tensor<4x32x1xf32>
    %197 = kiln.reshape %196 : tensor<4x32x1xf32> -> tensor<4x32xf32>
    %198 = kiln.broadcast_in_dim %197, dims = [0, 1] : tensor<4x32xf32> -> tensor<4x32x64xf32>
    %199 = kiln.sub %192, %198 : tensor<4x32x64xf32>
    %200 = kiln.mul %199, %199 : tensor<4x32x64xf32>
    %201 = kiln.reduce sum %200, dims = [2] : tensor<4x32x64xf32> -> tensor<4x32xf32>
    %202 = kiln.reshape %201 : tensor<4x32xf32> -> tensor<4x32x1xf32>
    %203 = kiln.div %202, %54 : tensor<4x32x1xf32>
    %204 = kiln.add %203, %64 : tensor<4x32x1xf32>
    %205 = kiln.rsqrt %204 : tensor<4x32x1xf32>
    %206 = kiln.reshape %205 : tensor<4x32x1xf32> -> tensor<4x32xf32>
    %207 = kiln.broadcast_in_dim %206, dims = [0, 1] : tensor<4x32xf32> -> tensor<4x32x64xf32>
    %208 = kiln.mul %199, %207 : tensor<4x32x64xf32>
    %209 = kiln.broadcast_in_dim %arg25, dims = [2] : tensor<64xf32> -> tensor<4x32x64xf32>
    %210 = kiln.mul %208, %209 : tensor<4x32x64xf32>
    %211 = kiln.broadcast_in_dim %arg26, dims = [2] : tensor<64xf32> -> tensor<4x32x64xf32>
    %212 = kiln.add %210, %211 : tensor<4x32x64xf32>
    %213 = kiln.reshape %212 : tensor<4x32x64xf32> -> tensor<128x64xf32>
    %214 = kiln.dot_general %213, %arg27, batch = [] x [], contract = [1] x [0] : tensor<128x64xf32>, tensor<64x256xf32> -> tensor<128x256xf32>
    %215 = kiln.reshape %214 : tensor<128x256xf32> -> tensor<4x32x256xf32>
    %216 = kiln.broadcast_in_dim %arg28, dims = [2] : tensor<256xf32> -> tensor<4x32x256xf32>
    %217 = kiln.add %215, %216 : tensor<4x32x256xf32>
    %218 = kiln.mul %217, %125 : tensor<4x32x256xf32>
    %219 = kiln.mul %217, %217 : tensor<4x32x256xf32>
    %220 = kiln.mul %219, %217 : tensor<4x32x256xf32>
    %221 = kiln.mul %220, %130 : tensor<4x32x256xf32>
    %222 = kiln.add %217, %221 : tensor<4x32x256xf32>
    %223 = kiln.mul %222, %134 : tensor<4x32x256xf32>
    %224 = kiln.tanh %223 : tensor<4x32x256xf32>
    %225 = kiln.add %224, %137 : tensor<4x32x256xf32>
    %226 = kiln.mul %218, %225 : tensor<4x32x256xf32>
    %227 = kiln.reshape %226 : tensor<4x32x256xf32> -> tensor<128x256xf32>
    %228 = kiln.dot_general %227, %arg29, batch = [] x [], contract = [1] x [0] : tensor<128x256xf32>, tensor<256x64xf32> -> tensor<128x64xf32>
    %229 = kiln.reshape %228 : tensor<128x64xf32> -> tensor<4x32x64xf32>
    %230 = kiln.broadcast_in_dim %arg30, dims = [2] : tensor<64xf32> -> tensor<4x32x64xf32>
    %231 = kiln.add %229, %230 : tensor<4x32x64xf32>
    %232 = kiln.mul %231, %45 : tensor<4x32x64xf32>
    %233 = kiln.select %193, %232, %48 : tensor<4x32x64xi1>, tensor<4x32x64xf32>
    %234 = kiln.add %192, %233 : tensor<4x32x64xf32>
    %235 = kiln.reduce sum %234, dims = [2] : tensor<4x32x64xf32> -> tensor<4x32xf32>
    %236 = kiln.reshape %235 : tensor<4x32xf32> -> tensor<4x32x1xf32>
    %237 = kiln.div %236, %54 : tensor<4x32x1xf32>
    %238 = kiln.reshape %237 : tensor<4x32x1xf32> -> tensor<4x32xf32>
    %239 = kiln.broadcast_in_dim %238, dims = [0, 1] : tensor<4x32xf32> -> tensor<4x32x64xf32>
    %240 = kiln.sub %234, %239 : tensor<4x32x64xf32>
    %241 = kiln.mul %240, %240 : tensor<4x32x64xf32>
    %242 = kiln.reduce sum %241, dims = [2] : tensor<4x32x64xf32> -> tensor<4x32xf32>
    %243 = kiln.reshape %242 : tensor<4x32xf32> -> tensor<4x32x1xf32>
    %244 = kiln.div %243, %54 : tensor<4x32x1xf32>
    %245 = kiln.add %244, %64 : tensor<4x32x1xf32>
    %246 = kiln.rsqrt %245 : tensor<4x32x1xf32>
    %247 = kiln.reshape %246 : tensor<4x32x1xf32> -> tensor<4x32xf32>
    %248 = kiln.broadcast_in_dim %247, dims = [0, 1] : tensor<4x32xf32> -> tensor<4x32x64xf32>
    %249 = kiln.mul %240, %248 : tensor<4x32x64xf32>
    %250 = kiln.broadcast_in_dim %arg31, dims = [2] : tensor<64xf32> -> tensor<4x32x64xf32>
    %251 = kiln.mul %249, %250 : tensor<4x32x64xf32>
    %252 = kiln.broadcast_in_dim %arg32, dims = [2] : tensor<64xf32> -> tensor<4x32x64xf32>
    %253 = kiln.add %251, %252 : tensor<4x32x64xf32>
    %254 = kiln.reshape %253 : tensor<4x32x64xf32> -> tensor<128x64xf32>
    %255 = kiln.transpose %arg1, perm = [1, 0] : tensor<256x64xf32> -> tensor<64x256xf32>
    %256 = kiln.dot_general %254, %255, batch = [] x [], contract = [1] x [0] : tensor<128x64xf32>, tensor<64x256xf32> -> tensor<128x256xf32>
    %257 = kiln.reshape %256 : tensor<128x256xf32> -> tensor<4x32x256xf32>
    %258 = kiln.slice %257, start = [0, 0, 0], limit = [4, 31, 256], strides = [1, 1, 1] : tensor<4x32x256xf32> -> tensor<4x31x256xf32>
    %259 = kiln.reshape %258 : tensor<4x31x256xf32> -> tensor<124x256xf32>
    %260 = kiln.reduce max %259, dims = [1] : tensor<124x256xf32> -> tensor<124xf32>
    %261 = kiln.reshape %260 : tensor<124xf32> -> tensor<124x1xf32>
    %262 = kiln.reshape %261 : tensor<124x1xf32> -> tensor<124xf32>
    %263 = kiln.broadcast_in_dim %262, dims = [0] : tensor<124xf32> -> tensor<124x256xf32>
    %264 = kiln.sub %259, %263 : tensor<124x256xf32>
    %265 = kiln.exp %264 : tensor<124x256xf32>
    %266 = kiln.reduce sum %265, dims = [1] : tensor<124x256xf32> -> tensor<124xf32>
    %267 = kiln.reshape %266 : tensor<124xf32> -> tensor<124x1xf32>
    %268 = kiln.log %267 : tensor<124x1xf32>
    %269 = kiln.reshape %268 : tensor<124x1xf32> -> tensor<124xf32>
    %270 = kiln.broadcast_in_dim %269, dims = [0] : tensor<124xf32> -> tensor<124x256xf32>
    %271 = kiln.sub %264, %270 : tensor<124x256xf32>
    %272 = kiln.broadcast_in_dim %47, dims = [] : tensor<f32> -> tensor<124x256xf32>
    %273 = kiln.select %34, %271, %272 : tensor<124x256xi1>, tensor<124x256xf32>
    %274 = kiln.reduce sum %273, dims = [1] : tensor<124x256xf32> -> tensor<124xf32>
    %275 = kiln.constant dense<-100> : tensor<i64>
    %276 = kiln.broadcast_in_dim %275, dims = [] : tensor<i64> -> tensor<124xi64>
    %277 = kiln.compare NE, %30, %276 : tensor<124xi64>
    %278 = kiln.convert %277 : tensor<124xi1> -> tensor<124xf32>
    %279 = kiln.mul %274, %278 : tensor<124xf32>
    %280 = kiln.reduce sum %279, dims = [0] : tensor<124xf32> -> tensor<f32>
    %281 = kiln.neg %280 : tensor<f32>
    %282 = kiln.reduce sum %278, dims = [0] : tensor<124xf32> -> tensor<f32>
    %283 = kiln.div %281, %282 : tensor<f32>
    %284:2 = kiln.optimization_barrier %35, %283 {gradient_seed} : tensor<f32>, tensor<f32>
    %285 = kiln.div %284#0, %282 : tensor<f32>
    %286 = kiln.neg %285 : tensor<f32>
    %287 = kiln.broadcast_in_dim %286, dims = [] : tensor<f32> -> tensor<124xf32>
    %288 = kiln.mul %287, %278 : tensor<124xf32>
    %289 = kiln.broadcast_in_dim %288, dims = [0] : tensor<124xf32> -> tensor<124x256xf32>
    %290 = kiln.constant dense<0.000000e+00> : tensor<f32>
    %291 = kiln.broadcast_in_dim %290, dims = [] : tensor<f32> -> tensor<124x256xf32>
    %292 = kiln.select %34, %289, %291 : tensor<124x256xi1>, tensor<124x256xf32>
    %293 = kiln.neg %292 : tensor<124x256xf32>
    %294 = kiln.reduce sum %293, dims = [1] : tensor<124x256xf32> -> tensor<124xf32>
    %295 = kiln.reshape %294 : tensor<124xf32> -> tensor<124x1xf32>
    %296 = kiln.div %295, %267 : tensor<124x1xf32>
    %297 = kiln.reshape %296 : tensor<124x1xf32> -> tensor<124xf32>
    %298 = kiln.broadcast_in_dim %297, dims = [0] : tensor<124xf32> -> tensor<124x256xf32>
    %299 = kiln.mul %298, %265 : tensor<124x256xf32>
    %300 = kiln.add %292, %299 : tensor<124x256xf32>
    %301 = kiln.reshape %300 : tensor<124x256xf32> -> tensor<4x31x256xf32>
    %302 = kiln.constant dense<0.000000e+00> : tensor<f32>
    %303 = kiln.pad %301, %302, low = [0, 0, 0], high = [0, 1, 0] : tensor<4x31x256xf32>, tensor<f32> -> tensor<4x32x256xf32>
    %304 = kiln.reshape %303 : tensor<4x32x256xf32> -> tensor<128x256xf32>
    %305 = kiln.dot_general %304, %254, batch = [] x [], contract = [0] x [0] : tensor<128x256xf32>, tensor<128x64xf32> -> tensor<256x64xf32>
    %306 = kiln.transpose %305, perm = [1, 0] : tensor<256x64xf32> -> tensor<64x256xf32>
    %307 = kiln.transpose %306, perm = [1, 0] : tensor<64x256xf32> -> tensor<256x64xf32>
    %308 = kiln.constant dense<0.000000e+00> : tensor<f32>
    %309 = kiln.broadcast_in_dim %308, dims = [] : tensor<f32> -> tensor<256x64xf32>
    %310 = kiln.dot_general %304, %255, batch = [] x [], contract = [1] x [1] : tensor<128x256xf32>, tensor<64x256xf32> -> tensor<128x64xf32>
    %311 = kiln.reshape %310 : tensor<128x64xf32> -> tensor<4x32x64xf32>
    %312 = kiln.mul %311, %250 : tensor<4x32x64xf32>
    %313 = kiln.mul %312, %248 : tensor<4x32x64xf32>
    %314 = kiln.mul %312, %240 : tensor<4x32x64xf32>
    %315 = kiln.reduce sum %314, dims = [2] : tensor<4x32x64xf32> -> tensor<4x32xf32>
    %316 = kiln.reshape %315 : tensor<4x32xf32> -> tensor<4x32x1xf32>
    %317 = kiln.mul %246, %246 : tensor<4x32x1xf32>
    %318 = kiln.mul %246, %317 : tensor<4x32x1xf32>
    %319 = kiln.constant dense<-5.000000e-01> : tensor<f32>
    %320 = kiln.broadcast_in_dim %319, dims = [] : tensor<f32> -> tensor<4x32x1xf32>
    %321 = kiln.mul %318, %320 : tensor<4x32x1xf32>
    %322 = kiln.mul %316, %321 : tensor<4x32x1xf32>
    %323 = kiln.div %322, %54 : tensor<4x32x1xf32>
    %324 = kiln.reshape %323 : tensor<4x32x1xf32> -> tensor<4x32xf32>
    %325 = kiln.broadcast_in_dim %324, dims = [0, 1] : tensor<4x32xf32> -> tensor<4x32x64xf32>
    %326 = kiln.mul %325, %240 : tensor<4x32x64xf32>
    %327 = kiln.add %313, %326 : tensor<4x32x64xf32>
    %328 = kiln.add %327, %326 : tensor<4x32x64xf32>
    %329 = kiln.neg %328 : tensor<4x32x64xf32>
    %330 = kiln.reduce sum %329, dims = [2] : tensor<4x32x64xf32> -> tensor<4x32xf32>
    %331 = kiln.reshape %330 : tensor<4x32xf32> -> tensor<4x32x1xf32>
    %332 = kiln.div %331, %54 : tensor<4x32x1xf32>
    %333 = kiln.reshape %332 : tensor<4x32x1xf32> -> tensor<4x32xf32>
    %334 = kiln.broadcast_in_dim %333, dims = [0, 1] : tensor<4x32xf32> -> tensor<4x32x64xf32>
    %335 = kiln.add %328, %334 : tensor<4x32x64xf32>
    %336 = kiln.constant dense<0.000000e+00> : tensor<f32>
    %337 = kiln.broadcast_in_dim %336, dims = [] : tensor<f32> -> tensor<4x32x64xf32>
    %338 = kiln.select %193, %335, %337 : tensor<4x32x64xi1>, tensor<4x32x64xf32>
    %339 = kiln.mul %338, %45 : tensor<4x32x64xf32>
    %340 = kiln.reshape %339 : tensor<4x32x64xf32> -> tensor<128x64xf32>
    %341 = kiln.dot_general %340, %arg29, batch = [] x [], contract = [1] x [1] : tensor<128x64xf32>, tensor<256x64xf32> -> tensor<128x256xf32>
    %342 = kiln.reshape %341 : tensor<128x256xf32> -> tensor<4x32x256xf32>
    %343 = kiln.mul %342, %218 : tensor<4x32x256xf32>
    %344 = kiln.constant dense<1.000000e+00> : tensor<f32>
    %345 = kiln.broadcast_in_dim %344, dims = [] : tensor<f32> -> tensor<4x32x256xf32>
    %346 = kiln.mul %224, %224 : tensor<4x32x256xf32>
    %347 = kiln.sub %345, %346 : tensor<4x32x256xf32>
    %348 = kiln.mul %343, %347 : tensor<4x32x256xf32>
    %349 = kiln.mul %348, %134 : tensor<4x32x256xf32>
    %350 = kiln.mul %349, %130 : tensor<4x32x256xf32>
    %351 = kiln.mul %350, %219 : tensor<4x32x256xf32>
    %352 = kiln.add %349, %351 : tensor<4x32x256xf32>
    %353 = kiln.mul %350, %217 : tensor<4x32x256xf32>
    %354 = kiln.mul %353, %217 : tensor<4x32x256xf32>
    %355 = kiln.add %352, %354 : tensor<4x32x256xf32>
    %356 = kiln.add %355, %354 : tensor<4x32x256xf32>
    %357 = kiln.mul %342, %225 : tensor<4x32x256xf32>
    %358 = kiln.mul %357, %125 : tensor<4x32x256xf32>
    %359 = kiln.add %356, %358 : tensor<4x32x256xf32>
    %360 = kiln.reshape %359 : tensor<4x32x256xf32> -> tensor<128x256xf32>
    %361 = kiln.dot_general %360, %arg27, batch = [] x [], contract = [1] x [1] : tensor<128x256xf32>, tensor<64x256xf32> -> tensor<128x64xf32>
    %362 = kiln.reshape %361 : tensor<128x64xf32> -> tensor<4x32x64xf32>
    %363 = kiln.mul %362, %209 : tensor<4x32x64xf32>
    %364 = kiln.mul %363, %207 : tensor<4x32x64xf32>
    %365 = kiln.mul %363, %199 : tensor<4x32x64xf32>
    %366 = kiln.reduce sum %365, dims = [2] : tensor<4x32x64xf32> -> tensor<4x32xf32>
    %367 = kiln.reshape %366 : tensor<4x32xf32> -> tensor<4x32x1xf32>
    %368 = kiln.mul %205, %205 : tensor<4x32x1xf32>
    %369 = kiln.mul %205, %368 : tensor<4x32x1xf32>
    %370 = kiln.mul %369, %320 : tensor<4x32x1xf32>
    %371 = kiln.mul %367, %370 : tensor<4x32x1xf32>
    %372 = kiln.div %371, %54 : tensor<4x32x1xf32>
    %373 = kiln.reshape %372 : tensor<4x32x1xf32> -> tensor<4x32xf32>
    %374 = kiln.broadcast_in_dim %373, dims = [0, 1] : tensor<4x32xf32> -> tensor<4x32x64xf32>
    %375 = kiln.mul %374, %199 : tensor<4x32x64xf32>
    %376 = kiln.add %364, %375 : tensor<4x32x64xf32>
    %377 = kiln.add %376, %375 : tensor<4x32x64xf32>
    %378 = kiln.add %335, %377 : tensor<4x32x64xf32>
    %379 = kiln.neg %377 : tensor<4x32x64xf32>
    %380 = kiln.reduce sum %379, dims = [2] : tensor<4x32x64xf32> -> tensor<4x32xf32>
    %381 = kiln.reshape %380 : tensor<4x32xf32> -> tensor<4x32x1xf32>
    %382 = kiln.div %381, %54 : tensor<4x32x1xf32>
    %383 = kiln.reshape %382 : tensor<4x32x1xf32> -> tensor<4x32xf32>
    %384 = kiln.broadcast_in_dim %383, dims = [0, 1] : tensor<4x32xf32> -> tensor<4x32x64xf32>
    %385 = kiln.add %378, %384 : tensor<4x32x64xf32>
    %386 = kiln.select %148, %385, %337 : tensor<4x32x64xi1>, tensor<4x32x64xf32>
    %387 = kiln.mul %386, %45 : tensor<4x32x64xf32>
    %388 = kiln.reshape %387 : tensor<4x32x64xf32> -> tensor<128x64xf32>
    %389 = kiln.dot_general %388, %arg23, batch = [] x [], contract = [1] x [1] : tensor<128x64xf32>, tensor<64x64xf32> -> tensor<128x64xf32>
    %390 = kiln.reshape %389 : tensor<128x64xf32> -> tensor<4x32x64xf32>
    %391 = kiln.reshape %390 : tensor<4x32x64xf32> -> tensor<4x32x4x16xf32>
    %392 = kiln.transpose %391, perm = [0, 2, 1, 3] : tensor<4x32x4x16xf32> -> tensor<4x4x32x16xf32>
    %query_grad, %key_grad, %value_grad = kiln.fused_attention_grad %175, %178, %181, %182, %stats_182, %392, rng = %7 {causal, dropout = 1.000000e-01 : f64, scale = 2.500000e-01 : f64} : tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32xf32>, tensor<4x4x32x16xf32>, tensor<2xi64> -> tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>
    %393 = kiln.transpose %value_grad, perm = [0, 2, 1, 3] : tensor<4x4x32x16xf32> -> tensor<4x32x4x16xf32>
    %394 = kiln.reshape %393 : tensor<4x32x4x16xf32> -> tensor<4x32x64xf32>
    %395 = kiln.constant dense<0.000000e+00> : tensor<f32>
    %396 = kiln.pad %394, %395, low = [0, 0, 128], high = [0, 0, 0] : tensor<4x32x64xf32>, tensor<f32> -> tensor<4x32x192xf32>
    %query_grad_8, %key_grad_9, %value_grad_10 = kiln.fused_attention_grad %175, %178, %181, %182, %stats_182, %392, rng = %7 {causal, dropout = 1.000000e-01 : f64, scale = 2.500000e-01 : f64} : tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32xf32>, tensor<4x4x32x16xf32>, tensor<2xi64> -> tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>
    %397 = kiln.transpose %key_grad_9, perm = [0, 2, 1, 3] : tensor<4x4x32x16xf32> -> tensor<4x32x4x16xf32>
    %398 = kiln.reshape %397 : tensor<4x32x4x16xf32> -> tensor<4x32x64xf32>
    %399 = kiln.constant dense<0.000000e+00> : tensor<f32>
    %400 = kiln.pad %398, %399, low = [0, 0, 64], high = [0, 0, 64] : tensor<4x32x64xf32>, tensor<f32> -> tensor<4x32x192xf32>
    %401 = kiln.add %396, %400 : tensor<4x32x192xf32>
    %query_grad_11, %key_grad_12, %value_grad_13 = kiln.fused_attention_grad %175, %178, %181, %182, %stats_182, %392, rng = %7 {causal, dropout = 1.000000e-01 : f64, scale = 2.500000e-01 : f64} : tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32xf32>, tensor<4x4x32x16xf32>, tensor<2xi64> -> tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>
    %402 = kiln.transpose %query_grad_11, perm = [0, 2, 1, 3] : tensor<4x4x32x16xf32> -> tensor<4x32x4x16xf32>
    %403 = kiln.reshape %402 : tensor<4x32x4x16xf32> -> tensor<4x32x64xf32>
    %404 = kiln.constant dense<0.000000e+00> : tensor<f32>
    %405 = kiln.pad %403, %404, low = [0, 0, 0], high = [0, 0, 128] : tensor<4x32x64xf32>, tensor<f32> -> tensor<4x32x192xf32>
    %406 = kiln.add %401, %405 : tensor<4x32x192xf32>
    %407 = kiln.reshape %406 : tensor<4x32x192xf32> -> tensor<128x192xf32>
    %408 = kiln.dot_general %407, %arg21, batch = [] x [], contract = [1] x [1] : tensor<128x192xf32>, tensor<64x192xf32> -> tensor<128x64xf32>
    %409 = kiln.reshape %408 : tensor<128x64xf32> -> tensor<4x32x64xf32>
    %410 = kiln.mul %409, %164 : tensor<4x32x64xf32>
    %411 = kiln.mul %410, %162 : tensor<4x32x64xf32>
    %412 = kiln.mul %410, %154 : tensor<4x32x64xf32>
    %413 = kiln.reduce sum %412, dims = [2] : tensor<4x32x64xf32> -> tensor<4x32xf32>
    %414 = kiln.reshape %413 : tensor<4x32xf32> -> tensor<4x32x1xf32>
    %415 = kiln.mul %160, %160 : tensor<4x32x1xf32>
    %416 = kiln.mul %160, %415 : tensor<4x32x1xf32>
    %417 = kiln.mul %416, %320 : tensor<4x32x1xf32>
    %418 = kiln.mul %414, %417 : tensor<4x32x1xf32>
    %419 = kiln.div %418, %54 : tensor<4x32x1xf32>
    %420 = kiln.reshape %419 : tensor<4x32x1xf32> -> tensor<4x32xf32>
    %421 = kiln.broadcast_in_dim %420, dims = [0, 1] : tensor<4x32xf32> -> tensor<4x32x64xf32>
    %422 = kiln.mul %421, %154 : tensor<4x32x64xf32>
    %423 = kiln.add %411, %422 : tensor<4x32x64xf32>
    %424 = kiln.add %423, %422 : tensor<4x32x64xf32>
    %425 = kiln.add %385, %424 : tensor<4x32x64xf32>
    %426 = kiln.neg %424 : tensor<4x32x64xf32>
    %427 = kiln.reduce sum %426, dims = [2] : tensor<4x32x64xf32> -> tensor<4x32xf32>
    %428 = kiln.reshape %427 : tensor<4x32xf32> -> tensor<4x32x1xf32>
    %429 = kiln.div %428, %54 : tensor<4x32x1xf32>
    %430 = kiln.reshape %429 : tensor<4x32x1xf32> -> tensor<4x32xf32>
    %431 = kiln.broadcast_in_dim %430, dims = [0, 1] : tensor<4x32xf32> -> tensor<4x32x64xf32>
    %432 = kiln.add %425, %431 : tensor<4x32x64xf32>
    %433 = kiln.select %99, %432, %337 : tensor<4x32x64xi1>, tensor<4x32x64xf32>
    %434 = kiln.mul %433, %45 : tensor<4x32x64xf32>
    %435 = kiln.reshape %434 : tensor<4x32x64xf32> -> tensor<128x64xf32>
    %436 = kiln.dot_general %435, %arg17, batch = [] x [], contract = [1] x [1] : tensor<128x64xf32>, tensor<256x64xf32> -> tensor<128x256xf32>
    %437 = kiln.reshape %436 : tensor<128x256xf32> -> tensor<4x32x256xf32>
    %438 = kiln.mul %437, %126 : tensor<4x32x256xf32>
    %439 = kiln.mul %136, %136 : tensor<4x32x256xf32>
    %440 = kiln.sub %345, %439 : tensor<4x32x256xf32>
    %441 = kiln.mul %438, %440 : tensor<4x32x256xf32>
    %442 = kiln.mul %441, %134 : tensor<4x32x256xf32>
    %443 = kiln.mul %442, %130 : tensor<4x32x256xf32>
    %444 = kiln.mul %443, %127 : tensor<4x32x256xf32>
    %445 = kiln.add %442, %444 : tensor<4x32x256xf32>
    %446 = kiln.mul %443, %123 : tensor<4x32x256xf32>
    %447 = kiln.mul %446, %123 : tensor<4x32x256xf32>
    %448 = kiln.add %445, %447 : tensor<4x32x256xf32>
    %449 = kiln.add %448, %447 : tensor<4x32x256xf32>
    %450 = kiln.mul %437, %138 : tensor<4x32x256xf32>
    %451 = kiln.mul %450, %125 : tensor<4x32x256xf32>
    %452 = kiln.add %449, %451 : tensor<4x32x256xf32>
    %453 = kiln.reshape %452 : tensor<4x32x256xf32> -> tensor<128x256xf32>
    %454 = kiln.dot_general %453, %arg15, batch = [] x [], contract = [1] x [1] : tensor<128x256xf32>, tensor<64x256xf32> -> tensor<128x64xf32>
    %455 = kiln.reshape %454 : tensor<128x64xf32> -> tensor<4x32x64xf32>
    %456 = kiln.mul %455, %115 : tensor<4x32x64xf32>
    %457 = kiln.mul %456, %113 : tensor<4x32x64xf32>
    %458 = kiln.mul %456, %105 : tensor<4x32x64xf32>
    %459 = kiln.reduce sum %458, dims = [2] : tensor<4x32x64xf32> -> tensor<4x32xf32>
    %460 = kiln.reshape %459 : tensor<4x32xf32> -> tensor<4x32x1xf32>
    %461 = kiln.mul %111, %111 : tensor<4x32x1xf32>
    %462 = kiln.mul %111, %461 : tensor<4x32x1xf32>
    %463 = kiln.mul %462, %320 : tensor<4x32x1xf32>
    %464 = kiln.mul %460, %463 : tensor<4x32x1xf32>
    %465 = kiln.div %464, %54 : tensor<4x32x1xf32>
    %466 = kiln.reshape %465 : tensor<4x32x1xf32> -> tensor<4x32xf32>
    %467 = kiln.broadcast_in_dim %466, dims = [0, 1] : tensor<4x32xf32> -> tensor<4x32x64xf32>
    %468 = kiln.mul %467, %105 : tensor<4x32x64xf32>
    %469 = kiln.add %457, %468 : tensor<4x32x64xf32>
    %470 = kiln.add %469, %468 : tensor<4x32x64xf32>
    %471 = kiln.add %432, %470 : tensor<4x32x64xf32>
    %472 = kiln.neg %470 : tensor<4x32x64xf32>
    %473 = kiln.reduce sum %472, dims = [2] : tensor<4x32x64xf32> -> tensor<4x32xf32>
    %474 = kiln.reshape %473 : tensor<4x32xf32> -> tensor<4x32x1xf32>
    %475 = kiln.div %474, %54 : tensor<4x32x1xf32>
    %476 = kiln.reshape %475 : tensor<4x32x1xf32> -> tensor<4x32xf32>
    %477 = kiln.broadcast_in_dim %476, dims = [0, 1] : tensor<4x32xf32> -> tensor<4x32x64xf32>
    %478 = kiln.add %471, %477 : tensor<4x32x64xf32>
    %479 = kiln.select %50, %478, %337 : tensor<4x32x64xi1>, tensor<4x32x64xf32>
    %480 = kiln.mul %479, %45 : tensor<4x32x64xf32>
    %481 = kiln.reshape %480 : tensor<4x32x64xf32> -> tensor<128x64xf32>
    %482 = kiln.dot_general %481, %arg11, batch = [] x [], contract = [1] x [1] : tensor<128x64xf32>, tensor<64x64xf32> -> tensor<128x64xf32>
    %483 = kiln.reshape %482 : tensor<128x64xf32> -> tensor<4x32x64xf32>
    %484 = kiln.reshape %483 : tensor<4x32x64xf32> -> tensor<4x32x4x16xf32>
    %485 = kiln.transpose %484, perm = [0, 2, 1, 3] : tensor<4x32x4x16xf32> -> tensor<4x4x32x16xf32>
    %query_grad_14, %key_grad_15, %value_grad_16 = kiln.fused_attention_grad %81, %84, %87, %88, %stats_88, %485, rng = %1 {causal, dropout = 1.000000e-01 : f64, scale = 2.500000e-01 : f64} : tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32xf32>, tensor<4x4x32x16xf32>, tensor<2xi64> -> tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>
    %486 = kiln.transpose %value_grad_16, perm = [0, 2, 1, 3] : tensor<4x4x32x16xf32> -> tensor<4x32x4x16xf32>
    %487 = kiln.reshape %486 : tensor<4x32x4x16xf32> -> tensor<4x32x64xf32>
    %488 = kiln.constant dense<0.000000e+00> : tensor<f32>
    %489 = kiln.pad %487, %488, low = [0, 0, 128], high = [0, 0, 0] : tensor<4x32x64xf32>, tensor<f32> -> tensor<4x32x192xf32>
    %query_grad_17, %key_grad_18, %value_grad_19 = kiln.fused_attention_grad %81, %84, %87, %88, %stats_88, %485, rng = %1 {causal, dropout = 1.000000e-01 : f64, scale = 2.500000e-01 : f64} : tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32xf32>, tensor<4x4x32x16xf32>, tensor<2xi64> -> tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>
    %490 = kiln.transpose %key_grad_18, perm = [0, 2, 1, 3] : tensor<4x4x32x16xf32> -> tensor<4x32x4x16xf32>
    %491 = kiln.reshape %490 : tensor<4x32x4x16xf32> -> tensor<4x32x64xf32>
    %492 = kiln.constant dense<0.000000e+00> : tensor<f32>
    %493 = kiln.pad %491, %492, low = [0, 0, 64], high = [0, 0, 64] : tensor<4x32x64xf32>, tensor<f32> -> tensor<4x32x192xf32>
    %494 = kiln.add %489, %493 : tensor<4x32x192xf32>
    %query_grad_20, %key_grad_21, %value_grad_22 = kiln.fused_attention_grad %81, %84, %87, %88, %stats_88, %485, rng = %1 {causal, dropout = 1.000000e-01 : f64, scale = 2.500000e-01 : f64} : tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32xf32>, tensor<4x4x32x16xf32>, tensor<2xi64> -> tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>
    %495 = kiln.transpose %query_grad_20, perm = [0, 2, 1, 3] : tensor<4x4x32x16xf32> -> tensor<4x32x4x16xf32>
    %496 = kiln.reshape %495 : tensor<4x32x4x16xf32> -> tensor<4x32x64xf32>
    %497 = kiln.constant dense<0.000000e+00> : tensor<f32>
    %498 = kiln.pad %496, %497, low = [0, 0, 0], high = [0, 0, 128] : tensor<4x32x64xf32>, tensor<f32> -> tensor<4x32x192xf32>
    %499 = kiln.add %494, %498 : tensor<4x32x192xf32>
    %500 = kiln.reshape %499 : tensor<4x32x192xf32> -> tensor<128x192xf32>
    %501 = kiln.dot_general %500, %arg9, batch = [] x [], contract = [1] x [1] : tensor<128x192xf32>, tensor<64x192xf32> -> tensor<128x64xf32>
    %502 = kiln.reshape %501 : tensor<128x64xf32> -> tensor<4x32x64xf32>
    %503 = kiln.mul %502, %70 : tensor<4x32x64xf32>
    %504 = kiln.mul %503, %68 : tensor<4x32x64xf32>
    %505 = kiln.mul %503, %58 : tensor<4x32x64xf32>
    %506 = kiln.reduce sum %505, dims = [2] : tensor<4x32x64xf32> -> tensor<4x32xf32>
    %507 = kiln.reshape %506 : tensor<4x32xf32> -> tensor<4x32x1xf32>
    %508 = kiln.mul %66, %66 : tensor<4x32x1xf32>
    %509 = kiln.mul %66, %508 : tensor<4x32x1xf32>
    %510 = kiln.mul %509, %320 : tensor<4x32x1xf32>
    %511 = kiln.mul %507, %510 : tensor<4x32x1xf32>
    %512 = kiln.div %511, %54 : tensor<4x32x1xf32>
    %513 = kiln.reshape %512 : tensor<4x32x1xf32> -> tensor<4x32xf32>
    %514 = kiln.broadcast_in_dim %513, dims = [0, 1] : tensor<4x32xf32> -> tensor<4x32x64xf32>
    %515 = kiln.mul %514, %58 : tensor<4x32x64xf32>
    %516 = kiln.add %504, %515 : tensor<4x32x64xf32>
    %517 = kiln.add %516, %515 : tensor<4x32x64xf32>
    %518 = kiln.add %478, %517 : tensor<4x32x64xf32>
    %519 = kiln.neg %517 : tensor<4x32x64xf32>
    %520 = kiln.reduce sum %519, dims = [2] : tensor<4x32x64xf32> -> tensor<4x32xf32>
    %521 = kiln.reshape %520 : tensor<4x32xf32> -> tensor<4x32x1xf32>
    %522 = kiln.div %521, %54 : tensor<4x32x1xf32>
    %523 = kiln.reshape %522 : tensor<4x32x1xf32> -> tensor<4x32xf32>
    %524 = kiln.broadcast_in_dim %523, dims = [0, 1] : tensor<4x32xf32> -> tensor<4x32x64xf32>
    %525 = kiln.add %518, %524 : tensor<4x32x64xf32>
    %526 = kiln.select %38, %525, %337 : tensor<4x32x64xi1>, tensor<4x32x64xf32>
    %527 = kiln.mul %526, %45 : tensor<4x32x64xf32>
    %528 = kiln.scatter_add %309[%arg5], %527, axis = 0 : tensor<256x64xf32>, tensor<4x32xi64>, tensor<4x32x64xf32>
    %529 = kiln.add %307, %528 : tensor<256x64xf32>
    %530 = kiln.mul %529, %529 : tensor<256x64xf32>
    %531 = kiln.reduce sum %530, dims = [0, 1] : tensor<256x64xf32> -> tensor<f32>
    %532 = kiln.constant dense<0.000000e+00> : tensor<f32>
    %533 = kiln.broadcast_in_dim %532, dims = [] : tensor<f32> -> tensor<32x64xf32>
    %534 = kiln.reduce sum %527, dims = [0] : tensor<4x32x64xf32> -> tensor<32x64xf32>
    %535 = kiln.scatter_add %533[%40], %534, axis = 0 : tensor<32x64xf32>, tensor<32xi64>, tensor<32x64xf32>
    %536 = kiln.mul %535, %535 : tensor<32x64xf32>
    %537 = kiln.reduce sum %536, dims = [0, 1] : tensor<32x64xf32> -> tensor<f32>
    %538 = kiln.add %531, %537 : tensor<f32>
    %539 = kiln.mul %502, %69 : tensor<4x32x64xf32>
    %540 = kiln.reduce sum %539, dims = [0, 1] : tensor<4x32x64xf32> -> tensor<64xf32>
    %541 = kiln.mul %540, %540 : tensor<64xf32>
    %542 = kiln.reduce sum %541, dims = [0] : tensor<64xf32> -> tensor<f32>
    %543 = kiln.add %538, %542 : tensor<f32>
    %544 = kiln.reduce sum %502, dims = [0, 1] : tensor<4x32x64xf32> -> tensor<64xf32>
    %545 = kiln.mul %544, %544 : tensor<64xf32>
    %546 = kiln.reduce sum %545, dims = [0] : tensor<64xf32> -> tensor<f32>
    %547 = kiln.add %543, %546 : tensor<f32>
    %548 = kiln.dot_general %500, %74, batch = [] x [], contract = [0] x [0] : tensor<128x192xf32>, tensor<128x64xf32> -> tensor<192x64xf32>
    %549 = kiln.transpose %548, perm = [1, 0] : tensor<192x64xf32> -> tensor<64x192xf32>
    %550 = kiln.mul %549, %549 : tensor<64x192xf32>
    %551 = kiln.reduce sum %550, dims = [0, 1] : tensor<64x192xf32> -> tensor<f32>
    %552 = kiln.add %547, %551 : tensor<f32>
    %553 = kiln.reduce sum %499, dims = [0, 1] : tensor<4x32x192xf32> -> tensor<192xf32>
    %554 = kiln.mul %553, %553 : tensor<192xf32>
    %555 = kiln.reduce sum %554, dims = [0] : tensor<192xf32> -> tensor<f32>
    %556 = kiln.add %552, %555 : tensor<f32>
    %557 = kiln.dot_general %481, %91, batch = [] x [], contract = [0] x [0] : tensor<128x64xf32>, tensor<128x64xf32> -> tensor<64x64xf32>
    %558 = kiln.transpose %557, perm = [1, 0] : tensor<64x64xf32> -> tensor<64x64xf32>
    %559 = kiln.mul %558, %558 : tensor<64x64xf32>
    %560 = kiln.reduce sum %559, dims = [0, 1] : tensor<64x64xf32> -> tensor<f32>
    %561 = kiln.add %556, %560 : tensor<f32>
    %562 = kiln.reduce sum %480, dims = [0, 1] : tensor<4x32x64xf32> -> tensor<64xf32>
    %563 = kiln.mul %562, %562 : tensor<64xf32>
    %564 = kiln.reduce sum %563, dims = [0] : tensor<64xf32> -> tensor<f32>
    %565 = kiln.add %561, %564 : tensor<f32>
    %566 = kiln.mul %455, %114 : tensor<4x32x64xf32>
    %567 = kiln.reduce sum %566, dims = [0, 1] : tensor<4x32x64xf32> -> tensor<64xf32>
    %568 = kiln.mul %567, %567 : tensor<64xf32>
    %569 = kiln.reduce sum %568, dims = [0] : tensor<64xf32> -> tensor<f32>
    %570 = kiln.add %565, %569 : tensor<f32>
    %571 = kiln.reduce sum %455, dims = [0, 1] : tensor<4x32x64xf32> -> tensor<64xf32>
    %572 = kiln.mul %571, %571 : tensor<64xf32>
    %573 = kiln.reduce sum %572, dims = [0] : tensor<64xf32> -> tensor<f32>
    %574 = kiln.add %570, %573 : tensor<f32>
    %575 = kiln.dot_general %453, %119, batch = [] x [], contract = [0] x [0] : tensor<128x256xf32>, tensor<128x64xf32> -> tensor<256x64xf32>
    %576 = kiln.transpose %575, perm = [1, 0] : tensor<256x64xf32> -> tensor<64x256xf32>
    %577 = kiln.mul %576, %576 : tensor<64x256xf32>
    %578 = kiln.reduce sum %577, dims = [0, 1] : tensor<64x256xf32> -> tensor<f32>
    %579 = kiln.add %574, %578 : tensor<f32>
    %580 = kiln.reduce sum %452, dims = [0, 1] : tensor<4x32x256xf32> -> tensor<256xf32>
    %581 = kiln.mul %580, %580 : tensor<256xf32>
    %582 = kiln.reduce sum %581, dims = [0] : tensor<256xf32> -> tensor<f32>
    %583 = kiln.add %579, %582 : tensor<f32>
    %584 = kiln.dot_general %435, %140, batch = [] x [], contract = [0] x [0] : tensor<128x64xf32>, tensor<128x256xf32> -> tensor<64x256xf32>
    %585 = kiln.transpose %584, perm = [1, 0] : tensor<64x256xf32> -> tensor<256x64xf32>
    %586 = kiln.mul %585, %585 : tensor<256x64xf32>
    %587 = kiln.reduce sum %586, dims = [0, 1] : tensor<256x64xf32> -> tensor<f32>
    %588 = kiln.add %583, %587 : tensor<f32>
    %589 = kiln.reduce sum %434, dims = [0, 1] : tensor<4x32x64xf32> -> tensor<64xf32>
    %590 = kiln.mul %589, %589 : tensor<64xf32>
    %591 = kiln.reduce sum %590, dims = [0] : tensor<64xf32> -> tensor<f32>
    %592 = kiln.add %588, %591 : tensor<f32>
    %593 = kiln.mul %409, %163 : tensor<4x32x64xf32>
    %594 = kiln.reduce sum %593, dims = [0, 1] : tensor<4x32x64xf32> -> tensor<64xf32>
    %595 = kiln.mul %594, %594 : tensor<64xf32>
    %596 = kiln.reduce sum %595, dims = [0] : tensor<64xf32> -> tensor<f32>
    %597 = kiln.add %592, %596 : tensor<f32>
    %598 = kiln.reduce sum %409, dims = [0, 1] : tensor<4x32x64xf32> -> tensor<64xf32>
    %599 = kiln.mul %598, %598 : tensor<64xf32>
    %600 = kiln.reduce sum %599, dims = [0] : tensor<64xf32> -> tensor<f32>
    %601 = kiln.add %597, %600 : tensor<f32>
    %602 = kiln.dot_general %407, %168, batch = [] x [], contract = [0] x [0] : tensor<128x192xf32>, tensor<128x64xf32> -> tensor<192x64xf32>
    %603 = kiln.transpose %602, perm = [1, 0] : tensor<192x64xf32> -> tensor<64x192xf32>
    %604 = kiln.mul %603, %603 : tensor<64x192xf32>
    %605 = kiln.reduce sum %604, dims = [0, 1] : tensor<64x192xf32> -> tensor<f32>
    %606 = kiln.add %601, %605 : tensor<f32>
    %607 = kiln.reduce sum %406, dims = [0, 1] : tensor<4x32x192xf32> -> tensor<192xf32>
    %608 = kiln.mul %607, %607 : tensor<192xf32>
    %609 = kiln.reduce sum %608, dims = [0] : tensor<192xf32> -> tensor<f32>
    %610 = kiln.add %606, %609 : tensor<f32>
    %611 = kiln.dot_general %388, %185, batch = [] x [], contract = [0] x [0] : tensor<128x64xf32>, tensor<128x64xf32> -> tensor<64x64xf32>
    %612 = kiln.transpose %611, perm = [1, 0] : tensor<64x64xf32> -> tensor<64x64xf32>
    %613 = kiln.mul %612, %612 : tensor<64x64xf32>
    %614 = kiln.reduce sum %613, dims = [0, 1] : tensor<64x64xf32> -> tensor<f32>
    %615 = kiln.add %610, %614 : tensor<f32>
    %616 = kiln.reduce sum %387, dims = [0, 1] : tensor<4x32x64xf32> -> tensor<64xf32>
    %617 = kiln.mul %616, %616 : tensor<64xf32>
    %618 = kiln.reduce sum %617, dims = [0] : tensor<64xf32> -> tensor<f32>
    %619 = kiln.add %615, %618 : tensor<f32>
    %620 = kiln.mul %362, %208 : tensor<4x32x64xf32>
    %621 = kiln.reduce sum %620, dims = [0, 1] : tensor<4x32x64xf32> -> tensor<64xf32>
    %622 = kiln.mul %621, %621 : tensor<64xf32>
    %623 = kiln.reduce sum %622, dims = [0] : tensor<64xf32> -> tensor<f32>
    %624 = kiln.add %619, %623 : tensor<f32>
    %625 = kiln.reduce sum %362, dims = [0, 1] : tensor<4x32x64xf32> -> tensor<64xf32>
    %626 = kiln.mul %625, %625 : tensor<64xf32>
    %627 = kiln.reduce sum %626, dims = [0] : tensor<64xf32> -> tensor<f32>
    %628 = kiln.add %624, %627 : tensor<f32>
    %629 = kiln.dot_general %360, %213, batch = [] x [], contract = [0] x [0] : tensor<128x256xf32>, tensor<128x64xf32> -> tensor<256x64xf32>
    %630 = kiln.transpose %629, perm = [1, 0] : tensor<256x64xf32> -> tensor<64x256xf32>
    %631 = kiln.mul %630, %630 : tensor<64x256xf32>
    %632 = kiln.reduce sum %631, dims = [0, 1] : tensor<64x256xf32> -> tensor<f32>
    %633 = kiln.add %628, %632 : tensor<f32>
    %634 = kiln.reduce sum %359, dims = [0, 1] : tensor<4x32x256xf32> -> tensor<256xf32>
    %635 = kiln.mul %634, %634 : tensor<256xf32>
    %636 = kiln.reduce sum %635, dims = [0] : tensor<256xf32> -> tensor<f32>
    %637 = kiln.add %633, %636 : tensor<f32>
    %638 = kiln.dot_general %340, %227, batch = [] x [], contract = [0] x [0] : tensor<128x64xf32>, tensor<128x256xf32> -> tensor<64x256xf32>
    %639 = kiln.transpose %638, perm = [1, 0] : tensor<64x256xf32> -> tensor<256x64xf32>
    %640 = kiln.mul %639, %639 : tensor<256x64xf32>
    %641 = kiln.reduce sum %640, dims = [0, 1] : tensor<256x64xf32> -> tensor<f32>
    %642 = kiln.add %637, %641 : tensor<f32>
    %643 = kiln.reduce sum %339, dims = [0, 1] : tensor<4x32x64xf32> -> tensor<64xf32>
    %644 = kiln.mul %643, %643 : tensor<64xf32>
    %645 = kiln.reduce sum %644, dims = [0] : tensor<64xf32> -> tensor<f32>
    %646 = kiln.add %642, %645 : tensor<f32>
    %647 = kiln.mul %311, %249 : tensor<4x32x64xf32>
    %648 = kiln.reduce sum %647, dims = [0, 1] : tensor<4x32x64xf32> -> tensor<64xf32>
    %649 = kiln.mul %648, %648 : tensor<64xf32>
    %650 = kiln.reduce sum %649, dims = [0] : tensor<64xf32> -> tensor<f32>
    %651 = kiln.add %646, %650 : tensor<f32>
    %652 = kiln.reduce sum %311, dims = [0, 1] : tensor<4x32x64xf32> -> tensor<64xf32>
    %653 = kiln.mul %652, %652 : tensor<64xf32>
    %654 = kiln.reduce sum %653, dims = [0] : tensor<64xf32> -> tensor<f32>
    %655 = kiln.add %651, %654 : tensor<f32>
    %656 = kiln.sqrt %655 : tensor<f32>
    %657 = kiln.constant dense<9.99999997E-7> : tensor<f32>
    %658 = kiln.add %656, %657 : tensor<f32>
    %659 = kiln.div %35, %658 : tensor<f32>
    %660 = kiln.max %659, %47 : tensor<f32>
    %661 = kiln.min %660, %35 : tensor<f32>
    %662 = kiln.broadcast_in_dim %661, dims = [] : tensor<f32> -> tensor<256x64xf32>
    %663 = kiln.mul %529, %662 : tensor<256x64xf32>
    %664 = kiln.sub %663, %arg4 : tensor<256x64xf32>
    %665 = kiln.broadcast_in_dim %36, dims = [] : tensor<f32> -> tensor<256x64xf32>
    %666 = kiln.mul %664, %665 : tensor<256x64xf32>
    %667 = kiln.add %arg4, %666 : tensor<256x64xf32>
    %668 = kiln.constant dense<9.990000e-01> : tensor<f32>
    %669 = kiln.broadcast_in_dim %668, dims = [] : tensor<f32> -> tensor<256x64xf32>
    %670 = kiln.mul %arg33, %669 : tensor<256x64xf32>
    %671 = kiln.mul %663, %663 : tensor<256x64xf32>
    %672 = kiln.constant dense<1.000000e-03> : tensor<f32>
    %673 = kiln.broadcast_in_dim %672, dims = [] : tensor<f32> -> tensor<256x64xf32>
    %674 = kiln.mul %671, %673 : tensor<256x64xf32>
    %675 = kiln.add %670, %674 : tensor<256x64xf32>
    %676 = kiln.sqrt %675 : tensor<256x64xf32>
    %677 = kiln.constant dense<-0.0010005003335835344> : tensor<f64>
    %678 = kiln.mul %arg3, %677 : tensor<f64>
    %679 = kiln.exp %678 : tensor<f64>
    %680 = kiln.sub %14, %679 : tensor<f64>
    %681 = kiln.sqrt %680 : tensor<f64>
    %682 = kiln.convert %681 : tensor<f64> -> tensor<f32>
    %683 = kiln.broadcast_in_dim %682, dims = [] : tensor<f32> -> tensor<256x64xf32>
    %684 = kiln.div %676, %683 : tensor<256x64xf32>
    %685 = kiln.constant dense<9.99999993E-9> : tensor<f32>
    %686 = kiln.broadcast_in_dim %685, dims = [] : tensor<f32> -> tensor<256x64xf32>
    %687 = kiln.add %684, %686 : tensor<256x64xf32>
    %688 = kiln.div %667, %687 : tensor<256x64xf32>
    %689 = kiln.mul %27, %688 : tensor<256x64xf32>
    %690 = kiln.sub %20, %689 : tensor<256x64xf32>
    %691 = kiln.broadcast_in_dim %18, dims = [] : tensor<f32> -> tensor<32x64xf32>
    %692 = kiln.mul %arg6, %691 : tensor<32x64xf32>
    %693 = kiln.broadcast_in_dim %26, dims = [] : tensor<f32> -> tensor<32x64xf32>
    %694 = kiln.broadcast_in_dim %661, dims = [] : tensor<f32> -> tensor<32x64xf32>
    %695 = kiln.mul %535, %694 : tensor<32x64xf32>
    %696 = kiln.sub %695, %arg34 : tensor<32x64xf32>
    %697 = kiln.broadcast_in_dim %36, dims = [] : tensor<f32> -> tensor<32x64xf32>
    %698 = kiln.mul %696, %697 : tensor<32x64xf32>
    %699 = kiln.add %arg34, %698 : tensor<32x64xf32>
    %700 = kiln.broadcast_in_dim %668, dims = [] : tensor<f32> -> tensor<32x64xf32>
    %701 = kiln.mul %arg35, %700 : tensor<32x64xf32>
    %702 = kiln.mul %695, %695 : tensor<32x64xf32>
    %703 = kiln.broadcast_in_dim %672, dims = [] : tensor<f32> -> tensor<32x64xf32>
    %704 = kiln.mul %702, %703 : tensor<32x64xf32>
    %705 = kiln.add %701, %704 : tensor<32x64xf32>
    %706 = kiln.sqrt %705 : tensor<32x64xf32>
    %707 = kiln.broadcast_in_dim %682, dims = [] : tensor<f32> -> tensor<32x64xf32>
    %708 = kiln.div %706, %707 : tensor<32x64xf32>
    %709 = kiln.broadcast_in_dim %685, dims = [] : tensor<f32> -> tensor<32x64xf32>
    %710 = kiln.add %708, %709 : tensor<32x64xf32>
    %711 = kiln.div %699, %710 : tensor<32x64xf32>
    %712 = kiln.mul %693, %711 : tensor<32x64xf32>
    %713 = kiln.sub %692, %712 : tensor<32x64xf32>
    %714 = kiln.broadcast_in_dim %18, dims = [] : tensor<f32> -> tensor<64xf32>
    %715 = kiln.mul %arg7, %714 : tensor<64xf32>
    %716 = kiln.broadcast_in_dim %26, dims = [] : tensor<f32> -> tensor<64xf32>
    %717 = kiln.broadcast_in_dim %661, dims = [] : tensor<f32> -> tensor<64xf32>
    %718 = kiln.mul %540, %717 : tensor<64xf32>
    %719 = kiln.sub %718, %arg36 : tensor<64xf32>
    %720 = kiln.broadcast_in_dim %36, dims = [] : tensor<f32> -> tensor<64xf32>
    %721 = kiln.mul %719, %720 : tensor<64xf32>
    %722 = kiln.add %arg36, %721 : tensor<64xf32>
    %723 = kiln.broadcast_in_dim %668, dims = [] : tensor<f32> -> tensor<64xf32>
    %724 = kiln.mul %arg37, %723 : tensor<64xf32>
    %725 = kiln.mul %718, %718 : tensor<64xf32>
    %726 = kiln.broadcast_in_dim %672, dims = [] : tensor<f32> -> tensor<64xf32>
    %727 = kiln.mul %725, %726 : tensor<64xf32>
    %728 = kiln.add %724, %727 : tensor<64xf32>
    %729 = kiln.sqrt %728 : tensor<64xf32>
    %730 = kiln.broadcast_in_dim %682, dims = [] : tensor<f32> -> tensor<64xf32>
    %731 = kiln.div %729, %730 : tensor<64xf32>
    %732 = kiln.broadcast_in_dim %685, dims = [] : tensor<f32> -> tensor<64xf32>
    %733 = kiln.add %731, %732 : tensor<64xf32>
    %734 = kiln.div %722, %733 : tensor<64xf32>
    %735 = kiln.mul %716, %734 : tensor<64xf32>
    %736 = kiln.sub %715, %735 : tensor<64xf32>
    %737 = kiln.mul %arg8, %714 : tensor<64xf32>
    %738 = kiln.mul %544, %717 : tensor<64xf32>
    %739 = kiln.sub %738, %arg38 : tensor<64xf32>
    %740 = kiln.mul %739, %720 : tensor<64xf32>
    %741 = kiln.add %arg38, %740 : tensor<64xf32>
    %742 = kiln.mul %arg39, %723 : tensor<64xf32>
    %743 = kiln.mul %738, %738 : tensor<64xf32>
    %744 = kiln.mul %743, %726 : tensor<64xf32>
    %745 = kiln.add %742, %744 : tensor<64xf32>
    %746 = kiln.sqrt %745 : tensor<64xf32>
    %747 = kiln.div %746, %730 : tensor<64xf32>
    %748 = kiln.add %747, %732 : tensor<64xf32>
    %749 = kiln.div %741, %748 : tensor<64xf32>
    %750 = kiln.mul %716, %749 : tensor<64xf32>
    %751 = kiln.sub %737, %750 : tensor<64xf32>
    %752 = kiln.broadcast_in_dim %18, dims = [] : tensor<f32> -> tensor<64x192xf32>
    %753 = kiln.mul %arg9, %752 : tensor<64x192xf32>
    %754 = kiln.broadcast_in_dim %26, dims = [] : tensor<f32> -> tensor<64x192xf32>
    %755 = kiln.broadcast_in_dim %661, dims = [] : tensor<f32> -> tensor<64x192xf32>
    %756 = kiln.mul %549, %755 : tensor<64x192xf32>
    %757 = kiln.sub %756, %arg40 : tensor<64x192xf32>
    %758 = kiln.broadcast_in_dim %36, dims = [] : tensor<f32> -> tensor<64x192xf32>
    %759 = kiln.mul %757, %758 : tensor<64x192xf32>
    %760 = kiln.add %arg40, %759 : tensor<64x192xf32>
    %761 = kiln.broadcast_in_dim %668, dims = [] : tensor<f32> -> tensor<64x192xf32>
    %762 = kiln.mul %arg41, %761 : tensor<64x192xf32>
    %763 = kiln.mul %756, %756 : tensor<64x192xf32>
    %764 = kiln.broadcast_in_dim %672, dims = [] : tensor<f32> -> tensor<64x192xf32>
    %765 = kiln.mul %763, %764 : tensor<64x192xf32>
    %766 = kiln.add %762, %765 : tensor<64x192xf32>
    %767 = kiln.sqrt %766 : tensor<64x192xf32>
    %768 = kiln.broadcast_in_dim %682, dims = [] : tensor<f32> -> tensor<64x192xf32>
    %769 = kiln.div %767, %768 : tensor<64x192xf32>
    %770 = kiln.broadcast_in_dim %685, dims = [] : tensor<f32> -> tensor<64x192xf32>
    %771 = kiln.add %769, %770 : tensor<64x192xf32>
    %772 = kiln.div %760, %771 : tensor<64x192xf32>
    %773 = kiln.mul %754, %772 : tensor<64x192xf32>
    %774 = kiln.sub %753, %773 : tensor<64x192xf32>
    %775 = kiln.broadcast_in_dim %18, dims = [] : tensor<f32> -> tensor<192xf32>
    %776 = kiln.mul %arg10, %775 : tensor<192xf32>
    %777 = kiln.broadcast_in_dim %26, dims = [] : tensor<f32> -> tensor<192xf32>
    %778 = kiln.broadcast_in_dim %661, dims = [] : tensor<f32> -> tensor<192xf32>
    %779 = kiln.mul %553, %778 : tensor<192xf32>
    %780 = kiln.sub %779, %arg42 : tensor<192xf32>
    %781 = kiln.broadcast_in_dim %36, dims = [] : tensor<f32> -> tensor<192xf32>
    %782 = kiln.mul %780, %781 : tensor<192xf32>
    %783 = kiln.add %arg42, %782 : tensor<192xf32>
    %784 = kiln.broadcast_in_dim %668, dims = [] : tensor<f32> -> tensor<192xf32>
    %785 = kiln.mul %arg43, %784 : tensor<192xf32>
    %786 = kiln.mul %779, %779 : tensor<192xf32>
    %787 = kiln.broadcast_in_dim %672, dims = [] : tensor<f32> -> tensor<192xf32>
    %788 = kiln.mul %786, %787 : tensor<192xf32>
    %789 = kiln.add %785, %788 : tensor<192xf32>
    %790 = kiln.sqrt %789 : tensor<192xf32>
    %791 = kiln.broadcast_in_dim %682, dims = [] : tensor<f32> -> tensor<192xf32>
    %792 = kiln.div %790, %791 : tensor<192xf32>
    %793 = kiln.broadcast_in_dim %685, dims = [] : tensor<f32> -> tensor<192xf32>
    %794 = kiln.add %792, %793 : tensor<192xf32>
    %795 = kiln.div %783, %794 : tensor<192xf32>
    %796 = kiln.mul %777, %795 : tensor<192xf32>
    %797 = kiln.sub %776, %796 : tensor<192xf32>
    %798 = kiln.broadcast_in_dim %18, dims = [] : tensor<f32> -> tensor<64x64xf32>
    %799 = kiln.mul %arg11, %798 : tensor<64x64xf32>
    %800 = kiln.broadcast_in_dim %26, dims = [] : tensor<f32> -> tensor<64x64xf32>
    %801 = kiln.broadcast_in_dim %661, dims = [] : tensor<f32> -> tensor<64x64xf32>
    %802 = kiln.mul %558, %801 : tensor<64x64xf32>
    %803 = kiln.sub %802, %arg44 : tensor<64x64xf32>
    %804 = kiln.broadcast_in_dim %36, dims = [] : tensor<f32> -> tensor<64x64xf32>
    %805 = kiln.mul %803, %804 : tensor<64x64xf32>
    %806 = kiln.add %arg44, %805 : tensor<64x64xf32>
    %807 = kiln.broadcast_in_dim %668, dims = [] : tensor<f32> -> tensor<64x64xf32>
    %808 = kiln.mul %arg45, %807 : tensor<64x64xf32>
    %809 = kiln.mul %802, %802 : tensor<64x64xf32>
    %810 = kiln.broadcast_in_dim %672, dims = [] : tensor<f32> -> tensor<64x64xf32>
    %811 = kiln.mul %809, %810 : tensor<64x64xf32>
    %812 = kiln.add %808, %811 : tensor<64x64xf32>
    %813 = kiln.sqrt %812 : tensor<64x64xf32>
    %814 = kiln.broadcast_in_dim %682, dims = [] : tensor<f32> -> tensor<64x64xf32>
    %815 = kiln.div %813, %814 : tensor<64x64xf32>
    %816 = kiln.broadcast_in_dim %685, dims = [] : tensor<f32> -> tensor<64x64xf32>
    %817 = kiln.add %815, %816 : tensor<64x64xf32>
    %818 = kiln.div %806, %817 : tensor<64x64xf32>
    %819 = kiln.mul %800, %818 : tensor<64x64xf32>
    %820 = kiln.sub %799, %819 : tensor<64x64xf32>
    %821 = kiln.mul %arg12, %714 : tensor<64xf32>
    %822 = kiln.mul %562, %717 : tensor<64xf32>
    %823 = kiln.sub %822, %arg46 : tensor<64xf32>
    %824 = kiln.mul %823, %720 : tensor<64xf32>
    %825 = kiln.add %arg46, %824 : tensor<64xf32>
    %826 = kiln.mul %arg47, %723 : tensor<64xf32>
    %827 = kiln.mul %822, %822 : tensor<64xf32>
    %828 = kiln.mul %827, %726 : tensor<64xf32>
    %829 = kiln.add %826, %828 : tensor<64xf32>
    %830 = kiln.sqrt %829 : tensor<64xf32>
    %831 = kiln.div %830, %730 : tensor<64xf32>
    %832 = kiln.add %831, %732 : tensor<64xf32>
    %833 = kiln.div %825, %832 : tensor<64xf32>
    %834 = kiln.mul %716, %833 : tensor<64xf32>
    %835 = kiln.sub %821, %834 : tensor<64xf32>
    %836 = kiln.mul %arg13, %714 : tensor<64xf32>
    %837 = kiln.mul %567, %717 : tensor<64xf32>
    %838 = kiln.sub %837, %arg48 : tensor<64xf32>
    %839 = kiln.mul %838, %720 : tensor<64xf32>
    %840 = kiln.add %arg48, %839 : tensor<64xf32>
    %841 = kiln.mul %arg49, %723 : tensor<64xf32>
    %842 = kiln.mul %837, %837 : tensor<64xf32>
    %843 = kiln.mul %842, %726 : tensor<64xf32>
    %844 = kiln.add %841, %843 : tensor<64xf32>
    %845 = kiln.sqrt %844 : tensor<64xf32>
    %846 = kiln.div %845, %730 : tensor<64xf32>
    %847 = kiln.add %846, %732 : tensor<64xf32>
    %848 = kiln.div %840, %847 : tensor<64xf32>
    %849 = kiln.mul %716, %848 : tensor<64xf32>
    %850 = kiln.sub %836, %849 : tensor<64xf32>
    %851 = kiln.mul %arg14, %714 : tensor<64xf32>
    %852 = kiln.mul %571, %717 : tensor<64xf32>
    %853 = kiln.sub %852, %arg50 : tensor<64xf32>
    %854 = kiln.mul %853, %720 : tensor<64xf32>
    %855 = kiln.add %arg50, %854 : tensor<64xf32>
    %856 = kiln.mul %arg51, %723 : tensor<64xf32>
    %857 = kiln.mul %852, %852 : tensor<64xf32>
    %858 = kiln.mul %857, %726 : tensor<64xf32>
    %859 = kiln.add %856, %858 : tensor<64xf32>
    %860 = kiln.sqrt %859 : tensor<64xf32>
    %861 = kiln.div %860, %730 : tensor<64xf32>
    %862 = kiln.add %861, %732 : tensor<64xf32>
    %863 = kiln.div %855, %862 : tensor<64xf32>
    %864 = kiln.mul %716, %863 : tensor<64xf32>
    %865 = kiln.sub %851, %864 : tensor<64xf32>
    %866 = kiln.broadcast_in_dim %18, dims = [] : tensor<f32> -> tensor<64x256xf32>
    %867 = kiln.mul %arg15, %866 : tensor<64x256xf32>
    %868 = kiln.broadcast_in_dim %26, dims = [] : tensor<f32> -> tensor<64x256xf32>
    %869 = kiln.broadcast_in_dim %661, dims = [] : tensor<f32> -> tensor<64x256xf32>
    %870 = kiln.mul %576, %869 : tensor<64x256xf32>
    %871 = kiln.sub %870, %arg52 : tensor<64x256xf32>
    %872 = kiln.broadcast_in_dim %36, dims = [] : tensor<f32> -> tensor<64x256xf32>
    %873 = kiln.mul %871, %872 : tensor<64x256xf32>
    %874 = kiln.add %arg52, %873 : tensor<64x256xf32>
    %875 = kiln.broadcast_in_dim %668, dims = [] : tensor<f32> -> tensor<64x256xf32>
    %876 = kiln.mul %arg53, %875 : tensor<64x256xf32>
    %877 = kiln.mul %870, %870 : tensor<64x256xf32>
    %878 = kiln.broadcast_in_dim %672, dims = [] : tensor<f32> -> tensor<64x256xf32>
    %879 = kiln.mul %877, %878 : tensor<64x256xf32>
    %880 = kiln.add %876, %879 : tensor<64x256xf32>
    %881 = kiln.sqrt %880 : tensor<64x256xf32>
    %882 = kiln.broadcast_in_dim %682, dims = [] : tensor<f32> -> tensor<64x256xf32>
    %883 = kiln.div %881, %882 : tensor<64x256xf32>
    %884 = kiln.broadcast_in_dim %685, dims = [] : tensor<f32> -> tensor<64x256xf32>
    %885 = kiln.add %883, %884 : tensor<64x256xf32>
    %886 = kiln.div %874, %885 : tensor<64x256xf32>
    %887 = kiln.mul %868, %886 : tensor<64x256xf32>
    %888 = kiln.sub %867, %887 : tensor<64x256xf32>
    %889 = kiln.broadcast_in_dim %18, dims = [] : tensor<f32> -> tensor<256xf32>
    %890 = kiln.mul %arg16, %889 : tensor<256xf32>
    %891 = kiln.broadcast_in_dim %26, dims = [] : tensor<f32> -> tensor<256xf32>
    %892 = kiln.broadcast_in_dim %661, dims = [] : tensor<f32> -> tensor<256xf32>
    %893 = kiln.mul %580, %892 : tensor<256xf32>
    %894 = kiln.sub %893, %arg54 : tensor<256xf32>
    %895 = kiln.broadcast_in_dim %36, dims = [] : tensor<f32> -> tensor<256xf32>
    %896 = kiln.mul %894, %895 : tensor<256xf32>
    %897 = kiln.add %arg54, %896 : tensor<256xf32>
    %898 = kiln.broadcast_in_dim %668, dims = [] : tensor<f32> -> tensor<256xf32>
    %899 = kiln.mul %arg55, %898 : tensor<256xf32>
    %900 = kiln.mul %893, %893 : tensor<256xf32>
    %901 = kiln.broadcast_in_dim %672, dims = [] : tensor<f32> -> tensor<256xf32>
    %902 = kiln.mul %900, %901 : tensor<256xf32>
    %903 = kiln.add %899, %902 : tensor<256xf32>
    %904 = kiln.sqrt %903 : tensor<256xf32>
    %905 = kiln.broadcast_in_dim %682, dims = [] : tensor<f32> -> tensor<256xf32>
    %906 = kiln.div %904, %905 : tensor<256xf32>
    %907 = kiln.broadcast_in_dim %685, dims = [] : tensor<f32> -> tensor<256xf32>
    %908 = kiln.add %906, %907 : tensor<256xf32>
    %909 = kiln.div %897, %908 : tensor<256xf32>
    %910 = kiln.mul %891, %909 : tensor<256xf32>
    %911 = kiln.sub %890, %910 : tensor<256xf32>
    %912 = kiln.mul %arg17, %19 : tensor<256x64xf32>
    %913 = kiln.mul %585, %662 : tensor<256x64xf32>
    %914 = kiln.sub %913, %arg56 : tensor<256x64xf32>
    %915 = kiln.mul %914, %665 : tensor<256x64xf32>
    %916 = kiln.add %arg56, %915 : tensor<256x64xf32>
    %917 = kiln.mul %arg57, %669 : tensor<256x64xf32>
    %918 = kiln.mul %913, %913 : tensor<256x64xf32>
    %919 = kiln.mul %918, %673 : tensor<256x64xf32>
    %920 = kiln.add %917, %919 : tensor<256x64xf32>
    %921 = kiln.sqrt %920 : tensor<256x64xf32>
    %922 = kiln.div %921, %683 : tensor<256x64xf32>
    %923 = kiln.add %922, %686 : tensor<256x64xf32>
    %924 = kiln.div %916, %923 : tensor<256x64xf32>
    %925 = kiln.mul %27, %924 : tensor<256x64xf32>
    %926 = kiln.sub %912, %925 : tensor<256x64xf32>
    %927 = kiln.mul %arg18, %714 : tensor<64xf32>
    %928 = kiln.mul %589, %717 : tensor<64xf32>
    %929 = kiln.sub %928, %arg58 : tensor<64xf32>
    %930 = kiln.mul %929, %720 : tensor<64xf32>
    %931 = kiln.add %arg58, %930 : tensor<64xf32>
    %932 = kiln.mul %arg59, %723 : tensor<64xf32>
    %933 = kiln.mul %928, %928 : tensor<64xf32>
    %934 = kiln.mul %933, %726 : tensor<64xf32>
    %935 = kiln.add %932, %934 : tensor<64xf32>
    %936 = kiln.sqrt %935 : tensor<64xf32>
    %937 = kiln.div %936, %730 : tensor<64xf32>
    %938 = kiln.add %937, %732 : tensor<64xf32>
    %939 = kiln.div %931, %938 : tensor<64xf32>
    %940 = kiln.mul %716, %939 : tensor<64xf32>
    %941 = kiln.sub %927, %940 : tensor<64xf32>
    %942 = kiln.mul %arg19, %714 : tensor<64xf32>
    %943 = kiln.mul %594, %717 : tensor<64xf32>
    %944 = kiln.sub %943, %arg60 : tensor<64xf32>
    %945 = kiln.mul %944, %720 : tensor<64xf32>
    %946 = kiln.add %arg60, %945 : tensor<64xf32>
    %947 = kiln.mul %arg61, %723 : tensor<64xf32>
    %948 = kiln.mul %943, %943 : tensor<64xf32>
    %949 = kiln.mul %948, %726 : tensor<64xf32>
    %950 = kiln.add %947, %949 : tensor<64xf32>
    %951 = kiln.sqrt %950 : tensor<64xf32>
    %952 = kiln.div %951, %730 : tensor<64xf32>
    %953 = kiln.add %952, %732 : tensor<64xf32>
    %954 = kiln.div %946, %953 : tensor<64xf32>
    %955 = kiln.mul %716, %954 : tensor<64xf32>
    %956 = kiln.sub %942, %955 : tensor<64xf32>
    %957 = kiln.mul %arg20, %714 : tensor<64xf32>
    %958 = kiln.mul %598, %717 : tensor<64xf32>
    %959 = kiln.sub %958, %arg62 : tensor<64xf32>
    %960 = kiln.mul %959, %720 : tensor<64xf32>
    %961 = kiln.add %arg62, %960 : tensor<64xf32>
    %962 = kiln.mul %arg63, %723 : tensor<64xf32>
    %963 = kiln.mul %958, %958 : tensor<64xf32>
    %964 = kiln.mul %963, %726 : tensor<64xf32>
    %965 = kiln.add %962, %964 : tensor<64xf32>
    %966 = kiln.sqrt %965 : tensor<64xf32>
    %967 = kiln.div %966, %730 : tensor<64xf32>
    %968 = kiln.add %967, %732 : tensor<64xf32>
    %969 = kiln.div %961, %968 : tensor<64xf32>
    %970 = kiln.mul %716, %969 : tensor<64xf32>
    %971 = kiln.sub %957, %970 : tensor<64xf32>
    %972 = kiln.mul %arg21, %752 : tensor<64x192xf32>
    %973 = kiln.mul %603, %755 : tensor<64x192xf32>
    %974 = kiln.sub %973, %arg64 : tensor<64x192xf32>
    %975 = kiln.mul %974, %758 : tensor<64x192xf32>
    %976 = kiln.add %arg64, %975 : tensor<64x192xf32>
    %977 = kiln.mul %arg65, %761 : tensor<64x192xf32>
    %978 = kiln.mul %973, %973 : tensor<64x192xf32>
    %979 = kiln.mul %978, %764 : tensor<64x192xf32>
    %980 = kiln.add %977, %979 : tensor<64x192xf32>
    %981 = kiln.sqrt %980 : tensor<64x192xf32>
    %982 = kiln.div %981, %768 : tensor<64x192xf32>
    %983 = kiln.add %982, %770 : tensor<64x192xf32>
    %984 = kiln.div %976, %983 : tensor<64x192xf32>
    %985 = kiln.mul %754, %984 : tensor<64x192xf32>
    %986 = kiln.sub %972, %985 : tensor<64x192xf32>
    %987 = kiln.mul %arg22, %775 : tensor<192xf32>
    %988 = kiln.mul %607, %778 : tensor<192xf32>
    %989 = kiln.sub %988, %arg66 : tensor<192xf32>
    %990 = kiln.mul %989, %781 : tensor<192xf32>
    %991 = kiln.add %arg66, %990 : tensor<192xf32>
    %992 = kiln.mul %arg67, %784 : tensor<192xf32>
    %993 = kiln.mul %988, %988 : tensor<192xf32>
    %994 = kiln.mul %993, %787 : tensor<192xf32>
    %995 = kiln.add %992, %994 : tensor<192xf32>
    %996 = kiln.sqrt %995 : tensor<192xf32>
    %997 = kiln.div %996, %791 : tensor<192xf32>
    %998 = kiln.add %997, %793 : tensor<192xf32>
    %999 = kiln.div %991, %998 : tensor<192xf32>
    %1000 = kiln.mul %777, %999 : tensor<192xf32>
    %1001 = kiln.sub %987, %1000 : tensor<192xf32>
    %1002 = kiln.mul %arg23, %798 : tensor<64x64xf32>
    %1003 = kiln.mul %612, %801 : tensor<64x64xf32>
    %1004 = kiln.sub %1003, %arg68 : tensor<64x64xf32>
    %1005 = kiln.mul %1004, %804 : tensor<64x64xf32>
    %1006 = kiln.add %arg68, %1005 : tensor<64x64xf32>
    %1007 = kiln.mul %arg69, %807 : tensor<64x64xf32>
    %1008 = kiln.mul %1003, %1003 : tensor<64x64xf32>
    %1009 = kiln.mul %1008, %810 : tensor<64x64xf32>
    %1010 = kiln.add %1007, %1009 : tensor<64x64xf32>
    %1011 = kiln.sqrt %1010 : tensor<64x64xf32>
    %1012 = kiln.div %1011, %814 : tensor<64x64xf32>
    %1013 = kiln.add %1012, %816 : tensor<64x64xf32>
    %1014 = kiln.div %1006, %1013 : tensor<64x64xf32>
    %1015 = kiln.mul %800, %1014 : tensor<64x64xf32>
    %1016 = kiln.sub %1002, %1015 : tensor<64x64xf32>
    %1017 = kiln.mul %arg24, %714 : tensor<64xf32>
    %1018 = kiln.mul %616, %717 : tensor<64xf32>
    %1019 = kiln.sub %1018, %arg70 : tensor<64xf32>
    %1020 = kiln.mul %1019, %720 : tensor<64xf32>
    %1021 = kiln.add %arg70, %1020 : tensor<64xf32>
    %1022 = kiln.mul %arg71, %723 : tensor<64xf32>
    %1023 = kiln.mul %1018, %1018 : tensor<64xf32>
    %1024 = kiln.mul %1023, %726 : tensor<64xf32>
    %1025 = kiln.add %1022, %1024 : tensor<64xf32>
    %1026 = kiln.sqrt %1025 : tensor<64xf32>
    %1027 = kiln.div %1026, %730 : tensor<64xf32>
    %1028 = kiln.add %1027, %732 : tensor<64xf32>
    %1029 = kiln.div %1021, %1028 : tensor<64xf32>
    %1030 = kiln.mul %716, %1029 : tensor<64xf32>
    %1031 = kiln.sub %1017, %1030 : tensor<64xf32>
    %1032 = kiln.mul %arg25, %714 : tensor<64xf32>
    %1033 = kiln.mul %621, %717 : tensor<64xf32>
    %1034 = kiln.sub %1033, %arg72 : tensor<64xf32>
    %1035 = kiln.mul %1034, %720 : tensor<64xf32>
    %1036 = kiln.add %arg72, %1035 : tensor<64xf32>
    %1037 = kiln.mul %arg73, %723 : tensor<64xf32>
    %1038 = kiln.mul %1033, %1033 : tensor<64xf32>
    %1039 = kiln.mul %1038, %726 : tensor<64xf32>
    %1040 = kiln.add %1037, %1039 : tensor<64xf32>
    %1041 = kiln.sqrt %1040 : tensor<64xf32>
    %1042 = kiln.div %1041, %730 : tensor<64xf32>
    %1043 = kiln.add %1042, %732 : tensor<64xf32>
    %1044 = kiln.div %1036, %1043 : tensor<64xf32>
    %1045 = kiln.mul %716, %1044 : tensor<64xf32>
    %1046 = kiln.sub %1032, %1045 : tensor<64xf32>
    %1047 = kiln.mul %arg26, %714 : tensor<64xf32>
    %1048 = kiln.mul %625, %717 : tensor<64xf32>
    %1049 = kiln.sub %1048, %arg74 : tensor<64xf32>
    %1050 = kiln.mul %1049, %720 : tensor<64xf32>
    %1051 = kiln.add %arg74, %1050 : tensor<64xf32>
    %1052 = kiln.mul %arg75, %723 : tensor<64xf32>
    %1053 = kiln.mul %1048, %1048 : tensor<64xf32>
    %1054 = kiln.mul %1053, %726 : tensor<64xf32>
    %1055 = kiln.add %1052, %1054 : tensor<64xf32>
    %1056 = kiln.sqrt %1055 : tensor<64xf32>
    %1057 = kiln.div %1056, %730 : tensor<64xf32>
    %1058 = kiln.add %1057, %732 : tensor<64xf32>
    %1059 = kiln.div %1051, %1058 : tensor<64xf32>
    %1060 = kiln.mul %716, %1059 : tensor<64xf32>
    %1061 = kiln.sub %1047, %1060 : tensor<64xf32>
    %1062 = kiln.mul %arg27, %866 : tensor<64x256xf32>
    %1063 = kiln.mul %630, %869 : tensor<64x256xf32>
    %1064 = kiln.sub %1063, %arg76 : tensor<64x256xf32>
    %1065 = kiln.mul %1064, %872 : tensor<64x256xf32>
    %1066 = kiln.add %arg76, %1065 : tensor<64x256xf32>
    %1067 = kiln.mul %arg77, %875 : tensor<64x256xf32>
    %1068 = kiln.mul %1063, %1063 : tensor<64x256xf32>
    %1069 = kiln.mul %1068, %878 : tensor<64x256xf32>
    %1070 = kiln.add %1067, %1069 : tensor<64x256xf32>
    %1071 = kiln.sqrt %1070 : tensor<64x256xf32>
    %1072 = kiln.div %1071, %882 : tensor<64x256xf32>
    %1073 = kiln.add %1072, %884 : tensor<64x256xf32>
    %1074 = kiln.div %1066, %1073 : tensor<64x256xf32>
    %1075 = kiln.mul %868, %1074 : tensor<64x256xf32>
    %1076 = kiln.sub %1062, %1075 : tensor<64x256xf32>
    %1077 = kiln.mul %arg28, %889 : tensor<256xf32>
    %1078 = kiln.mul %634, %892 : tensor<256xf32>
    %1079 = kiln.sub %1078, %arg78 : tensor<256xf32>
    %1080 = kiln.mul %1079, %895 : tensor<256xf32>
    %1081 = kiln.add %arg78, %1080 : tensor<256xf32>
    %1082 = kiln.mul %arg79, %898 : tensor<256xf32>
    %1083 = kiln.mul %1078, %1078 : tensor<256xf32>
    %1084 = kiln.mul %1083, %901 : tensor<256xf32>
    %1085 = kiln.add %1082, %1084 : tensor<256xf32>
    %1086 = kiln.sqrt %1085 : tensor<256xf32>
    %1087 = kiln.div %1086, %905 : tensor<256xf32>
    %1088 = kiln.add %1087, %907 : tensor<256xf32>
    %1089 = kiln.div %1081, %1088 : tensor<256xf32>
    %1090 = kiln.mul %891, %1089 : tensor<256xf32>
    %1091 = kiln.sub %1077, %1090 : tensor<256xf32>
    %1092 = kiln.mul %arg29, %19 : tensor<256x64xf32>
    %1093 = kiln.mul %639, %662 : tensor<256x64xf32>
    %1094 = kiln.sub %1093, %arg80 : tensor<256x64xf32>
    %1095 = kiln.mul %1094, %665 : tensor<256x64xf32>
    %1096 = kiln.add %arg80, %1095 : tensor<256x64xf32>
    %1097 = kiln.mul %arg81, %669 : tensor<256x64xf32>
    %1098 = kiln.mul %1093, %1093 : tensor<256x64xf32>
    %1099 = kiln.mul %1098, %673 : tensor<256x64xf32>
    %1100 = kiln.add %1097, %1099 : tensor<256x64xf32>
    %1101 = kiln.sqrt %1100 : tensor<256x64xf32>
    %1102 = kiln.div %1101, %683 : tensor<256x64xf32>
    %1103 = kiln.add %1102, %686 : tensor<256x64xf32>
    %1104 = kiln.div %1096, %1103 : tensor<256x64xf32>
    %1105 = kiln.mul %27, %1104 : tensor<256x64xf32>
    %1106 = kiln.sub %1092, %1105 : tensor<256x64xf32>
    %1107 = kiln.mul %arg30, %714 : tensor<64xf32>
    %1108 = kiln.mul %643, %717 : tensor<64xf32>
    %1109 = kiln.sub %1108, %arg82 : tensor<64xf32>
    %1110 = kiln.mul %1109, %720 : tensor<64xf32>
    %1111 = kiln.add %arg82, %1110 : tensor<64xf32>
    %1112 = kiln.mul %arg83, %723 : tensor<64xf32>
    %1113 = kiln.mul %1108, %1108 : tensor<64xf32>
    %1114 = kiln.mul %1113, %726 : tensor<64xf32>
    %1115 = kiln.add %1112, %1114 : tensor<64xf32>
    %1116 = kiln.sqrt %1115 : tensor<64xf32>
    %1117 = kiln.div %1116, %730 : tensor<64xf32>
    %1118 = kiln.add %1117, %732 : tensor<64xf32>
    %1119 = kiln.div %1111, %1118 : tensor<64xf32>
    %1120 = kiln.mul %716, %1119 : tensor<64xf32>
    %1121 = kiln.sub %1107, %1120 : tensor<64xf32>
    %1122 = kiln.mul %arg31, %714 : tensor<64xf32>
    %1123 = kiln.mul %648, %717 : tensor<64xf32>
    %1124 = kiln.sub %1123, %arg84 : tensor<64xf32>
    %1125 = kiln.mul %1124, %720 : tensor<64xf32>
    %1126 = kiln.add %arg84, %1125 : tensor<64xf32>
    %1127 = kiln.mul %arg85, %723 : tensor<64xf32>
    %1128 = kiln.mul %1123, %1123 : tensor<64xf32>
    %1129 = kiln.mul %1128, %726 : tensor<64xf32>
    %1130 = kiln.add %1127, %1129 : tensor<64xf32>
    %1131 = kiln.sqrt %1130 : tensor<64xf32>
    %1132 = kiln.div %1131, %730 : tensor<64xf32>
    %1133 = kiln.add %1132, %732 : tensor<64xf32>
    %1134 = kiln.div %1126, %1133 : tensor<64xf32>
    %1135 = kiln.mul %716, %1134 : tensor<64xf32>
    %1136 = kiln.sub %1122, %1135 : tensor<64xf32>
    %1137 = kiln.mul %arg32, %714 : tensor<64xf32>
    %1138 = kiln.mul %652, %717 : tensor<64xf32>
    %1139 = kiln.sub %1138, %arg86 : tensor<64xf32>
    %1140 = kiln.mul %1139, %720 : tensor<64xf32>
    %1141 = kiln.add %arg86, %1140 : tensor<64xf32>
    %1142 = kiln.mul %arg87, %723 : tensor<64xf32>
    %1143 = kiln.mul %1138, %1138 : tensor<64xf32>
    %1144 = kiln.mul %1143, %726 : tensor<64xf32>
    %1145 = kiln.add %1142, %1144 : tensor<64xf32>
    %1146 = kiln.sqrt %1145 : tensor<64xf32>
    %1147 = kiln.div %1146, %730 : tensor<64xf32>
    %1148 = kiln.add %1147, %732 : tensor<64xf32>
    %1149 = kiln.div %1141, %1148 : tensor<64xf32>
    %1150 = kiln.mul %716, %1149 : tensor<64xf32>
    %1151 = kiln.sub %1137, %1150 : tensor<64xf32>
    return %13, %690, %713, %736, %751, %774, %797, %820, %835, %850, %865, %888, %911, %926, %941, %956, %971, %986, %1001, %1016, %1031, %1046, %1061, %1076, %1091, %1106, %1121, %1136, %1151, %667, %699, %722, %741, %760, %783, %806, %825, %840, %855, %874, %897, %916, %931, %946, %961, %976, %991, %1006, %1021, %1036, %1051, %1066, %1081, %1096, %1111, %1126, %1141, %675, %705, %728, %745, %766, %789, %812, %829, %844, %859, %880, %903, %920, %935, %950, %965, %980, %995, %1010, %1025, %1040, %1055, %1070, %1085, %1100, %1115, %1130, %1145, %283 : tensor<2xi64>, tensor<256x64xf32>, tensor<32x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x192xf32>, tensor<192xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x256xf32>, tensor<256xf32>, tensor<256x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x192xf32>, tensor<192xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x256xf32>, tensor<256xf32>, tensor<256x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<256x64xf32>, tensor<32x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x192xf32>, tensor<192xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x256xf32>, tensor<256xf32>, tensor<256x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x192xf32>, tensor<192xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x256xf32>, tensor<256xf32>, tensor<256x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<256x64xf32>, tensor<32x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x192xf32>, tensor<192xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x256xf32>, tensor<256xf32>, tensor<256x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x192xf32>, tensor<192xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x256xf32>, tensor<256xf32>, tensor<256x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<f32>
  }
}
