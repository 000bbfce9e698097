// A tiny GPT-2 training step (frontends/nn's GPT2 and AdamW, one forward,
// backward and update) exactly as frontends/lazy lowered it: the graph
// GPT2TrainTest wrote with KILN_DUMP_DIR set. A frozen snapshot, the
// largest graph tests/unit/PipelineTest.cpp runs through the pipeline.
module {
  func.func @main(%arg0: tensor<2xi64> {kiln.donate}, %arg1: tensor<256x64xf32> {kiln.donate}, %arg2: tensor<f64>, %arg3: tensor<f64>, %arg4: tensor<256x64xf32> {kiln.donate}, %arg5: tensor<4x32xi64>, %arg6: tensor<32x64xf32> {kiln.donate}, %arg7: tensor<64xf32> {kiln.donate}, %arg8: tensor<64xf32> {kiln.donate}, %arg9: tensor<64x192xf32> {kiln.donate}, %arg10: tensor<192xf32> {kiln.donate}, %arg11: tensor<64x64xf32> {kiln.donate}, %arg12: tensor<64xf32> {kiln.donate}, %arg13: tensor<64xf32> {kiln.donate}, %arg14: tensor<64xf32> {kiln.donate}, %arg15: tensor<64x256xf32> {kiln.donate}, %arg16: tensor<256xf32> {kiln.donate}, %arg17: tensor<256x64xf32> {kiln.donate}, %arg18: tensor<64xf32> {kiln.donate}, %arg19: tensor<64xf32> {kiln.donate}, %arg20: tensor<64xf32> {kiln.donate}, %arg21: tensor<64x192xf32> {kiln.donate}, %arg22: tensor<192xf32> {kiln.donate}, %arg23: tensor<64x64xf32> {kiln.donate}, %arg24: tensor<64xf32> {kiln.donate}, %arg25: tensor<64xf32> {kiln.donate}, %arg26: tensor<64xf32> {kiln.donate}, %arg27: tensor<64x256xf32> {kiln.donate}, %arg28: tensor<256xf32> {kiln.donate}, %arg29: tensor<256x64xf32> {kiln.donate}, %arg30: tensor<64xf32> {kiln.donate}, %arg31: tensor<64xf32> {kiln.donate}, %arg32: tensor<64xf32> {kiln.donate}, %arg33: tensor<256x64xf32> {kiln.donate}, %arg34: tensor<32x64xf32> {kiln.donate}, %arg35: tensor<32x64xf32> {kiln.donate}, %arg36: tensor<64xf32> {kiln.donate}, %arg37: tensor<64xf32> {kiln.donate}, %arg38: tensor<64xf32> {kiln.donate}, %arg39: tensor<64xf32> {kiln.donate}, %arg40: tensor<64x192xf32> {kiln.donate}, %arg41: tensor<64x192xf32> {kiln.donate}, %arg42: tensor<192xf32> {kiln.donate}, %arg43: tensor<192xf32> {kiln.donate}, %arg44: tensor<64x64xf32> {kiln.donate}, %arg45: tensor<64x64xf32> {kiln.donate}, %arg46: tensor<64xf32> {kiln.donate}, %arg47: tensor<64xf32> {kiln.donate}, %arg48: tensor<64xf32> {kiln.donate}, %arg49: tensor<64xf32> {kiln.donate}, %arg50: tensor<64xf32> {kiln.donate}, %arg51: tensor<64xf32> {kiln.donate}, %arg52: tensor<64x256xf32> {kiln.donate}, %arg53: tensor<64x256xf32> {kiln.donate}, %arg54: tensor<256xf32> {kiln.donate}, %arg55: tensor<256xf32> {kiln.donate}, %arg56: tensor<256x64xf32> {kiln.donate}, %arg57: tensor<256x64xf32> {kiln.donate}, %arg58: tensor<64xf32> {kiln.donate}, %arg59: tensor<64xf32> {kiln.donate}, %arg60: tensor<64xf32> {kiln.donate}, %arg61: tensor<64xf32> {kiln.donate}, %arg62: tensor<64xf32> {kiln.donate}, %arg63: tensor<64xf32> {kiln.donate}, %arg64: tensor<64x192xf32> {kiln.donate}, %arg65: tensor<64x192xf32> {kiln.donate}, %arg66: tensor<192xf32> {kiln.donate}, %arg67: tensor<192xf32> {kiln.donate}, %arg68: tensor<64x64xf32> {kiln.donate}, %arg69: tensor<64x64xf32> {kiln.donate}, %arg70: tensor<64xf32> {kiln.donate}, %arg71: tensor<64xf32> {kiln.donate}, %arg72: tensor<64xf32> {kiln.donate}, %arg73: tensor<64xf32> {kiln.donate}, %arg74: tensor<64xf32> {kiln.donate}, %arg75: tensor<64xf32> {kiln.donate}, %arg76: tensor<64x256xf32> {kiln.donate}, %arg77: tensor<64x256xf32> {kiln.donate}, %arg78: tensor<256xf32> {kiln.donate}, %arg79: tensor<256xf32> {kiln.donate}, %arg80: tensor<256x64xf32> {kiln.donate}, %arg81: tensor<256x64xf32> {kiln.donate}, %arg82: tensor<64xf32> {kiln.donate}, %arg83: tensor<64xf32> {kiln.donate}, %arg84: tensor<64xf32> {kiln.donate}, %arg85: tensor<64xf32> {kiln.donate}, %arg86: tensor<64xf32> {kiln.donate}, %arg87: tensor<64xf32> {kiln.donate}) -> (tensor<2xi64>, tensor<256x64xf32>, tensor<32x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x192xf32>, tensor<192xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x256xf32>, tensor<256xf32>, tensor<256x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x192xf32>, tensor<192xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x256xf32>, tensor<256xf32>, tensor<256x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<256x64xf32>, tensor<32x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x192xf32>, tensor<192xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x256xf32>, tensor<256xf32>, tensor<256x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x192xf32>, tensor<192xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x256xf32>, tensor<256xf32>, tensor<256x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<256x64xf32>, tensor<32x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x192xf32>, tensor<192xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x256xf32>, tensor<256xf32>, tensor<256x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x192xf32>, tensor<192xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x256xf32>, tensor<256xf32>, tensor<256x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<f32>, tensor<f32>) {
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
    %36 = kiln.constant dense<-100> : tensor<i64>
    %37 = kiln.broadcast_in_dim %36, dims = [] : tensor<i64> -> tensor<124xi64>
    %38 = kiln.compare NE, %30, %37 : tensor<124xi64>
    %39 = kiln.convert %38 : tensor<124xi1> -> tensor<124xf32>
    %40 = kiln.reduce sum %39, dims = [0] : tensor<124xf32> -> tensor<f32>
    %41 = kiln.div %35, %40 : tensor<f32>
    %42 = kiln.neg %41 : tensor<f32>
    %43 = kiln.broadcast_in_dim %42, dims = [] : tensor<f32> -> tensor<124xf32>
    %44 = kiln.mul %43, %39 : tensor<124xf32>
    %45 = kiln.broadcast_in_dim %44, dims = [0] : tensor<124xf32> -> tensor<124x256xf32>
    %46 = kiln.constant dense<0.000000e+00> : tensor<f32>
    %47 = kiln.broadcast_in_dim %46, dims = [] : tensor<f32> -> tensor<124x256xf32>
    %48 = kiln.select %34, %45, %47 : tensor<124x256xi1>, tensor<124x256xf32>
    %49 = kiln.neg %48 : tensor<124x256xf32>
    %50 = kiln.reduce sum %49, dims = [1] : tensor<124x256xf32> -> tensor<124xf32>
    %51 = kiln.reshape %50 : tensor<124xf32> -> tensor<124x1xf32>
    %result, %new_state = kiln.rng_uniform %arg0 : tensor<2xi64> -> tensor<4x32x64xf32>
    %52 = kiln.constant dense<1.000000e-01> : tensor<f32>
    %53 = kiln.broadcast_in_dim %52, dims = [] : tensor<f32> -> tensor<4x32x64xf32>
    %54 = kiln.compare GE, %result, %53 : tensor<4x32x64xf32>
    %55 = kiln.gather %arg1[%arg5], axis = 0 : tensor<256x64xf32>, tensor<4x32xi64> -> tensor<4x32x64xf32>
    %56 = kiln.iota dim = 0 : tensor<32xi64>
    %57 = kiln.gather %arg6[%56], axis = 0 : tensor<32x64xf32>, tensor<32xi64> -> tensor<32x64xf32>
    %58 = kiln.broadcast_in_dim %57, dims = [1, 2] : tensor<32x64xf32> -> tensor<4x32x64xf32>
    %59 = kiln.add %55, %58 : tensor<4x32x64xf32>
    %60 = kiln.constant dense<1.11111116> : tensor<f32>
    %61 = kiln.broadcast_in_dim %60, dims = [] : tensor<f32> -> tensor<4x32x64xf32>
    %62 = kiln.mul %59, %61 : tensor<4x32x64xf32>
    %63 = kiln.constant dense<0.000000e+00> : tensor<f32>
    %64 = kiln.broadcast_in_dim %63, dims = [] : tensor<f32> -> tensor<4x32x64xf32>
    %65 = kiln.select %54, %62, %64 : tensor<4x32x64xi1>, tensor<4x32x64xf32>
    %result_0, %new_state_1 = kiln.rng_uniform %3 : tensor<2xi64> -> tensor<4x32x64xf32>
    %66 = kiln.compare GE, %result_0, %53 : tensor<4x32x64xf32>
    %result_2, %new_state_3 = kiln.rng_uniform %1 : tensor<2xi64> -> tensor<4x4x32x32xf32>
    %67 = kiln.broadcast_in_dim %52, dims = [] : tensor<f32> -> tensor<4x4x32x32xf32>
    %68 = kiln.compare GE, %result_2, %67 : tensor<4x4x32x32xf32>
    %69 = kiln.reshape %56 : tensor<32xi64> -> tensor<1x32xi64>
    %70 = kiln.reshape %69 : tensor<1x32xi64> -> tensor<32xi64>
    %71 = kiln.broadcast_in_dim %70, dims = [1] : tensor<32xi64> -> tensor<32x32xi64>
    %72 = kiln.reshape %56 : tensor<32xi64> -> tensor<32x1xi64>
    %73 = kiln.reshape %72 : tensor<32x1xi64> -> tensor<32xi64>
    %74 = kiln.broadcast_in_dim %73, dims = [0] : tensor<32xi64> -> tensor<32x32xi64>
    %75 = kiln.compare GT, %71, %74 : tensor<32x32xi64>
    %76 = kiln.broadcast_in_dim %75, dims = [2, 3] : tensor<32x32xi1> -> tensor<4x4x32x32xi1>
    %77 = kiln.constant dense<-3.40282347E+38> : tensor<f32>
    %78 = kiln.broadcast_in_dim %77, dims = [] : tensor<f32> -> tensor<4x4x32x32xf32>
    %79 = kiln.reduce sum %65, dims = [2] : tensor<4x32x64xf32> -> tensor<4x32xf32>
    %80 = kiln.reshape %79 : tensor<4x32xf32> -> tensor<4x32x1xf32>
    %81 = kiln.constant dense<6.400000e+01> : tensor<f32>
    %82 = kiln.broadcast_in_dim %81, dims = [] : tensor<f32> -> tensor<4x32x1xf32>
    %83 = kiln.div %80, %82 : tensor<4x32x1xf32>
    %84 = kiln.reshape %83 : tensor<4x32x1xf32> -> tensor<4x32xf32>
    %85 = kiln.broadcast_in_dim %84, dims = [0, 1] : tensor<4x32xf32> -> tensor<4x32x64xf32>
    %86 = kiln.sub %65, %85 : tensor<4x32x64xf32>
    %87 = kiln.mul %86, %86 : tensor<4x32x64xf32>
    %88 = kiln.reduce sum %87, dims = [2] : tensor<4x32x64xf32> -> tensor<4x32xf32>
    %89 = kiln.reshape %88 : tensor<4x32xf32> -> tensor<4x32x1xf32>
    %90 = kiln.div %89, %82 : tensor<4x32x1xf32>
    %91 = kiln.constant dense<9.99999974E-6> : tensor<f32>
    %92 = kiln.broadcast_in_dim %91, dims = [] : tensor<f32> -> tensor<4x32x1xf32>
    %93 = kiln.add %90, %92 : tensor<4x32x1xf32>
    %94 = kiln.rsqrt %93 : tensor<4x32x1xf32>
    %95 = kiln.reshape %94 : tensor<4x32x1xf32> -> tensor<4x32xf32>
    %96 = kiln.broadcast_in_dim %95, dims = [0, 1] : tensor<4x32xf32> -> tensor<4x32x64xf32>
    %97 = kiln.mul %86, %96 : tensor<4x32x64xf32>
    %98 = kiln.broadcast_in_dim %arg7, dims = [2] : tensor<64xf32> -> tensor<4x32x64xf32>
    %99 = kiln.mul %97, %98 : tensor<4x32x64xf32>
    %100 = kiln.broadcast_in_dim %arg8, dims = [2] : tensor<64xf32> -> tensor<4x32x64xf32>
    %101 = kiln.add %99, %100 : tensor<4x32x64xf32>
    %102 = kiln.reshape %101 : tensor<4x32x64xf32> -> tensor<128x64xf32>
    %103 = kiln.dot_general %102, %arg9, batch = [] x [], contract = [1] x [0] : tensor<128x64xf32>, tensor<64x192xf32> -> tensor<128x192xf32>
    %104 = kiln.reshape %103 : tensor<128x192xf32> -> tensor<4x32x192xf32>
    %105 = kiln.broadcast_in_dim %arg10, dims = [2] : tensor<192xf32> -> tensor<4x32x192xf32>
    %106 = kiln.add %104, %105 : tensor<4x32x192xf32>
    %107 = kiln.slice %106, start = [0, 0, 0], limit = [4, 32, 64], strides = [1, 1, 1] : tensor<4x32x192xf32> -> tensor<4x32x64xf32>
    %108 = kiln.reshape %107 : tensor<4x32x64xf32> -> tensor<4x32x4x16xf32>
    %109 = kiln.transpose %108, perm = [0, 2, 1, 3] : tensor<4x32x4x16xf32> -> tensor<4x4x32x16xf32>
    %110 = kiln.slice %106, start = [0, 0, 64], limit = [4, 32, 128], strides = [1, 1, 1] : tensor<4x32x192xf32> -> tensor<4x32x64xf32>
    %111 = kiln.reshape %110 : tensor<4x32x64xf32> -> tensor<4x32x4x16xf32>
    %112 = kiln.transpose %111, perm = [0, 2, 1, 3] : tensor<4x32x4x16xf32> -> tensor<4x4x32x16xf32>
    %113 = kiln.transpose %112, perm = [0, 1, 3, 2] : tensor<4x4x32x16xf32> -> tensor<4x4x16x32xf32>
    %114 = kiln.dot_general %109, %113, batch = [0, 1] x [0, 1], contract = [3] x [2] : tensor<4x4x32x16xf32>, tensor<4x4x16x32xf32> -> tensor<4x4x32x32xf32>
    %115 = kiln.constant dense<2.500000e-01> : tensor<f32>
    %116 = kiln.broadcast_in_dim %115, dims = [] : tensor<f32> -> tensor<4x4x32x32xf32>
    %117 = kiln.mul %114, %116 : tensor<4x4x32x32xf32>
    %118 = kiln.select %76, %78, %117 : tensor<4x4x32x32xi1>, tensor<4x4x32x32xf32>
    %119 = kiln.reduce max %118, dims = [3] : tensor<4x4x32x32xf32> -> tensor<4x4x32xf32>
    %120 = kiln.reshape %119 : tensor<4x4x32xf32> -> tensor<4x4x32x1xf32>
    %121 = kiln.reshape %120 : tensor<4x4x32x1xf32> -> tensor<4x4x32xf32>
    %122 = kiln.broadcast_in_dim %121, dims = [0, 1, 2] : tensor<4x4x32xf32> -> tensor<4x4x32x32xf32>
    %123 = kiln.sub %118, %122 : tensor<4x4x32x32xf32>
    %124 = kiln.exp %123 : tensor<4x4x32x32xf32>
    %125 = kiln.reduce sum %124, dims = [3] : tensor<4x4x32x32xf32> -> tensor<4x4x32xf32>
    %126 = kiln.reshape %125 : tensor<4x4x32xf32> -> tensor<4x4x32x1xf32>
    %127 = kiln.reshape %126 : tensor<4x4x32x1xf32> -> tensor<4x4x32xf32>
    %128 = kiln.broadcast_in_dim %127, dims = [0, 1, 2] : tensor<4x4x32xf32> -> tensor<4x4x32x32xf32>
    %129 = kiln.div %124, %128 : tensor<4x4x32x32xf32>
    %130 = kiln.broadcast_in_dim %60, dims = [] : tensor<f32> -> tensor<4x4x32x32xf32>
    %131 = kiln.mul %129, %130 : tensor<4x4x32x32xf32>
    %132 = kiln.broadcast_in_dim %63, dims = [] : tensor<f32> -> tensor<4x4x32x32xf32>
    %133 = kiln.select %68, %131, %132 : tensor<4x4x32x32xi1>, tensor<4x4x32x32xf32>
    %134 = kiln.slice %106, start = [0, 0, 128], limit = [4, 32, 192], strides = [1, 1, 1] : tensor<4x32x192xf32> -> tensor<4x32x64xf32>
    %135 = kiln.reshape %134 : tensor<4x32x64xf32> -> tensor<4x32x4x16xf32>
    %136 = kiln.transpose %135, perm = [0, 2, 1, 3] : tensor<4x32x4x16xf32> -> tensor<4x4x32x16xf32>
    %137 = kiln.dot_general %133, %136, batch = [0, 1] x [0, 1], contract = [3] x [2] : tensor<4x4x32x32xf32>, tensor<4x4x32x16xf32> -> tensor<4x4x32x16xf32>
    %138 = kiln.transpose %137, perm = [0, 2, 1, 3] : tensor<4x4x32x16xf32> -> tensor<4x32x4x16xf32>
    %139 = kiln.reshape %138 : tensor<4x32x4x16xf32> -> tensor<4x32x64xf32>
    %140 = kiln.reshape %139 : tensor<4x32x64xf32> -> tensor<128x64xf32>
    %141 = kiln.dot_general %140, %arg11, batch = [] x [], contract = [1] x [0] : tensor<128x64xf32>, tensor<64x64xf32> -> tensor<128x64xf32>
    %142 = kiln.reshape %141 : tensor<128x64xf32> -> tensor<4x32x64xf32>
    %143 = kiln.broadcast_in_dim %arg12, dims = [2] : tensor<64xf32> -> tensor<4x32x64xf32>
    %144 = kiln.add %142, %143 : tensor<4x32x64xf32>
    %145 = kiln.mul %144, %61 : tensor<4x32x64xf32>
    %146 = kiln.select %66, %145, %64 : tensor<4x32x64xi1>, tensor<4x32x64xf32>
    %147 = kiln.add %65, %146 : tensor<4x32x64xf32>
    %result_4, %new_state_5 = kiln.rng_uniform %5 : tensor<2xi64> -> tensor<4x32x64xf32>
    %148 = kiln.compare GE, %result_4, %53 : tensor<4x32x64xf32>
    %149 = kiln.reduce sum %147, dims = [2] : tensor<4x32x64xf32> -> tensor<4x32xf32>
    %150 = kiln.reshape %149 : tensor<4x32xf32> -> tensor<4x32x1xf32>
    %151 = kiln.div %150, %82 : tensor<4x32x1xf32>
    %152 = kiln.reshape %151 : tensor<4x32x1xf32> -> tensor<4x32xf32>
    %153 = kiln.broadcast_in_dim %152, dims = [0, 1] : tensor<4x32xf32> -> tensor<4x32x64xf32>
    %154 = kiln.sub %147, %153 : tensor<4x32x64xf32>
    %155 = kiln.mul %154, %154 : tensor<4x32x64xf32>
    %156 = kiln.reduce sum %155, dims = [2] : tensor<4x32x64xf32> -> tensor<4x32xf32>
    %157 = kiln.reshape %156 : tensor<4x32xf32> -> tensor<4x32x1xf32>
    %158 = kiln.div %157, %82 : tensor<4x32x1xf32>
    %159 = kiln.add %158, %92 : tensor<4x32x1xf32>
    %160 = kiln.rsqrt %159 : tensor<4x32x1xf32>
    %161 = kiln.reshape %160 : tensor<4x32x1xf32> -> tensor<4x32xf32>
    %162 = kiln.broadcast_in_dim %161, dims = [0, 1] : tensor<4x32xf32> -> tensor<4x32x64xf32>
    %163 = kiln.mul %154, %162 : tensor<4x32x64xf32>
    %164 = kiln.broadcast_in_dim %arg13, dims = [2] : tensor<64xf32> -> tensor<4x32x64xf32>
    %165 = kiln.mul %163, %164 : tensor<4x32x64xf32>
    %166 = kiln.broadcast_in_dim %arg14, dims = [2] : tensor<64xf32> -> tensor<4x32x64xf32>
    %167 = kiln.add %165, %166 : tensor<4x32x64xf32>
    %168 = kiln.reshape %167 : tensor<4x32x64xf32> -> tensor<128x64xf32>
    %169 = kiln.dot_general %168, %arg15, batch = [] x [], contract = [1] x [0] : tensor<128x64xf32>, tensor<64x256xf32> -> tensor<128x256xf32>
    %170 = kiln.reshape %169 : tensor<128x256xf32> -> tensor<4x32x256xf32>
    %171 = kiln.broadcast_in_dim %arg16, dims = [2] : tensor<256xf32> -> tensor<4x32x256xf32>
    %172 = kiln.add %170, %171 : tensor<4x32x256xf32>
    %173 = kiln.constant dense<5.000000e-01> : tensor<f32>
    %174 = kiln.broadcast_in_dim %173, dims = [] : tensor<f32> -> tensor<4x32x256xf32>
    %175 = kiln.mul %172, %174 : tensor<4x32x256xf32>
    %176 = kiln.mul %172, %172 : tensor<4x32x256xf32>
    %177 = kiln.mul %176, %172 : tensor<4x32x256xf32>
    %178 = kiln.constant dense<4.471500e-02> : tensor<f32>
    %179 = kiln.broadcast_in_dim %178, dims = [] : tensor<f32> -> tensor<4x32x256xf32>
    %180 = kiln.mul %177, %179 : tensor<4x32x256xf32>
    %181 = kiln.add %172, %180 : tensor<4x32x256xf32>
    %182 = kiln.constant dense<0.797884583> : tensor<f32>
    %183 = kiln.broadcast_in_dim %182, dims = [] : tensor<f32> -> tensor<4x32x256xf32>
    %184 = kiln.mul %181, %183 : tensor<4x32x256xf32>
    %185 = kiln.tanh %184 : tensor<4x32x256xf32>
    %186 = kiln.broadcast_in_dim %35, dims = [] : tensor<f32> -> tensor<4x32x256xf32>
    %187 = kiln.add %185, %186 : tensor<4x32x256xf32>
    %188 = kiln.mul %175, %187 : tensor<4x32x256xf32>
    %189 = kiln.reshape %188 : tensor<4x32x256xf32> -> tensor<128x256xf32>
    %190 = kiln.dot_general %189, %arg17, batch = [] x [], contract = [1] x [0] : tensor<128x256xf32>, tensor<256x64xf32> -> tensor<128x64xf32>
    %191 = kiln.reshape %190 : tensor<128x64xf32> -> tensor<4x32x64xf32>
    %192 = kiln.broadcast_in_dim %arg18, dims = [2] : tensor<64xf32> -> tensor<4x32x64xf32>
    %193 = kiln.add %191, %192 : tensor<4x32x64xf32>
    %194 = kiln.mul %193, %61 : tensor<4x32x64xf32>
    %195 = kiln.select %148, %194, %64 : tensor<4x32x64xi1>, tensor<4x32x64xf32>
    %196 = kiln.add %147, %195 : tensor<4x32x64xf32>
    %result_6, %new_state_7 = kiln.rng_uniform %9 : tensor<2xi64> -> tensor<4x32x64xf32>
    %197 = kiln.compare GE, %result_6, %53 : tensor<4x32x64xf32>
    %result_8, %new_state_9 = kiln.rng_uniform %7 : tensor<2xi64> -> tensor<4x4x32x32xf32>
    %198 = kiln.compare GE, %result_8, %67 : tensor<4x4x32x32xf32>
    %199 = kiln.reduce sum %196, dims = [2] : tensor<4x32x64xf32> -> tensor<4x32xf32>
    %200 = kiln.reshape %199 : tensor<4x32xf32> -> tensor<4x32x1xf32>
    %201 = kiln.div %200, %82 : tensor<4x32x1xf32>
    %202 = kiln.reshape %201 : tensor<4x32x1xf32> -> tensor<4x32xf32>
    %203 = kiln.broadcast_in_dim %202, dims = [0, 1] : tensor<4x32xf32> -> tensor<4x32x64xf32>
    %204 = kiln.sub %196, %203 : tensor<4x32x64xf32>
    %205 = kiln.mul %204, %204 : tensor<4x32x64xf32>
    %206 = kiln.reduce sum %205, dims = [2] : tensor<4x32x64xf32> -> tensor<4x32xf32>
    %207 = kiln.reshape %206 : tensor<4x32xf32> -> tensor<4x32x1xf32>
    %208 = kiln.div %207, %82 : tensor<4x32x1xf32>
    %209 = kiln.add %208, %92 : tensor<4x32x1xf32>
    %210 = kiln.rsqrt %209 : tensor<4x32x1xf32>
    %211 = kiln.reshape %210 : tensor<4x32x1xf32> -> tensor<4x32xf32>
    %212 = kiln.broadcast_in_dim %211, dims = [0, 1] : tensor<4x32xf32> -> tensor<4x32x64xf32>
    %213 = kiln.mul %204, %212 : tensor<4x32x64xf32>
    %214 = kiln.broadcast_in_dim %arg19, dims = [2] : tensor<64xf32> -> tensor<4x32x64xf32>
    %215 = kiln.mul %213, %214 : tensor<4x32x64xf32>
    %216 = kiln.broadcast_in_dim %arg20, dims = [2] : tensor<64xf32> -> tensor<4x32x64xf32>
    %217 = kiln.add %215, %216 : tensor<4x32x64xf32>
    %218 = kiln.reshape %217 : tensor<4x32x64xf32> -> tensor<128x64xf32>
    %219 = kiln.dot_general %218, %arg21, batch = [] x [], contract = [1] x [0] : tensor<128x64xf32>, tensor<64x192xf32> -> tensor<128x192xf32>
    %220 = kiln.reshape %219 : tensor<128x192xf32> -> tensor<4x32x192xf32>
    %221 = kiln.broadcast_in_dim %arg22, dims = [2] : tensor<192xf32> -> tensor<4x32x192xf32>
    %222 = kiln.add %220, %221 : tensor<4x32x192xf32>
    %223 = kiln.slice %222, start = [0, 0, 0], limit = [4, 32, 64], strides = [1, 1, 1] : tensor<4x32x192xf32> -> tensor<4x32x64xf32>
    %224 = kiln.reshape %223 : tensor<4x32x64xf32> -> tensor<4x32x4x16xf32>
    %225 = kiln.transpose %224, perm = [0, 2, 1, 3] : tensor<4x32x4x16xf32> -> tensor<4x4x32x16xf32>
    %226 = kiln.slice %222, start = [0, 0, 64], limit = [4, 32, 128], strides = [1, 1, 1] : tensor<4x32x192xf32> -> tensor<4x32x64xf32>
    %227 = kiln.reshape %226 : tensor<4x32x64xf32> -> tensor<4x32x4x16xf32>
    %228 = kiln.transpose %227, perm = [0, 2, 1, 3] : tensor<4x32x4x16xf32> -> tensor<4x4x32x16xf32>
    %229 = kiln.transpose %228, perm = [0, 1, 3, 2] : tensor<4x4x32x16xf32> -> tensor<4x4x16x32xf32>
    %230 = kiln.dot_general %225, %229, batch = [0, 1] x [0, 1], contract = [3] x [2] : tensor<4x4x32x16xf32>, tensor<4x4x16x32xf32> -> tensor<4x4x32x32xf32>
    %231 = kiln.mul %230, %116 : tensor<4x4x32x32xf32>
    %232 = kiln.select %76, %78, %231 : tensor<4x4x32x32xi1>, tensor<4x4x32x32xf32>
    %233 = kiln.reduce max %232, dims = [3] : tensor<4x4x32x32xf32> -> tensor<4x4x32xf32>
    %234 = kiln.reshape %233 : tensor<4x4x32xf32> -> tensor<4x4x32x1xf32>
    %235 = kiln.reshape %234 : tensor<4x4x32x1xf32> -> tensor<4x4x32xf32>
    %236 = kiln.broadcast_in_dim %235, dims = [0, 1, 2] : tensor<4x4x32xf32> -> tensor<4x4x32x32xf32>
    %237 = kiln.sub %232, %236 : tensor<4x4x32x32xf32>
    %238 = kiln.exp %237 : tensor<4x4x32x32xf32>
    %239 = kiln.reduce sum %238, dims = [3] : tensor<4x4x32x32xf32> -> tensor<4x4x32xf32>
    %240 = kiln.reshape %239 : tensor<4x4x32xf32> -> tensor<4x4x32x1xf32>
    %241 = kiln.reshape %240 : tensor<4x4x32x1xf32> -> tensor<4x4x32xf32>
    %242 = kiln.broadcast_in_dim %241, dims = [0, 1, 2] : tensor<4x4x32xf32> -> tensor<4x4x32x32xf32>
    %243 = kiln.div %238, %242 : tensor<4x4x32x32xf32>
    %244 = kiln.mul %243, %130 : tensor<4x4x32x32xf32>
    %245 = kiln.select %198, %244, %132 : tensor<4x4x32x32xi1>, tensor<4x4x32x32xf32>
    %246 = kiln.slice %222, start = [0, 0, 128], limit = [4, 32, 192], strides = [1, 1, 1] : tensor<4x32x192xf32> -> tensor<4x32x64xf32>
    %247 = kiln.reshape %246 : tensor<4x32x64xf32> -> tensor<4x32x4x16xf32>
    %248 = kiln.transpose %247, perm = [0, 2, 1, 3] : tensor<4x32x4x16xf32> -> tensor<4x4x32x16xf32>
    %249 = kiln.dot_general %245, %248, batch = [0, 1] x [0, 1], contract = [3] x [2] : tensor<4x4x32x32xf32>, tensor<4x4x32x16xf32> -> tensor<4x4x32x16xf32>
    %250 = kiln.transpose %249, perm = [0, 2, 1, 3] : tensor<4x4x32x16xf32> -> tensor<4x32x4x16xf32>
    %251 = kiln.reshape %250 : tensor<4x32x4x16xf32> -> tensor<4x32x64xf32>
    %252 = kiln.reshape %251 : tensor<4x32x64xf32> -> tensor<128x64xf32>
    %253 = kiln.dot_general %252, %arg23, batch = [] x [], contract = [1] x [0] : tensor<128x64xf32>, tensor<64x64xf32> -> tensor<128x64xf32>
    %254 = kiln.reshape %253 : tensor<128x64xf32> -> tensor<4x32x64xf32>
    %255 = kiln.broadcast_in_dim %arg24, dims = [2] : tensor<64xf32> -> tensor<4x32x64xf32>
    %256 = kiln.add %254, %255 : tensor<4x32x64xf32>
    %257 = kiln.mul %256, %61 : tensor<4x32x64xf32>
    %258 = kiln.select %197, %257, %64 : tensor<4x32x64xi1>, tensor<4x32x64xf32>
    %259 = kiln.add %196, %258 : tensor<4x32x64xf32>
    %result_10, %new_state_11 = kiln.rng_uniform %11 : tensor<2xi64> -> tensor<4x32x64xf32>
    %260 = kiln.compare GE, %result_10, %53 : tensor<4x32x64xf32>
    %261 = kiln.reduce sum %259, dims = [2] : tensor<4x32x64xf32> -> tensor<4x32xf32>
    %262 = kiln.reshape %261 : tensor<4x32xf32> -> tensor<4x32x1xf32>
    %263 = kiln.div %262, %82 : tensor<4x32x1xf32>
    %264 = kiln.reshape %263 : tensor<4x32x1xf32> -> tensor<4x32xf32>
    %265 = kiln.broadcast_in_dim %264, dims = [0, 1] : tensor<4x32xf32> -> tensor<4x32x64xf32>
    %266 = kiln.sub %259, %265 : tensor<4x32x64xf32>
    %267 = kiln.mul %266, %266 : tensor<4x32x64xf32>
    %268 = kiln.reduce sum %267, dims = [2] : tensor<4x32x64xf32> -> tensor<4x32xf32>
    %269 = kiln.reshape %268 : tensor<4x32xf32> -> tensor<4x32x1xf32>
    %270 = kiln.div %269, %82 : tensor<4x32x1xf32>
    %271 = kiln.add %270, %92 : tensor<4x32x1xf32>
    %272 = kiln.rsqrt %271 : tensor<4x32x1xf32>
    %273 = kiln.reshape %272 : tensor<4x32x1xf32> -> tensor<4x32xf32>
    %274 = kiln.broadcast_in_dim %273, dims = [0, 1] : tensor<4x32xf32> -> tensor<4x32x64xf32>
    %275 = kiln.mul %266, %274 : tensor<4x32x64xf32>
    %276 = kiln.broadcast_in_dim %arg25, dims = [2] : tensor<64xf32> -> tensor<4x32x64xf32>
    %277 = kiln.mul %275, %276 : tensor<4x32x64xf32>
    %278 = kiln.broadcast_in_dim %arg26, dims = [2] : tensor<64xf32> -> tensor<4x32x64xf32>
    %279 = kiln.add %277, %278 : tensor<4x32x64xf32>
    %280 = kiln.reshape %279 : tensor<4x32x64xf32> -> tensor<128x64xf32>
    %281 = kiln.dot_general %280, %arg27, batch = [] x [], contract = [1] x [0] : tensor<128x64xf32>, tensor<64x256xf32> -> tensor<128x256xf32>
    %282 = kiln.reshape %281 : tensor<128x256xf32> -> tensor<4x32x256xf32>
    %283 = kiln.broadcast_in_dim %arg28, dims = [2] : tensor<256xf32> -> tensor<4x32x256xf32>
    %284 = kiln.add %282, %283 : tensor<4x32x256xf32>
    %285 = kiln.mul %284, %174 : tensor<4x32x256xf32>
    %286 = kiln.mul %284, %284 : tensor<4x32x256xf32>
    %287 = kiln.mul %286, %284 : tensor<4x32x256xf32>
    %288 = kiln.mul %287, %179 : tensor<4x32x256xf32>
    %289 = kiln.add %284, %288 : tensor<4x32x256xf32>
    %290 = kiln.mul %289, %183 : tensor<4x32x256xf32>
    %291 = kiln.tanh %290 : tensor<4x32x256xf32>
    %292 = kiln.add %291, %186 : tensor<4x32x256xf32>
    %293 = kiln.mul %285, %292 : tensor<4x32x256xf32>
    %294 = kiln.reshape %293 : tensor<4x32x256xf32> -> tensor<128x256xf32>
    %295 = kiln.dot_general %294, %arg29, batch = [] x [], contract = [1] x [0] : tensor<128x256xf32>, tensor<256x64xf32> -> tensor<128x64xf32>
    %296 = kiln.reshape %295 : tensor<128x64xf32> -> tensor<4x32x64xf32>
    %297 = kiln.broadcast_in_dim %arg30, dims = [2] : tensor<64xf32> -> tensor<4x32x64xf32>
    %298 = kiln.add %296, %297 : tensor<4x32x64xf32>
    %299 = kiln.mul %298, %61 : tensor<4x32x64xf32>
    %300 = kiln.select %260, %299, %64 : tensor<4x32x64xi1>, tensor<4x32x64xf32>
    %301 = kiln.add %259, %300 : tensor<4x32x64xf32>
    %302 = kiln.reduce sum %301, dims = [2] : tensor<4x32x64xf32> -> tensor<4x32xf32>
    %303 = kiln.reshape %302 : tensor<4x32xf32> -> tensor<4x32x1xf32>
    %304 = kiln.div %303, %82 : tensor<4x32x1xf32>
    %305 = kiln.reshape %304 : tensor<4x32x1xf32> -> tensor<4x32xf32>
    %306 = kiln.broadcast_in_dim %305, dims = [0, 1] : tensor<4x32xf32> -> tensor<4x32x64xf32>
    %307 = kiln.sub %301, %306 : tensor<4x32x64xf32>
    %308 = kiln.mul %307, %307 : tensor<4x32x64xf32>
    %309 = kiln.reduce sum %308, dims = [2] : tensor<4x32x64xf32> -> tensor<4x32xf32>
    %310 = kiln.reshape %309 : tensor<4x32xf32> -> tensor<4x32x1xf32>
    %311 = kiln.div %310, %82 : tensor<4x32x1xf32>
    %312 = kiln.add %311, %92 : tensor<4x32x1xf32>
    %313 = kiln.rsqrt %312 : tensor<4x32x1xf32>
    %314 = kiln.reshape %313 : tensor<4x32x1xf32> -> tensor<4x32xf32>
    %315 = kiln.broadcast_in_dim %314, dims = [0, 1] : tensor<4x32xf32> -> tensor<4x32x64xf32>
    %316 = kiln.mul %307, %315 : tensor<4x32x64xf32>
    %317 = kiln.broadcast_in_dim %arg31, dims = [2] : tensor<64xf32> -> tensor<4x32x64xf32>
    %318 = kiln.mul %316, %317 : tensor<4x32x64xf32>
    %319 = kiln.broadcast_in_dim %arg32, dims = [2] : tensor<64xf32> -> tensor<4x32x64xf32>
    %320 = kiln.add %318, %319 : tensor<4x32x64xf32>
    %321 = kiln.reshape %320 : tensor<4x32x64xf32> -> tensor<128x64xf32>
    %322 = kiln.transpose %arg1, perm = [1, 0] : tensor<256x64xf32> -> tensor<64x256xf32>
    %323 = kiln.dot_general %321, %322, batch = [] x [], contract = [1] x [0] : tensor<128x64xf32>, tensor<64x256xf32> -> tensor<128x256xf32>
    %324 = kiln.reshape %323 : tensor<128x256xf32> -> tensor<4x32x256xf32>
    %325 = kiln.slice %324, start = [0, 0, 0], limit = [4, 31, 256], strides = [1, 1, 1] : tensor<4x32x256xf32> -> tensor<4x31x256xf32>
    %326 = kiln.reshape %325 : tensor<4x31x256xf32> -> tensor<124x256xf32>
    %327 = kiln.reduce max %326, dims = [1] : tensor<124x256xf32> -> tensor<124xf32>
    %328 = kiln.reshape %327 : tensor<124xf32> -> tensor<124x1xf32>
    %329 = kiln.reshape %328 : tensor<124x1xf32> -> tensor<124xf32>
    %330 = kiln.broadcast_in_dim %329, dims = [0] : tensor<124xf32> -> tensor<124x256xf32>
    %331 = kiln.sub %326, %330 : tensor<124x256xf32>
    %332 = kiln.exp %331 : tensor<124x256xf32>
    %333 = kiln.reduce sum %332, dims = [1] : tensor<124x256xf32> -> tensor<124xf32>
    %334 = kiln.reshape %333 : tensor<124xf32> -> tensor<124x1xf32>
    %335 = kiln.div %51, %334 : tensor<124x1xf32>
    %336 = kiln.reshape %335 : tensor<124x1xf32> -> tensor<124xf32>
    %337 = kiln.broadcast_in_dim %336, dims = [0] : tensor<124xf32> -> tensor<124x256xf32>
    %338 = kiln.mul %337, %332 : tensor<124x256xf32>
    %339 = kiln.add %48, %338 : tensor<124x256xf32>
    %340 = kiln.reshape %339 : tensor<124x256xf32> -> tensor<4x31x256xf32>
    %341 = kiln.constant dense<0.000000e+00> : tensor<f32>
    %342 = kiln.pad %340, %341, low = [0, 0, 0], high = [0, 1, 0] : tensor<4x31x256xf32>, tensor<f32> -> tensor<4x32x256xf32>
    %343 = kiln.reshape %342 : tensor<4x32x256xf32> -> tensor<128x256xf32>
    %344 = kiln.dot_general %343, %321, batch = [] x [], contract = [0] x [0] : tensor<128x256xf32>, tensor<128x64xf32> -> tensor<256x64xf32>
    %345 = kiln.transpose %344, perm = [1, 0] : tensor<256x64xf32> -> tensor<64x256xf32>
    %346 = kiln.transpose %345, perm = [1, 0] : tensor<64x256xf32> -> tensor<256x64xf32>
    %347 = kiln.constant dense<0.000000e+00> : tensor<f32>
    %348 = kiln.broadcast_in_dim %347, dims = [] : tensor<f32> -> tensor<256x64xf32>
    %349 = kiln.dot_general %343, %322, batch = [] x [], contract = [1] x [1] : tensor<128x256xf32>, tensor<64x256xf32> -> tensor<128x64xf32>
    %350 = kiln.reshape %349 : tensor<128x64xf32> -> tensor<4x32x64xf32>
    %351 = kiln.mul %350, %317 : tensor<4x32x64xf32>
    %352 = kiln.mul %351, %315 : tensor<4x32x64xf32>
    %353 = kiln.mul %351, %307 : tensor<4x32x64xf32>
    %354 = kiln.reduce sum %353, dims = [2] : tensor<4x32x64xf32> -> tensor<4x32xf32>
    %355 = kiln.reshape %354 : tensor<4x32xf32> -> tensor<4x32x1xf32>
    %356 = kiln.mul %313, %313 : tensor<4x32x1xf32>
    %357 = kiln.mul %313, %356 : tensor<4x32x1xf32>
    %358 = kiln.constant dense<-5.000000e-01> : tensor<f32>
    %359 = kiln.broadcast_in_dim %358, dims = [] : tensor<f32> -> tensor<4x32x1xf32>
    %360 = kiln.mul %357, %359 : tensor<4x32x1xf32>
    %361 = kiln.mul %355, %360 : tensor<4x32x1xf32>
    %362 = kiln.div %361, %82 : tensor<4x32x1xf32>
    %363 = kiln.reshape %362 : tensor<4x32x1xf32> -> tensor<4x32xf32>
    %364 = kiln.broadcast_in_dim %363, dims = [0, 1] : tensor<4x32xf32> -> tensor<4x32x64xf32>
    %365 = kiln.mul %364, %307 : tensor<4x32x64xf32>
    %366 = kiln.add %352, %365 : tensor<4x32x64xf32>
    %367 = kiln.add %366, %365 : tensor<4x32x64xf32>
    %368 = kiln.neg %367 : tensor<4x32x64xf32>
    %369 = kiln.reduce sum %368, dims = [2] : tensor<4x32x64xf32> -> tensor<4x32xf32>
    %370 = kiln.reshape %369 : tensor<4x32xf32> -> tensor<4x32x1xf32>
    %371 = kiln.div %370, %82 : tensor<4x32x1xf32>
    %372 = kiln.reshape %371 : tensor<4x32x1xf32> -> tensor<4x32xf32>
    %373 = kiln.broadcast_in_dim %372, dims = [0, 1] : tensor<4x32xf32> -> tensor<4x32x64xf32>
    %374 = kiln.add %367, %373 : tensor<4x32x64xf32>
    %375 = kiln.constant dense<0.000000e+00> : tensor<f32>
    %376 = kiln.broadcast_in_dim %375, dims = [] : tensor<f32> -> tensor<4x32x64xf32>
    %377 = kiln.select %260, %374, %376 : tensor<4x32x64xi1>, tensor<4x32x64xf32>
    %378 = kiln.mul %377, %61 : tensor<4x32x64xf32>
    %379 = kiln.reshape %378 : tensor<4x32x64xf32> -> tensor<128x64xf32>
    %380 = kiln.dot_general %379, %arg29, batch = [] x [], contract = [1] x [1] : tensor<128x64xf32>, tensor<256x64xf32> -> tensor<128x256xf32>
    %381 = kiln.reshape %380 : tensor<128x256xf32> -> tensor<4x32x256xf32>
    %382 = kiln.mul %381, %285 : tensor<4x32x256xf32>
    %383 = kiln.constant dense<1.000000e+00> : tensor<f32>
    %384 = kiln.broadcast_in_dim %383, dims = [] : tensor<f32> -> tensor<4x32x256xf32>
    %385 = kiln.mul %291, %291 : tensor<4x32x256xf32>
    %386 = kiln.sub %384, %385 : tensor<4x32x256xf32>
    %387 = kiln.mul %382, %386 : tensor<4x32x256xf32>
    %388 = kiln.mul %387, %183 : tensor<4x32x256xf32>
    %389 = kiln.mul %388, %179 : tensor<4x32x256xf32>
    %390 = kiln.mul %389, %286 : tensor<4x32x256xf32>
    %391 = kiln.add %388, %390 : tensor<4x32x256xf32>
    %392 = kiln.mul %389, %284 : tensor<4x32x256xf32>
    %393 = kiln.mul %392, %284 : tensor<4x32x256xf32>
    %394 = kiln.add %391, %393 : tensor<4x32x256xf32>
    %395 = kiln.add %394, %393 : tensor<4x32x256xf32>
    %396 = kiln.mul %381, %292 : tensor<4x32x256xf32>
    %397 = kiln.mul %396, %174 : tensor<4x32x256xf32>
    %398 = kiln.add %395, %397 : tensor<4x32x256xf32>
    %399 = kiln.reshape %398 : tensor<4x32x256xf32> -> tensor<128x256xf32>
    %400 = kiln.dot_general %399, %arg27, batch = [] x [], contract = [1] x [1] : tensor<128x256xf32>, tensor<64x256xf32> -> tensor<128x64xf32>
    %401 = kiln.reshape %400 : tensor<128x64xf32> -> tensor<4x32x64xf32>
    %402 = kiln.mul %401, %276 : tensor<4x32x64xf32>
    %403 = kiln.mul %402, %274 : tensor<4x32x64xf32>
    %404 = kiln.mul %402, %266 : tensor<4x32x64xf32>
    %405 = kiln.reduce sum %404, dims = [2] : tensor<4x32x64xf32> -> tensor<4x32xf32>
    %406 = kiln.reshape %405 : tensor<4x32xf32> -> tensor<4x32x1xf32>
    %407 = kiln.mul %272, %272 : tensor<4x32x1xf32>
    %408 = kiln.mul %272, %407 : tensor<4x32x1xf32>
    %409 = kiln.mul %408, %359 : tensor<4x32x1xf32>
    %410 = kiln.mul %406, %409 : tensor<4x32x1xf32>
    %411 = kiln.div %410, %82 : tensor<4x32x1xf32>
    %412 = kiln.reshape %411 : tensor<4x32x1xf32> -> tensor<4x32xf32>
    %413 = kiln.broadcast_in_dim %412, dims = [0, 1] : tensor<4x32xf32> -> tensor<4x32x64xf32>
    %414 = kiln.mul %413, %266 : tensor<4x32x64xf32>
    %415 = kiln.add %403, %414 : tensor<4x32x64xf32>
    %416 = kiln.add %415, %414 : tensor<4x32x64xf32>
    %417 = kiln.add %374, %416 : tensor<4x32x64xf32>
    %418 = kiln.neg %416 : tensor<4x32x64xf32>
    %419 = kiln.reduce sum %418, dims = [2] : tensor<4x32x64xf32> -> tensor<4x32xf32>
    %420 = kiln.reshape %419 : tensor<4x32xf32> -> tensor<4x32x1xf32>
    %421 = kiln.div %420, %82 : tensor<4x32x1xf32>
    %422 = kiln.reshape %421 : tensor<4x32x1xf32> -> tensor<4x32xf32>
    %423 = kiln.broadcast_in_dim %422, dims = [0, 1] : tensor<4x32xf32> -> tensor<4x32x64xf32>
    %424 = kiln.add %417, %423 : tensor<4x32x64xf32>
    %425 = kiln.select %197, %424, %376 : tensor<4x32x64xi1>, tensor<4x32x64xf32>
    %426 = kiln.mul %425, %61 : tensor<4x32x64xf32>
    %427 = kiln.reshape %426 : tensor<4x32x64xf32> -> tensor<128x64xf32>
    %428 = kiln.dot_general %427, %arg23, batch = [] x [], contract = [1] x [1] : tensor<128x64xf32>, tensor<64x64xf32> -> tensor<128x64xf32>
    %429 = kiln.reshape %428 : tensor<128x64xf32> -> tensor<4x32x64xf32>
    %430 = kiln.reshape %429 : tensor<4x32x64xf32> -> tensor<4x32x4x16xf32>
    %431 = kiln.transpose %430, perm = [0, 2, 1, 3] : tensor<4x32x4x16xf32> -> tensor<4x4x32x16xf32>
    %432 = kiln.dot_general %431, %245, batch = [0, 1] x [0, 1], contract = [2] x [2] : tensor<4x4x32x16xf32>, tensor<4x4x32x32xf32> -> tensor<4x4x16x32xf32>
    %433 = kiln.transpose %432, perm = [0, 1, 3, 2] : tensor<4x4x16x32xf32> -> tensor<4x4x32x16xf32>
    %434 = kiln.transpose %433, perm = [0, 2, 1, 3] : tensor<4x4x32x16xf32> -> tensor<4x32x4x16xf32>
    %435 = kiln.reshape %434 : tensor<4x32x4x16xf32> -> tensor<4x32x64xf32>
    %436 = kiln.constant dense<0.000000e+00> : tensor<f32>
    %437 = kiln.pad %435, %436, low = [0, 0, 128], high = [0, 0, 0] : tensor<4x32x64xf32>, tensor<f32> -> tensor<4x32x192xf32>
    %438 = kiln.constant dense<0.000000e+00> : tensor<f32>
    %439 = kiln.broadcast_in_dim %438, dims = [] : tensor<f32> -> tensor<4x4x32x32xf32>
    %440 = kiln.dot_general %431, %248, batch = [0, 1] x [0, 1], contract = [3] x [3] : tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32> -> tensor<4x4x32x32xf32>
    %441 = kiln.select %198, %440, %439 : tensor<4x4x32x32xi1>, tensor<4x4x32x32xf32>
    %442 = kiln.mul %441, %130 : tensor<4x4x32x32xf32>
    %443 = kiln.div %442, %242 : tensor<4x4x32x32xf32>
    %444 = kiln.mul %442, %243 : tensor<4x4x32x32xf32>
    %445 = kiln.div %444, %242 : tensor<4x4x32x32xf32>
    %446 = kiln.neg %445 : tensor<4x4x32x32xf32>
    %447 = kiln.reduce sum %446, dims = [3] : tensor<4x4x32x32xf32> -> tensor<4x4x32xf32>
    %448 = kiln.reshape %447 : tensor<4x4x32xf32> -> tensor<4x4x32x1xf32>
    %449 = kiln.reshape %448 : tensor<4x4x32x1xf32> -> tensor<4x4x32xf32>
    %450 = kiln.broadcast_in_dim %449, dims = [0, 1, 2] : tensor<4x4x32xf32> -> tensor<4x4x32x32xf32>
    %451 = kiln.add %443, %450 : tensor<4x4x32x32xf32>
    %452 = kiln.mul %451, %238 : tensor<4x4x32x32xf32>
    %453 = kiln.select %76, %439, %452 : tensor<4x4x32x32xi1>, tensor<4x4x32x32xf32>
    %454 = kiln.mul %453, %116 : tensor<4x4x32x32xf32>
    %455 = kiln.dot_general %454, %225, batch = [0, 1] x [0, 1], contract = [2] x [2] : tensor<4x4x32x32xf32>, tensor<4x4x32x16xf32> -> tensor<4x4x32x16xf32>
    %456 = kiln.transpose %455, perm = [0, 1, 3, 2] : tensor<4x4x32x16xf32> -> tensor<4x4x16x32xf32>
    %457 = kiln.transpose %456, perm = [0, 1, 3, 2] : tensor<4x4x16x32xf32> -> tensor<4x4x32x16xf32>
    %458 = kiln.transpose %457, perm = [0, 2, 1, 3] : tensor<4x4x32x16xf32> -> tensor<4x32x4x16xf32>
    %459 = kiln.reshape %458 : tensor<4x32x4x16xf32> -> tensor<4x32x64xf32>
    %460 = kiln.constant dense<0.000000e+00> : tensor<f32>
    %461 = kiln.pad %459, %460, low = [0, 0, 64], high = [0, 0, 64] : tensor<4x32x64xf32>, tensor<f32> -> tensor<4x32x192xf32>
    %462 = kiln.add %437, %461 : tensor<4x32x192xf32>
    %463 = kiln.dot_general %454, %229, batch = [0, 1] x [0, 1], contract = [3] x [3] : tensor<4x4x32x32xf32>, tensor<4x4x16x32xf32> -> tensor<4x4x32x16xf32>
    %464 = kiln.transpose %463, perm = [0, 2, 1, 3] : tensor<4x4x32x16xf32> -> tensor<4x32x4x16xf32>
    %465 = kiln.reshape %464 : tensor<4x32x4x16xf32> -> tensor<4x32x64xf32>
    %466 = kiln.constant dense<0.000000e+00> : tensor<f32>
    %467 = kiln.pad %465, %466, low = [0, 0, 0], high = [0, 0, 128] : tensor<4x32x64xf32>, tensor<f32> -> tensor<4x32x192xf32>
    %468 = kiln.add %462, %467 : tensor<4x32x192xf32>
    %469 = kiln.reshape %468 : tensor<4x32x192xf32> -> tensor<128x192xf32>
    %470 = kiln.dot_general %469, %arg21, batch = [] x [], contract = [1] x [1] : tensor<128x192xf32>, tensor<64x192xf32> -> tensor<128x64xf32>
    %471 = kiln.reshape %470 : tensor<128x64xf32> -> tensor<4x32x64xf32>
    %472 = kiln.mul %471, %214 : tensor<4x32x64xf32>
    %473 = kiln.mul %472, %212 : tensor<4x32x64xf32>
    %474 = kiln.mul %472, %204 : tensor<4x32x64xf32>
    %475 = kiln.reduce sum %474, dims = [2] : tensor<4x32x64xf32> -> tensor<4x32xf32>
    %476 = kiln.reshape %475 : tensor<4x32xf32> -> tensor<4x32x1xf32>
    %477 = kiln.mul %210, %210 : tensor<4x32x1xf32>
    %478 = kiln.mul %210, %477 : tensor<4x32x1xf32>
    %479 = kiln.mul %478, %359 : tensor<4x32x1xf32>
    %480 = kiln.mul %476, %479 : tensor<4x32x1xf32>
    %481 = kiln.div %480, %82 : tensor<4x32x1xf32>
    %482 = kiln.reshape %481 : tensor<4x32x1xf32> -> tensor<4x32xf32>
    %483 = kiln.broadcast_in_dim %482, dims = [0, 1] : tensor<4x32xf32> -> tensor<4x32x64xf32>
    %484 = kiln.mul %483, %204 : tensor<4x32x64xf32>
    %485 = kiln.add %473, %484 : tensor<4x32x64xf32>
    %486 = kiln.add %485, %484 : tensor<4x32x64xf32>
    %487 = kiln.add %424, %486 : tensor<4x32x64xf32>
    %488 = kiln.neg %486 : tensor<4x32x64xf32>
    %489 = kiln.reduce sum %488, dims = [2] : tensor<4x32x64xf32> -> tensor<4x32xf32>
    %490 = kiln.reshape %489 : tensor<4x32xf32> -> tensor<4x32x1xf32>
    %491 = kiln.div %490, %82 : tensor<4x32x1xf32>
    %492 = kiln.reshape %491 : tensor<4x32x1xf32> -> tensor<4x32xf32>
    %493 = kiln.broadcast_in_dim %492, dims = [0, 1] : tensor<4x32xf32> -> tensor<4x32x64xf32>
    %494 = kiln.add %487, %493 : tensor<4x32x64xf32>
    %495 = kiln.select %148, %494, %376 : tensor<4x32x64xi1>, tensor<4x32x64xf32>
    %496 = kiln.mul %495, %61 : tensor<4x32x64xf32>
    %497 = kiln.reshape %496 : tensor<4x32x64xf32> -> tensor<128x64xf32>
    %498 = kiln.dot_general %497, %arg17, batch = [] x [], contract = [1] x [1] : tensor<128x64xf32>, tensor<256x64xf32> -> tensor<128x256xf32>
    %499 = kiln.reshape %498 : tensor<128x256xf32> -> tensor<4x32x256xf32>
    %500 = kiln.mul %499, %175 : tensor<4x32x256xf32>
    %501 = kiln.mul %185, %185 : tensor<4x32x256xf32>
    %502 = kiln.sub %384, %501 : tensor<4x32x256xf32>
    %503 = kiln.mul %500, %502 : tensor<4x32x256xf32>
    %504 = kiln.mul %503, %183 : tensor<4x32x256xf32>
    %505 = kiln.mul %504, %179 : tensor<4x32x256xf32>
    %506 = kiln.mul %505, %176 : tensor<4x32x256xf32>
    %507 = kiln.add %504, %506 : tensor<4x32x256xf32>
    %508 = kiln.mul %505, %172 : tensor<4x32x256xf32>
    %509 = kiln.mul %508, %172 : tensor<4x32x256xf32>
    %510 = kiln.add %507, %509 : tensor<4x32x256xf32>
    %511 = kiln.add %510, %509 : tensor<4x32x256xf32>
    %512 = kiln.mul %499, %187 : tensor<4x32x256xf32>
    %513 = kiln.mul %512, %174 : tensor<4x32x256xf32>
    %514 = kiln.add %511, %513 : tensor<4x32x256xf32>
    %515 = kiln.reshape %514 : tensor<4x32x256xf32> -> tensor<128x256xf32>
    %516 = kiln.dot_general %515, %arg15, batch = [] x [], contract = [1] x [1] : tensor<128x256xf32>, tensor<64x256xf32> -> tensor<128x64xf32>
    %517 = kiln.reshape %516 : tensor<128x64xf32> -> tensor<4x32x64xf32>
    %518 = kiln.mul %517, %164 : tensor<4x32x64xf32>
    %519 = kiln.mul %518, %162 : tensor<4x32x64xf32>
    %520 = kiln.mul %518, %154 : tensor<4x32x64xf32>
    %521 = kiln.reduce sum %520, dims = [2] : tensor<4x32x64xf32> -> tensor<4x32xf32>
    %522 = kiln.reshape %521 : tensor<4x32xf32> -> tensor<4x32x1xf32>
    %523 = kiln.mul %160, %160 : tensor<4x32x1xf32>
    %524 = kiln.mul %160, %523 : tensor<4x32x1xf32>
    %525 = kiln.mul %524, %359 : tensor<4x32x1xf32>
    %526 = kiln.mul %522, %525 : tensor<4x32x1xf32>
    %527 = kiln.div %526, %82 : tensor<4x32x1xf32>
    %528 = kiln.reshape %527 : tensor<4x32x1xf32> -> tensor<4x32xf32>
    %529 = kiln.broadcast_in_dim %528, dims = [0, 1] : tensor<4x32xf32> -> tensor<4x32x64xf32>
    %530 = kiln.mul %529, %154 : tensor<4x32x64xf32>
    %531 = kiln.add %519, %530 : tensor<4x32x64xf32>
    %532 = kiln.add %531, %530 : tensor<4x32x64xf32>
    %533 = kiln.add %494, %532 : tensor<4x32x64xf32>
    %534 = kiln.neg %532 : tensor<4x32x64xf32>
    %535 = kiln.reduce sum %534, dims = [2] : tensor<4x32x64xf32> -> tensor<4x32xf32>
    %536 = kiln.reshape %535 : tensor<4x32xf32> -> tensor<4x32x1xf32>
    %537 = kiln.div %536, %82 : tensor<4x32x1xf32>
    %538 = kiln.reshape %537 : tensor<4x32x1xf32> -> tensor<4x32xf32>
    %539 = kiln.broadcast_in_dim %538, dims = [0, 1] : tensor<4x32xf32> -> tensor<4x32x64xf32>
    %540 = kiln.add %533, %539 : tensor<4x32x64xf32>
    %541 = kiln.select %66, %540, %376 : tensor<4x32x64xi1>, tensor<4x32x64xf32>
    %542 = kiln.mul %541, %61 : tensor<4x32x64xf32>
    %543 = kiln.reshape %542 : tensor<4x32x64xf32> -> tensor<128x64xf32>
    %544 = kiln.dot_general %543, %arg11, batch = [] x [], contract = [1] x [1] : tensor<128x64xf32>, tensor<64x64xf32> -> tensor<128x64xf32>
    %545 = kiln.reshape %544 : tensor<128x64xf32> -> tensor<4x32x64xf32>
    %546 = kiln.reshape %545 : tensor<4x32x64xf32> -> tensor<4x32x4x16xf32>
    %547 = kiln.transpose %546, perm = [0, 2, 1, 3] : tensor<4x32x4x16xf32> -> tensor<4x4x32x16xf32>
    %548 = kiln.dot_general %547, %133, batch = [0, 1] x [0, 1], contract = [2] x [2] : tensor<4x4x32x16xf32>, tensor<4x4x32x32xf32> -> tensor<4x4x16x32xf32>
    %549 = kiln.transpose %548, perm = [0, 1, 3, 2] : tensor<4x4x16x32xf32> -> tensor<4x4x32x16xf32>
    %550 = kiln.transpose %549, perm = [0, 2, 1, 3] : tensor<4x4x32x16xf32> -> tensor<4x32x4x16xf32>
    %551 = kiln.reshape %550 : tensor<4x32x4x16xf32> -> tensor<4x32x64xf32>
    %552 = kiln.constant dense<0.000000e+00> : tensor<f32>
    %553 = kiln.pad %551, %552, low = [0, 0, 128], high = [0, 0, 0] : tensor<4x32x64xf32>, tensor<f32> -> tensor<4x32x192xf32>
    %554 = kiln.dot_general %547, %136, batch = [0, 1] x [0, 1], contract = [3] x [3] : tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32> -> tensor<4x4x32x32xf32>
    %555 = kiln.select %68, %554, %439 : tensor<4x4x32x32xi1>, tensor<4x4x32x32xf32>
    %556 = kiln.mul %555, %130 : tensor<4x4x32x32xf32>
    %557 = kiln.div %556, %128 : tensor<4x4x32x32xf32>
    %558 = kiln.mul %556, %129 : tensor<4x4x32x32xf32>
    %559 = kiln.div %558, %128 : tensor<4x4x32x32xf32>
    %560 = kiln.neg %559 : tensor<4x4x32x32xf32>
    %561 = kiln.reduce sum %560, dims = [3] : tensor<4x4x32x32xf32> -> tensor<4x4x32xf32>
    %562 = kiln.reshape %561 : tensor<4x4x32xf32> -> tensor<4x4x32x1xf32>
    %563 = kiln.reshape %562 : tensor<4x4x32x1xf32> -> tensor<4x4x32xf32>
    %564 = kiln.broadcast_in_dim %563, dims = [0, 1, 2] : tensor<4x4x32xf32> -> tensor<4x4x32x32xf32>
    %565 = kiln.add %557, %564 : tensor<4x4x32x32xf32>
    %566 = kiln.mul %565, %124 : tensor<4x4x32x32xf32>
    %567 = kiln.select %76, %439, %566 : tensor<4x4x32x32xi1>, tensor<4x4x32x32xf32>
    %568 = kiln.mul %567, %116 : tensor<4x4x32x32xf32>
    %569 = kiln.dot_general %568, %109, batch = [0, 1] x [0, 1], contract = [2] x [2] : tensor<4x4x32x32xf32>, tensor<4x4x32x16xf32> -> tensor<4x4x32x16xf32>
    %570 = kiln.transpose %569, perm = [0, 1, 3, 2] : tensor<4x4x32x16xf32> -> tensor<4x4x16x32xf32>
    %571 = kiln.transpose %570, perm = [0, 1, 3, 2] : tensor<4x4x16x32xf32> -> tensor<4x4x32x16xf32>
    %572 = kiln.transpose %571, perm = [0, 2, 1, 3] : tensor<4x4x32x16xf32> -> tensor<4x32x4x16xf32>
    %573 = kiln.reshape %572 : tensor<4x32x4x16xf32> -> tensor<4x32x64xf32>
    %574 = kiln.constant dense<0.000000e+00> : tensor<f32>
    %575 = kiln.pad %573, %574, low = [0, 0, 64], high = [0, 0, 64] : tensor<4x32x64xf32>, tensor<f32> -> tensor<4x32x192xf32>
    %576 = kiln.add %553, %575 : tensor<4x32x192xf32>
    %577 = kiln.dot_general %568, %113, batch = [0, 1] x [0, 1], contract = [3] x [3] : tensor<4x4x32x32xf32>, tensor<4x4x16x32xf32> -> tensor<4x4x32x16xf32>
    %578 = kiln.transpose %577, perm = [0, 2, 1, 3] : tensor<4x4x32x16xf32> -> tensor<4x32x4x16xf32>
    %579 = kiln.reshape %578 : tensor<4x32x4x16xf32> -> tensor<4x32x64xf32>
    %580 = kiln.constant dense<0.000000e+00> : tensor<f32>
    %581 = kiln.pad %579, %580, low = [0, 0, 0], high = [0, 0, 128] : tensor<4x32x64xf32>, tensor<f32> -> tensor<4x32x192xf32>
    %582 = kiln.add %576, %581 : tensor<4x32x192xf32>
    %583 = kiln.reshape %582 : tensor<4x32x192xf32> -> tensor<128x192xf32>
    %584 = kiln.dot_general %583, %arg9, batch = [] x [], contract = [1] x [1] : tensor<128x192xf32>, tensor<64x192xf32> -> tensor<128x64xf32>
    %585 = kiln.reshape %584 : tensor<128x64xf32> -> tensor<4x32x64xf32>
    %586 = kiln.mul %585, %98 : tensor<4x32x64xf32>
    %587 = kiln.mul %586, %96 : tensor<4x32x64xf32>
    %588 = kiln.mul %586, %86 : tensor<4x32x64xf32>
    %589 = kiln.reduce sum %588, dims = [2] : tensor<4x32x64xf32> -> tensor<4x32xf32>
    %590 = kiln.reshape %589 : tensor<4x32xf32> -> tensor<4x32x1xf32>
    %591 = kiln.mul %94, %94 : tensor<4x32x1xf32>
    %592 = kiln.mul %94, %591 : tensor<4x32x1xf32>
    %593 = kiln.mul %592, %359 : tensor<4x32x1xf32>
    %594 = kiln.mul %590, %593 : tensor<4x32x1xf32>
    %595 = kiln.div %594, %82 : tensor<4x32x1xf32>
    %596 = kiln.reshape %595 : tensor<4x32x1xf32> -> tensor<4x32xf32>
    %597 = kiln.broadcast_in_dim %596, dims = [0, 1] : tensor<4x32xf32> -> tensor<4x32x64xf32>
    %598 = kiln.mul %597, %86 : tensor<4x32x64xf32>
    %599 = kiln.add %587, %598 : tensor<4x32x64xf32>
    %600 = kiln.add %599, %598 : tensor<4x32x64xf32>
    %601 = kiln.add %540, %600 : tensor<4x32x64xf32>
    %602 = kiln.neg %600 : tensor<4x32x64xf32>
    %603 = kiln.reduce sum %602, dims = [2] : tensor<4x32x64xf32> -> tensor<4x32xf32>
    %604 = kiln.reshape %603 : tensor<4x32xf32> -> tensor<4x32x1xf32>
    %605 = kiln.div %604, %82 : tensor<4x32x1xf32>
    %606 = kiln.reshape %605 : tensor<4x32x1xf32> -> tensor<4x32xf32>
    %607 = kiln.broadcast_in_dim %606, dims = [0, 1] : tensor<4x32xf32> -> tensor<4x32x64xf32>
    %608 = kiln.add %601, %607 : tensor<4x32x64xf32>
    %609 = kiln.select %54, %608, %376 : tensor<4x32x64xi1>, tensor<4x32x64xf32>
    %610 = kiln.mul %609, %61 : tensor<4x32x64xf32>
    %611 = kiln.scatter_add %348[%arg5], %610, axis = 0 : tensor<256x64xf32>, tensor<4x32xi64>, tensor<4x32x64xf32>
    %612 = kiln.add %346, %611 : tensor<256x64xf32>
    %613 = kiln.mul %612, %612 : tensor<256x64xf32>
    %614 = kiln.reduce sum %613, dims = [0, 1] : tensor<256x64xf32> -> tensor<f32>
    %615 = kiln.constant dense<0.000000e+00> : tensor<f32>
    %616 = kiln.broadcast_in_dim %615, dims = [] : tensor<f32> -> tensor<32x64xf32>
    %617 = kiln.reduce sum %610, dims = [0] : tensor<4x32x64xf32> -> tensor<32x64xf32>
    %618 = kiln.scatter_add %616[%56], %617, axis = 0 : tensor<32x64xf32>, tensor<32xi64>, tensor<32x64xf32>
    %619 = kiln.mul %618, %618 : tensor<32x64xf32>
    %620 = kiln.reduce sum %619, dims = [0, 1] : tensor<32x64xf32> -> tensor<f32>
    %621 = kiln.add %614, %620 : tensor<f32>
    %622 = kiln.mul %585, %97 : tensor<4x32x64xf32>
    %623 = kiln.reduce sum %622, dims = [0, 1] : tensor<4x32x64xf32> -> tensor<64xf32>
    %624 = kiln.mul %623, %623 : tensor<64xf32>
    %625 = kiln.reduce sum %624, dims = [0] : tensor<64xf32> -> tensor<f32>
    %626 = kiln.add %621, %625 : tensor<f32>
    %627 = kiln.reduce sum %585, dims = [0, 1] : tensor<4x32x64xf32> -> tensor<64xf32>
    %628 = kiln.mul %627, %627 : tensor<64xf32>
    %629 = kiln.reduce sum %628, dims = [0] : tensor<64xf32> -> tensor<f32>
    %630 = kiln.add %626, %629 : tensor<f32>
    %631 = kiln.dot_general %583, %102, batch = [] x [], contract = [0] x [0] : tensor<128x192xf32>, tensor<128x64xf32> -> tensor<192x64xf32>
    %632 = kiln.transpose %631, perm = [1, 0] : tensor<192x64xf32> -> tensor<64x192xf32>
    %633 = kiln.mul %632, %632 : tensor<64x192xf32>
    %634 = kiln.reduce sum %633, dims = [0, 1] : tensor<64x192xf32> -> tensor<f32>
    %635 = kiln.add %630, %634 : tensor<f32>
    %636 = kiln.reduce sum %582, dims = [0, 1] : tensor<4x32x192xf32> -> tensor<192xf32>
    %637 = kiln.mul %636, %636 : tensor<192xf32>
    %638 = kiln.reduce sum %637, dims = [0] : tensor<192xf32> -> tensor<f32>
    %639 = kiln.add %635, %638 : tensor<f32>
    %640 = kiln.dot_general %543, %140, batch = [] x [], contract = [0] x [0] : tensor<128x64xf32>, tensor<128x64xf32> -> tensor<64x64xf32>
    %641 = kiln.transpose %640, perm = [1, 0] : tensor<64x64xf32> -> tensor<64x64xf32>
    %642 = kiln.mul %641, %641 : tensor<64x64xf32>
    %643 = kiln.reduce sum %642, dims = [0, 1] : tensor<64x64xf32> -> tensor<f32>
    %644 = kiln.add %639, %643 : tensor<f32>
    %645 = kiln.reduce sum %542, dims = [0, 1] : tensor<4x32x64xf32> -> tensor<64xf32>
    %646 = kiln.mul %645, %645 : tensor<64xf32>
    %647 = kiln.reduce sum %646, dims = [0] : tensor<64xf32> -> tensor<f32>
    %648 = kiln.add %644, %647 : tensor<f32>
    %649 = kiln.mul %517, %163 : tensor<4x32x64xf32>
    %650 = kiln.reduce sum %649, dims = [0, 1] : tensor<4x32x64xf32> -> tensor<64xf32>
    %651 = kiln.mul %650, %650 : tensor<64xf32>
    %652 = kiln.reduce sum %651, dims = [0] : tensor<64xf32> -> tensor<f32>
    %653 = kiln.add %648, %652 : tensor<f32>
    %654 = kiln.reduce sum %517, dims = [0, 1] : tensor<4x32x64xf32> -> tensor<64xf32>
    %655 = kiln.mul %654, %654 : tensor<64xf32>
    %656 = kiln.reduce sum %655, dims = [0] : tensor<64xf32> -> tensor<f32>
    %657 = kiln.add %653, %656 : tensor<f32>
    %658 = kiln.dot_general %515, %168, batch = [] x [], contract = [0] x [0] : tensor<128x256xf32>, tensor<128x64xf32> -> tensor<256x64xf32>
    %659 = kiln.transpose %658, perm = [1, 0] : tensor<256x64xf32> -> tensor<64x256xf32>
    %660 = kiln.mul %659, %659 : tensor<64x256xf32>
    %661 = kiln.reduce sum %660, dims = [0, 1] : tensor<64x256xf32> -> tensor<f32>
    %662 = kiln.add %657, %661 : tensor<f32>
    %663 = kiln.reduce sum %514, dims = [0, 1] : tensor<4x32x256xf32> -> tensor<256xf32>
    %664 = kiln.mul %663, %663 : tensor<256xf32>
    %665 = kiln.reduce sum %664, dims = [0] : tensor<256xf32> -> tensor<f32>
    %666 = kiln.add %662, %665 : tensor<f32>
    %667 = kiln.dot_general %497, %189, batch = [] x [], contract = [0] x [0] : tensor<128x64xf32>, tensor<128x256xf32> -> tensor<64x256xf32>
    %668 = kiln.transpose %667, perm = [1, 0] : tensor<64x256xf32> -> tensor<256x64xf32>
    %669 = kiln.mul %668, %668 : tensor<256x64xf32>
    %670 = kiln.reduce sum %669, dims = [0, 1] : tensor<256x64xf32> -> tensor<f32>
    %671 = kiln.add %666, %670 : tensor<f32>
    %672 = kiln.reduce sum %496, dims = [0, 1] : tensor<4x32x64xf32> -> tensor<64xf32>
    %673 = kiln.mul %672, %672 : tensor<64xf32>
    %674 = kiln.reduce sum %673, dims = [0] : tensor<64xf32> -> tensor<f32>
    %675 = kiln.add %671, %674 : tensor<f32>
    %676 = kiln.mul %471, %213 : tensor<4x32x64xf32>
    %677 = kiln.reduce sum %676, dims = [0, 1] : tensor<4x32x64xf32> -> tensor<64xf32>
    %678 = kiln.mul %677, %677 : tensor<64xf32>
    %679 = kiln.reduce sum %678, dims = [0] : tensor<64xf32> -> tensor<f32>
    %680 = kiln.add %675, %679 : tensor<f32>
    %681 = kiln.reduce sum %471, dims = [0, 1] : tensor<4x32x64xf32> -> tensor<64xf32>
    %682 = kiln.mul %681, %681 : tensor<64xf32>
    %683 = kiln.reduce sum %682, dims = [0] : tensor<64xf32> -> tensor<f32>
    %684 = kiln.add %680, %683 : tensor<f32>
    %685 = kiln.dot_general %469, %218, batch = [] x [], contract = [0] x [0] : tensor<128x192xf32>, tensor<128x64xf32> -> tensor<192x64xf32>
    %686 = kiln.transpose %685, perm = [1, 0] : tensor<192x64xf32> -> tensor<64x192xf32>
    %687 = kiln.mul %686, %686 : tensor<64x192xf32>
    %688 = kiln.reduce sum %687, dims = [0, 1] : tensor<64x192xf32> -> tensor<f32>
    %689 = kiln.add %684, %688 : tensor<f32>
    %690 = kiln.reduce sum %468, dims = [0, 1] : tensor<4x32x192xf32> -> tensor<192xf32>
    %691 = kiln.mul %690, %690 : tensor<192xf32>
    %692 = kiln.reduce sum %691, dims = [0] : tensor<192xf32> -> tensor<f32>
    %693 = kiln.add %689, %692 : tensor<f32>
    %694 = kiln.dot_general %427, %252, batch = [] x [], contract = [0] x [0] : tensor<128x64xf32>, tensor<128x64xf32> -> tensor<64x64xf32>
    %695 = kiln.transpose %694, perm = [1, 0] : tensor<64x64xf32> -> tensor<64x64xf32>
    %696 = kiln.mul %695, %695 : tensor<64x64xf32>
    %697 = kiln.reduce sum %696, dims = [0, 1] : tensor<64x64xf32> -> tensor<f32>
    %698 = kiln.add %693, %697 : tensor<f32>
    %699 = kiln.reduce sum %426, dims = [0, 1] : tensor<4x32x64xf32> -> tensor<64xf32>
    %700 = kiln.mul %699, %699 : tensor<64xf32>
    %701 = kiln.reduce sum %700, dims = [0] : tensor<64xf32> -> tensor<f32>
    %702 = kiln.add %698, %701 : tensor<f32>
    %703 = kiln.mul %401, %275 : tensor<4x32x64xf32>
    %704 = kiln.reduce sum %703, dims = [0, 1] : tensor<4x32x64xf32> -> tensor<64xf32>
    %705 = kiln.mul %704, %704 : tensor<64xf32>
    %706 = kiln.reduce sum %705, dims = [0] : tensor<64xf32> -> tensor<f32>
    %707 = kiln.add %702, %706 : tensor<f32>
    %708 = kiln.reduce sum %401, dims = [0, 1] : tensor<4x32x64xf32> -> tensor<64xf32>
    %709 = kiln.mul %708, %708 : tensor<64xf32>
    %710 = kiln.reduce sum %709, dims = [0] : tensor<64xf32> -> tensor<f32>
    %711 = kiln.add %707, %710 : tensor<f32>
    %712 = kiln.dot_general %399, %280, batch = [] x [], contract = [0] x [0] : tensor<128x256xf32>, tensor<128x64xf32> -> tensor<256x64xf32>
    %713 = kiln.transpose %712, perm = [1, 0] : tensor<256x64xf32> -> tensor<64x256xf32>
    %714 = kiln.mul %713, %713 : tensor<64x256xf32>
    %715 = kiln.reduce sum %714, dims = [0, 1] : tensor<64x256xf32> -> tensor<f32>
    %716 = kiln.add %711, %715 : tensor<f32>
    %717 = kiln.reduce sum %398, dims = [0, 1] : tensor<4x32x256xf32> -> tensor<256xf32>
    %718 = kiln.mul %717, %717 : tensor<256xf32>
    %719 = kiln.reduce sum %718, dims = [0] : tensor<256xf32> -> tensor<f32>
    %720 = kiln.add %716, %719 : tensor<f32>
    %721 = kiln.dot_general %379, %294, batch = [] x [], contract = [0] x [0] : tensor<128x64xf32>, tensor<128x256xf32> -> tensor<64x256xf32>
    %722 = kiln.transpose %721, perm = [1, 0] : tensor<64x256xf32> -> tensor<256x64xf32>
    %723 = kiln.mul %722, %722 : tensor<256x64xf32>
    %724 = kiln.reduce sum %723, dims = [0, 1] : tensor<256x64xf32> -> tensor<f32>
    %725 = kiln.add %720, %724 : tensor<f32>
    %726 = kiln.reduce sum %378, dims = [0, 1] : tensor<4x32x64xf32> -> tensor<64xf32>
    %727 = kiln.mul %726, %726 : tensor<64xf32>
    %728 = kiln.reduce sum %727, dims = [0] : tensor<64xf32> -> tensor<f32>
    %729 = kiln.add %725, %728 : tensor<f32>
    %730 = kiln.mul %350, %316 : tensor<4x32x64xf32>
    %731 = kiln.reduce sum %730, dims = [0, 1] : tensor<4x32x64xf32> -> tensor<64xf32>
    %732 = kiln.mul %731, %731 : tensor<64xf32>
    %733 = kiln.reduce sum %732, dims = [0] : tensor<64xf32> -> tensor<f32>
    %734 = kiln.add %729, %733 : tensor<f32>
    %735 = kiln.reduce sum %350, dims = [0, 1] : tensor<4x32x64xf32> -> tensor<64xf32>
    %736 = kiln.mul %735, %735 : tensor<64xf32>
    %737 = kiln.reduce sum %736, dims = [0] : tensor<64xf32> -> tensor<f32>
    %738 = kiln.add %734, %737 : tensor<f32>
    %739 = kiln.sqrt %738 : tensor<f32>
    %740 = kiln.constant dense<9.99999997E-7> : tensor<f32>
    %741 = kiln.add %739, %740 : tensor<f32>
    %742 = kiln.div %35, %741 : tensor<f32>
    %743 = kiln.max %742, %63 : tensor<f32>
    %744 = kiln.min %743, %35 : tensor<f32>
    %745 = kiln.broadcast_in_dim %744, dims = [] : tensor<f32> -> tensor<256x64xf32>
    %746 = kiln.mul %612, %745 : tensor<256x64xf32>
    %747 = kiln.sub %746, %arg4 : tensor<256x64xf32>
    %748 = kiln.broadcast_in_dim %52, dims = [] : tensor<f32> -> tensor<256x64xf32>
    %749 = kiln.mul %747, %748 : tensor<256x64xf32>
    %750 = kiln.add %arg4, %749 : tensor<256x64xf32>
    %751 = kiln.constant dense<9.990000e-01> : tensor<f32>
    %752 = kiln.broadcast_in_dim %751, dims = [] : tensor<f32> -> tensor<256x64xf32>
    %753 = kiln.mul %arg33, %752 : tensor<256x64xf32>
    %754 = kiln.mul %746, %746 : tensor<256x64xf32>
    %755 = kiln.constant dense<1.000000e-03> : tensor<f32>
    %756 = kiln.broadcast_in_dim %755, dims = [] : tensor<f32> -> tensor<256x64xf32>
    %757 = kiln.mul %754, %756 : tensor<256x64xf32>
    %758 = kiln.add %753, %757 : tensor<256x64xf32>
    %759 = kiln.sqrt %758 : tensor<256x64xf32>
    %760 = kiln.constant dense<-0.0010005003335835344> : tensor<f64>
    %761 = kiln.mul %arg3, %760 : tensor<f64>
    %762 = kiln.exp %761 : tensor<f64>
    %763 = kiln.sub %14, %762 : tensor<f64>
    %764 = kiln.sqrt %763 : tensor<f64>
    %765 = kiln.convert %764 : tensor<f64> -> tensor<f32>
    %766 = kiln.broadcast_in_dim %765, dims = [] : tensor<f32> -> tensor<256x64xf32>
    %767 = kiln.div %759, %766 : tensor<256x64xf32>
    %768 = kiln.constant dense<9.99999993E-9> : tensor<f32>
    %769 = kiln.broadcast_in_dim %768, dims = [] : tensor<f32> -> tensor<256x64xf32>
    %770 = kiln.add %767, %769 : tensor<256x64xf32>
    %771 = kiln.div %750, %770 : tensor<256x64xf32>
    %772 = kiln.mul %27, %771 : tensor<256x64xf32>
    %773 = kiln.sub %20, %772 : tensor<256x64xf32>
    %774 = kiln.broadcast_in_dim %18, dims = [] : tensor<f32> -> tensor<32x64xf32>
    %775 = kiln.mul %arg6, %774 : tensor<32x64xf32>
    %776 = kiln.broadcast_in_dim %26, dims = [] : tensor<f32> -> tensor<32x64xf32>
    %777 = kiln.broadcast_in_dim %744, dims = [] : tensor<f32> -> tensor<32x64xf32>
    %778 = kiln.mul %618, %777 : tensor<32x64xf32>
    %779 = kiln.sub %778, %arg34 : tensor<32x64xf32>
    %780 = kiln.broadcast_in_dim %52, dims = [] : tensor<f32> -> tensor<32x64xf32>
    %781 = kiln.mul %779, %780 : tensor<32x64xf32>
    %782 = kiln.add %arg34, %781 : tensor<32x64xf32>
    %783 = kiln.broadcast_in_dim %751, dims = [] : tensor<f32> -> tensor<32x64xf32>
    %784 = kiln.mul %arg35, %783 : tensor<32x64xf32>
    %785 = kiln.mul %778, %778 : tensor<32x64xf32>
    %786 = kiln.broadcast_in_dim %755, dims = [] : tensor<f32> -> tensor<32x64xf32>
    %787 = kiln.mul %785, %786 : tensor<32x64xf32>
    %788 = kiln.add %784, %787 : tensor<32x64xf32>
    %789 = kiln.sqrt %788 : tensor<32x64xf32>
    %790 = kiln.broadcast_in_dim %765, dims = [] : tensor<f32> -> tensor<32x64xf32>
    %791 = kiln.div %789, %790 : tensor<32x64xf32>
    %792 = kiln.broadcast_in_dim %768, dims = [] : tensor<f32> -> tensor<32x64xf32>
    %793 = kiln.add %791, %792 : tensor<32x64xf32>
    %794 = kiln.div %782, %793 : tensor<32x64xf32>
    %795 = kiln.mul %776, %794 : tensor<32x64xf32>
    %796 = kiln.sub %775, %795 : tensor<32x64xf32>
    %797 = kiln.broadcast_in_dim %18, dims = [] : tensor<f32> -> tensor<64xf32>
    %798 = kiln.mul %arg7, %797 : tensor<64xf32>
    %799 = kiln.broadcast_in_dim %26, dims = [] : tensor<f32> -> tensor<64xf32>
    %800 = kiln.broadcast_in_dim %744, dims = [] : tensor<f32> -> tensor<64xf32>
    %801 = kiln.mul %623, %800 : tensor<64xf32>
    %802 = kiln.sub %801, %arg36 : tensor<64xf32>
    %803 = kiln.broadcast_in_dim %52, dims = [] : tensor<f32> -> tensor<64xf32>
    %804 = kiln.mul %802, %803 : tensor<64xf32>
    %805 = kiln.add %arg36, %804 : tensor<64xf32>
    %806 = kiln.broadcast_in_dim %751, dims = [] : tensor<f32> -> tensor<64xf32>
    %807 = kiln.mul %arg37, %806 : tensor<64xf32>
    %808 = kiln.mul %801, %801 : tensor<64xf32>
    %809 = kiln.broadcast_in_dim %755, dims = [] : tensor<f32> -> tensor<64xf32>
    %810 = kiln.mul %808, %809 : tensor<64xf32>
    %811 = kiln.add %807, %810 : tensor<64xf32>
    %812 = kiln.sqrt %811 : tensor<64xf32>
    %813 = kiln.broadcast_in_dim %765, dims = [] : tensor<f32> -> tensor<64xf32>
    %814 = kiln.div %812, %813 : tensor<64xf32>
    %815 = kiln.broadcast_in_dim %768, dims = [] : tensor<f32> -> tensor<64xf32>
    %816 = kiln.add %814, %815 : tensor<64xf32>
    %817 = kiln.div %805, %816 : tensor<64xf32>
    %818 = kiln.mul %799, %817 : tensor<64xf32>
    %819 = kiln.sub %798, %818 : tensor<64xf32>
    %820 = kiln.mul %arg8, %797 : tensor<64xf32>
    %821 = kiln.mul %627, %800 : tensor<64xf32>
    %822 = kiln.sub %821, %arg38 : tensor<64xf32>
    %823 = kiln.mul %822, %803 : tensor<64xf32>
    %824 = kiln.add %arg38, %823 : tensor<64xf32>
    %825 = kiln.mul %arg39, %806 : tensor<64xf32>
    %826 = kiln.mul %821, %821 : tensor<64xf32>
    %827 = kiln.mul %826, %809 : tensor<64xf32>
    %828 = kiln.add %825, %827 : tensor<64xf32>
    %829 = kiln.sqrt %828 : tensor<64xf32>
    %830 = kiln.div %829, %813 : tensor<64xf32>
    %831 = kiln.add %830, %815 : tensor<64xf32>
    %832 = kiln.div %824, %831 : tensor<64xf32>
    %833 = kiln.mul %799, %832 : tensor<64xf32>
    %834 = kiln.sub %820, %833 : tensor<64xf32>
    %835 = kiln.broadcast_in_dim %18, dims = [] : tensor<f32> -> tensor<64x192xf32>
    %836 = kiln.mul %arg9, %835 : tensor<64x192xf32>
    %837 = kiln.broadcast_in_dim %26, dims = [] : tensor<f32> -> tensor<64x192xf32>
    %838 = kiln.broadcast_in_dim %744, dims = [] : tensor<f32> -> tensor<64x192xf32>
    %839 = kiln.mul %632, %838 : tensor<64x192xf32>
    %840 = kiln.sub %839, %arg40 : tensor<64x192xf32>
    %841 = kiln.broadcast_in_dim %52, dims = [] : tensor<f32> -> tensor<64x192xf32>
    %842 = kiln.mul %840, %841 : tensor<64x192xf32>
    %843 = kiln.add %arg40, %842 : tensor<64x192xf32>
    %844 = kiln.broadcast_in_dim %751, dims = [] : tensor<f32> -> tensor<64x192xf32>
    %845 = kiln.mul %arg41, %844 : tensor<64x192xf32>
    %846 = kiln.mul %839, %839 : tensor<64x192xf32>
    %847 = kiln.broadcast_in_dim %755, dims = [] : tensor<f32> -> tensor<64x192xf32>
    %848 = kiln.mul %846, %847 : tensor<64x192xf32>
    %849 = kiln.add %845, %848 : tensor<64x192xf32>
    %850 = kiln.sqrt %849 : tensor<64x192xf32>
    %851 = kiln.broadcast_in_dim %765, dims = [] : tensor<f32> -> tensor<64x192xf32>
    %852 = kiln.div %850, %851 : tensor<64x192xf32>
    %853 = kiln.broadcast_in_dim %768, dims = [] : tensor<f32> -> tensor<64x192xf32>
    %854 = kiln.add %852, %853 : tensor<64x192xf32>
    %855 = kiln.div %843, %854 : tensor<64x192xf32>
    %856 = kiln.mul %837, %855 : tensor<64x192xf32>
    %857 = kiln.sub %836, %856 : tensor<64x192xf32>
    %858 = kiln.broadcast_in_dim %18, dims = [] : tensor<f32> -> tensor<192xf32>
    %859 = kiln.mul %arg10, %858 : tensor<192xf32>
    %860 = kiln.broadcast_in_dim %26, dims = [] : tensor<f32> -> tensor<192xf32>
    %861 = kiln.broadcast_in_dim %744, dims = [] : tensor<f32> -> tensor<192xf32>
    %862 = kiln.mul %636, %861 : tensor<192xf32>
    %863 = kiln.sub %862, %arg42 : tensor<192xf32>
    %864 = kiln.broadcast_in_dim %52, dims = [] : tensor<f32> -> tensor<192xf32>
    %865 = kiln.mul %863, %864 : tensor<192xf32>
    %866 = kiln.add %arg42, %865 : tensor<192xf32>
    %867 = kiln.broadcast_in_dim %751, dims = [] : tensor<f32> -> tensor<192xf32>
    %868 = kiln.mul %arg43, %867 : tensor<192xf32>
    %869 = kiln.mul %862, %862 : tensor<192xf32>
    %870 = kiln.broadcast_in_dim %755, dims = [] : tensor<f32> -> tensor<192xf32>
    %871 = kiln.mul %869, %870 : tensor<192xf32>
    %872 = kiln.add %868, %871 : tensor<192xf32>
    %873 = kiln.sqrt %872 : tensor<192xf32>
    %874 = kiln.broadcast_in_dim %765, dims = [] : tensor<f32> -> tensor<192xf32>
    %875 = kiln.div %873, %874 : tensor<192xf32>
    %876 = kiln.broadcast_in_dim %768, dims = [] : tensor<f32> -> tensor<192xf32>
    %877 = kiln.add %875, %876 : tensor<192xf32>
    %878 = kiln.div %866, %877 : tensor<192xf32>
    %879 = kiln.mul %860, %878 : tensor<192xf32>
    %880 = kiln.sub %859, %879 : tensor<192xf32>
    %881 = kiln.broadcast_in_dim %18, dims = [] : tensor<f32> -> tensor<64x64xf32>
    %882 = kiln.mul %arg11, %881 : tensor<64x64xf32>
    %883 = kiln.broadcast_in_dim %26, dims = [] : tensor<f32> -> tensor<64x64xf32>
    %884 = kiln.broadcast_in_dim %744, dims = [] : tensor<f32> -> tensor<64x64xf32>
    %885 = kiln.mul %641, %884 : tensor<64x64xf32>
    %886 = kiln.sub %885, %arg44 : tensor<64x64xf32>
    %887 = kiln.broadcast_in_dim %52, dims = [] : tensor<f32> -> tensor<64x64xf32>
    %888 = kiln.mul %886, %887 : tensor<64x64xf32>
    %889 = kiln.add %arg44, %888 : tensor<64x64xf32>
    %890 = kiln.broadcast_in_dim %751, dims = [] : tensor<f32> -> tensor<64x64xf32>
    %891 = kiln.mul %arg45, %890 : tensor<64x64xf32>
    %892 = kiln.mul %885, %885 : tensor<64x64xf32>
    %893 = kiln.broadcast_in_dim %755, dims = [] : tensor<f32> -> tensor<64x64xf32>
    %894 = kiln.mul %892, %893 : tensor<64x64xf32>
    %895 = kiln.add %891, %894 : tensor<64x64xf32>
    %896 = kiln.sqrt %895 : tensor<64x64xf32>
    %897 = kiln.broadcast_in_dim %765, dims = [] : tensor<f32> -> tensor<64x64xf32>
    %898 = kiln.div %896, %897 : tensor<64x64xf32>
    %899 = kiln.broadcast_in_dim %768, dims = [] : tensor<f32> -> tensor<64x64xf32>
    %900 = kiln.add %898, %899 : tensor<64x64xf32>
    %901 = kiln.div %889, %900 : tensor<64x64xf32>
    %902 = kiln.mul %883, %901 : tensor<64x64xf32>
    %903 = kiln.sub %882, %902 : tensor<64x64xf32>
    %904 = kiln.mul %arg12, %797 : tensor<64xf32>
    %905 = kiln.mul %645, %800 : tensor<64xf32>
    %906 = kiln.sub %905, %arg46 : tensor<64xf32>
    %907 = kiln.mul %906, %803 : tensor<64xf32>
    %908 = kiln.add %arg46, %907 : tensor<64xf32>
    %909 = kiln.mul %arg47, %806 : tensor<64xf32>
    %910 = kiln.mul %905, %905 : tensor<64xf32>
    %911 = kiln.mul %910, %809 : tensor<64xf32>
    %912 = kiln.add %909, %911 : tensor<64xf32>
    %913 = kiln.sqrt %912 : tensor<64xf32>
    %914 = kiln.div %913, %813 : tensor<64xf32>
    %915 = kiln.add %914, %815 : tensor<64xf32>
    %916 = kiln.div %908, %915 : tensor<64xf32>
    %917 = kiln.mul %799, %916 : tensor<64xf32>
    %918 = kiln.sub %904, %917 : tensor<64xf32>
    %919 = kiln.mul %arg13, %797 : tensor<64xf32>
    %920 = kiln.mul %650, %800 : tensor<64xf32>
    %921 = kiln.sub %920, %arg48 : tensor<64xf32>
    %922 = kiln.mul %921, %803 : tensor<64xf32>
    %923 = kiln.add %arg48, %922 : tensor<64xf32>
    %924 = kiln.mul %arg49, %806 : tensor<64xf32>
    %925 = kiln.mul %920, %920 : tensor<64xf32>
    %926 = kiln.mul %925, %809 : tensor<64xf32>
    %927 = kiln.add %924, %926 : tensor<64xf32>
    %928 = kiln.sqrt %927 : tensor<64xf32>
    %929 = kiln.div %928, %813 : tensor<64xf32>
    %930 = kiln.add %929, %815 : tensor<64xf32>
    %931 = kiln.div %923, %930 : tensor<64xf32>
    %932 = kiln.mul %799, %931 : tensor<64xf32>
    %933 = kiln.sub %919, %932 : tensor<64xf32>
    %934 = kiln.mul %arg14, %797 : tensor<64xf32>
    %935 = kiln.mul %654, %800 : tensor<64xf32>
    %936 = kiln.sub %935, %arg50 : tensor<64xf32>
    %937 = kiln.mul %936, %803 : tensor<64xf32>
    %938 = kiln.add %arg50, %937 : tensor<64xf32>
    %939 = kiln.mul %arg51, %806 : tensor<64xf32>
    %940 = kiln.mul %935, %935 : tensor<64xf32>
    %941 = kiln.mul %940, %809 : tensor<64xf32>
    %942 = kiln.add %939, %941 : tensor<64xf32>
    %943 = kiln.sqrt %942 : tensor<64xf32>
    %944 = kiln.div %943, %813 : tensor<64xf32>
    %945 = kiln.add %944, %815 : tensor<64xf32>
    %946 = kiln.div %938, %945 : tensor<64xf32>
    %947 = kiln.mul %799, %946 : tensor<64xf32>
    %948 = kiln.sub %934, %947 : tensor<64xf32>
    %949 = kiln.broadcast_in_dim %18, dims = [] : tensor<f32> -> tensor<64x256xf32>
    %950 = kiln.mul %arg15, %949 : tensor<64x256xf32>
    %951 = kiln.broadcast_in_dim %26, dims = [] : tensor<f32> -> tensor<64x256xf32>
    %952 = kiln.broadcast_in_dim %744, dims = [] : tensor<f32> -> tensor<64x256xf32>
    %953 = kiln.mul %659, %952 : tensor<64x256xf32>
    %954 = kiln.sub %953, %arg52 : tensor<64x256xf32>
    %955 = kiln.broadcast_in_dim %52, dims = [] : tensor<f32> -> tensor<64x256xf32>
    %956 = kiln.mul %954, %955 : tensor<64x256xf32>
    %957 = kiln.add %arg52, %956 : tensor<64x256xf32>
    %958 = kiln.broadcast_in_dim %751, dims = [] : tensor<f32> -> tensor<64x256xf32>
    %959 = kiln.mul %arg53, %958 : tensor<64x256xf32>
    %960 = kiln.mul %953, %953 : tensor<64x256xf32>
    %961 = kiln.broadcast_in_dim %755, dims = [] : tensor<f32> -> tensor<64x256xf32>
    %962 = kiln.mul %960, %961 : tensor<64x256xf32>
    %963 = kiln.add %959, %962 : tensor<64x256xf32>
    %964 = kiln.sqrt %963 : tensor<64x256xf32>
    %965 = kiln.broadcast_in_dim %765, dims = [] : tensor<f32> -> tensor<64x256xf32>
    %966 = kiln.div %964, %965 : tensor<64x256xf32>
    %967 = kiln.broadcast_in_dim %768, dims = [] : tensor<f32> -> tensor<64x256xf32>
    %968 = kiln.add %966, %967 : tensor<64x256xf32>
    %969 = kiln.div %957, %968 : tensor<64x256xf32>
    %970 = kiln.mul %951, %969 : tensor<64x256xf32>
    %971 = kiln.sub %950, %970 : tensor<64x256xf32>
    %972 = kiln.broadcast_in_dim %18, dims = [] : tensor<f32> -> tensor<256xf32>
    %973 = kiln.mul %arg16, %972 : tensor<256xf32>
    %974 = kiln.broadcast_in_dim %26, dims = [] : tensor<f32> -> tensor<256xf32>
    %975 = kiln.broadcast_in_dim %744, dims = [] : tensor<f32> -> tensor<256xf32>
    %976 = kiln.mul %663, %975 : tensor<256xf32>
    %977 = kiln.sub %976, %arg54 : tensor<256xf32>
    %978 = kiln.broadcast_in_dim %52, dims = [] : tensor<f32> -> tensor<256xf32>
    %979 = kiln.mul %977, %978 : tensor<256xf32>
    %980 = kiln.add %arg54, %979 : tensor<256xf32>
    %981 = kiln.broadcast_in_dim %751, dims = [] : tensor<f32> -> tensor<256xf32>
    %982 = kiln.mul %arg55, %981 : tensor<256xf32>
    %983 = kiln.mul %976, %976 : tensor<256xf32>
    %984 = kiln.broadcast_in_dim %755, dims = [] : tensor<f32> -> tensor<256xf32>
    %985 = kiln.mul %983, %984 : tensor<256xf32>
    %986 = kiln.add %982, %985 : tensor<256xf32>
    %987 = kiln.sqrt %986 : tensor<256xf32>
    %988 = kiln.broadcast_in_dim %765, dims = [] : tensor<f32> -> tensor<256xf32>
    %989 = kiln.div %987, %988 : tensor<256xf32>
    %990 = kiln.broadcast_in_dim %768, dims = [] : tensor<f32> -> tensor<256xf32>
    %991 = kiln.add %989, %990 : tensor<256xf32>
    %992 = kiln.div %980, %991 : tensor<256xf32>
    %993 = kiln.mul %974, %992 : tensor<256xf32>
    %994 = kiln.sub %973, %993 : tensor<256xf32>
    %995 = kiln.mul %arg17, %19 : tensor<256x64xf32>
    %996 = kiln.mul %668, %745 : tensor<256x64xf32>
    %997 = kiln.sub %996, %arg56 : tensor<256x64xf32>
    %998 = kiln.mul %997, %748 : tensor<256x64xf32>
    %999 = kiln.add %arg56, %998 : tensor<256x64xf32>
    %1000 = kiln.mul %arg57, %752 : tensor<256x64xf32>
    %1001 = kiln.mul %996, %996 : tensor<256x64xf32>
    %1002 = kiln.mul %1001, %756 : tensor<256x64xf32>
    %1003 = kiln.add %1000, %1002 : tensor<256x64xf32>
    %1004 = kiln.sqrt %1003 : tensor<256x64xf32>
    %1005 = kiln.div %1004, %766 : tensor<256x64xf32>
    %1006 = kiln.add %1005, %769 : tensor<256x64xf32>
    %1007 = kiln.div %999, %1006 : tensor<256x64xf32>
    %1008 = kiln.mul %27, %1007 : tensor<256x64xf32>
    %1009 = kiln.sub %995, %1008 : tensor<256x64xf32>
    %1010 = kiln.mul %arg18, %797 : tensor<64xf32>
    %1011 = kiln.mul %672, %800 : tensor<64xf32>
    %1012 = kiln.sub %1011, %arg58 : tensor<64xf32>
    %1013 = kiln.mul %1012, %803 : tensor<64xf32>
    %1014 = kiln.add %arg58, %1013 : tensor<64xf32>
    %1015 = kiln.mul %arg59, %806 : tensor<64xf32>
    %1016 = kiln.mul %1011, %1011 : tensor<64xf32>
    %1017 = kiln.mul %1016, %809 : tensor<64xf32>
    %1018 = kiln.add %1015, %1017 : tensor<64xf32>
    %1019 = kiln.sqrt %1018 : tensor<64xf32>
    %1020 = kiln.div %1019, %813 : tensor<64xf32>
    %1021 = kiln.add %1020, %815 : tensor<64xf32>
    %1022 = kiln.div %1014, %1021 : tensor<64xf32>
    %1023 = kiln.mul %799, %1022 : tensor<64xf32>
    %1024 = kiln.sub %1010, %1023 : tensor<64xf32>
    %1025 = kiln.mul %arg19, %797 : tensor<64xf32>
    %1026 = kiln.mul %677, %800 : tensor<64xf32>
    %1027 = kiln.sub %1026, %arg60 : tensor<64xf32>
    %1028 = kiln.mul %1027, %803 : tensor<64xf32>
    %1029 = kiln.add %arg60, %1028 : tensor<64xf32>
    %1030 = kiln.mul %arg61, %806 : tensor<64xf32>
    %1031 = kiln.mul %1026, %1026 : tensor<64xf32>
    %1032 = kiln.mul %1031, %809 : tensor<64xf32>
    %1033 = kiln.add %1030, %1032 : tensor<64xf32>
    %1034 = kiln.sqrt %1033 : tensor<64xf32>
    %1035 = kiln.div %1034, %813 : tensor<64xf32>
    %1036 = kiln.add %1035, %815 : tensor<64xf32>
    %1037 = kiln.div %1029, %1036 : tensor<64xf32>
    %1038 = kiln.mul %799, %1037 : tensor<64xf32>
    %1039 = kiln.sub %1025, %1038 : tensor<64xf32>
    %1040 = kiln.mul %arg20, %797 : tensor<64xf32>
    %1041 = kiln.mul %681, %800 : tensor<64xf32>
    %1042 = kiln.sub %1041, %arg62 : tensor<64xf32>
    %1043 = kiln.mul %1042, %803 : tensor<64xf32>
    %1044 = kiln.add %arg62, %1043 : tensor<64xf32>
    %1045 = kiln.mul %arg63, %806 : tensor<64xf32>
    %1046 = kiln.mul %1041, %1041 : tensor<64xf32>
    %1047 = kiln.mul %1046, %809 : tensor<64xf32>
    %1048 = kiln.add %1045, %1047 : tensor<64xf32>
    %1049 = kiln.sqrt %1048 : tensor<64xf32>
    %1050 = kiln.div %1049, %813 : tensor<64xf32>
    %1051 = kiln.add %1050, %815 : tensor<64xf32>
    %1052 = kiln.div %1044, %1051 : tensor<64xf32>
    %1053 = kiln.mul %799, %1052 : tensor<64xf32>
    %1054 = kiln.sub %1040, %1053 : tensor<64xf32>
    %1055 = kiln.mul %arg21, %835 : tensor<64x192xf32>
    %1056 = kiln.mul %686, %838 : tensor<64x192xf32>
    %1057 = kiln.sub %1056, %arg64 : tensor<64x192xf32>
    %1058 = kiln.mul %1057, %841 : tensor<64x192xf32>
    %1059 = kiln.add %arg64, %1058 : tensor<64x192xf32>
    %1060 = kiln.mul %arg65, %844 : tensor<64x192xf32>
    %1061 = kiln.mul %1056, %1056 : tensor<64x192xf32>
    %1062 = kiln.mul %1061, %847 : tensor<64x192xf32>
    %1063 = kiln.add %1060, %1062 : tensor<64x192xf32>
    %1064 = kiln.sqrt %1063 : tensor<64x192xf32>
    %1065 = kiln.div %1064, %851 : tensor<64x192xf32>
    %1066 = kiln.add %1065, %853 : tensor<64x192xf32>
    %1067 = kiln.div %1059, %1066 : tensor<64x192xf32>
    %1068 = kiln.mul %837, %1067 : tensor<64x192xf32>
    %1069 = kiln.sub %1055, %1068 : tensor<64x192xf32>
    %1070 = kiln.mul %arg22, %858 : tensor<192xf32>
    %1071 = kiln.mul %690, %861 : tensor<192xf32>
    %1072 = kiln.sub %1071, %arg66 : tensor<192xf32>
    %1073 = kiln.mul %1072, %864 : tensor<192xf32>
    %1074 = kiln.add %arg66, %1073 : tensor<192xf32>
    %1075 = kiln.mul %arg67, %867 : tensor<192xf32>
    %1076 = kiln.mul %1071, %1071 : tensor<192xf32>
    %1077 = kiln.mul %1076, %870 : tensor<192xf32>
    %1078 = kiln.add %1075, %1077 : tensor<192xf32>
    %1079 = kiln.sqrt %1078 : tensor<192xf32>
    %1080 = kiln.div %1079, %874 : tensor<192xf32>
    %1081 = kiln.add %1080, %876 : tensor<192xf32>
    %1082 = kiln.div %1074, %1081 : tensor<192xf32>
    %1083 = kiln.mul %860, %1082 : tensor<192xf32>
    %1084 = kiln.sub %1070, %1083 : tensor<192xf32>
    %1085 = kiln.mul %arg23, %881 : tensor<64x64xf32>
    %1086 = kiln.mul %695, %884 : tensor<64x64xf32>
    %1087 = kiln.sub %1086, %arg68 : tensor<64x64xf32>
    %1088 = kiln.mul %1087, %887 : tensor<64x64xf32>
    %1089 = kiln.add %arg68, %1088 : tensor<64x64xf32>
    %1090 = kiln.mul %arg69, %890 : tensor<64x64xf32>
    %1091 = kiln.mul %1086, %1086 : tensor<64x64xf32>
    %1092 = kiln.mul %1091, %893 : tensor<64x64xf32>
    %1093 = kiln.add %1090, %1092 : tensor<64x64xf32>
    %1094 = kiln.sqrt %1093 : tensor<64x64xf32>
    %1095 = kiln.div %1094, %897 : tensor<64x64xf32>
    %1096 = kiln.add %1095, %899 : tensor<64x64xf32>
    %1097 = kiln.div %1089, %1096 : tensor<64x64xf32>
    %1098 = kiln.mul %883, %1097 : tensor<64x64xf32>
    %1099 = kiln.sub %1085, %1098 : tensor<64x64xf32>
    %1100 = kiln.mul %arg24, %797 : tensor<64xf32>
    %1101 = kiln.mul %699, %800 : tensor<64xf32>
    %1102 = kiln.sub %1101, %arg70 : tensor<64xf32>
    %1103 = kiln.mul %1102, %803 : tensor<64xf32>
    %1104 = kiln.add %arg70, %1103 : tensor<64xf32>
    %1105 = kiln.mul %arg71, %806 : tensor<64xf32>
    %1106 = kiln.mul %1101, %1101 : tensor<64xf32>
    %1107 = kiln.mul %1106, %809 : tensor<64xf32>
    %1108 = kiln.add %1105, %1107 : tensor<64xf32>
    %1109 = kiln.sqrt %1108 : tensor<64xf32>
    %1110 = kiln.div %1109, %813 : tensor<64xf32>
    %1111 = kiln.add %1110, %815 : tensor<64xf32>
    %1112 = kiln.div %1104, %1111 : tensor<64xf32>
    %1113 = kiln.mul %799, %1112 : tensor<64xf32>
    %1114 = kiln.sub %1100, %1113 : tensor<64xf32>
    %1115 = kiln.mul %arg25, %797 : tensor<64xf32>
    %1116 = kiln.mul %704, %800 : tensor<64xf32>
    %1117 = kiln.sub %1116, %arg72 : tensor<64xf32>
    %1118 = kiln.mul %1117, %803 : tensor<64xf32>
    %1119 = kiln.add %arg72, %1118 : tensor<64xf32>
    %1120 = kiln.mul %arg73, %806 : tensor<64xf32>
    %1121 = kiln.mul %1116, %1116 : tensor<64xf32>
    %1122 = kiln.mul %1121, %809 : tensor<64xf32>
    %1123 = kiln.add %1120, %1122 : tensor<64xf32>
    %1124 = kiln.sqrt %1123 : tensor<64xf32>
    %1125 = kiln.div %1124, %813 : tensor<64xf32>
    %1126 = kiln.add %1125, %815 : tensor<64xf32>
    %1127 = kiln.div %1119, %1126 : tensor<64xf32>
    %1128 = kiln.mul %799, %1127 : tensor<64xf32>
    %1129 = kiln.sub %1115, %1128 : tensor<64xf32>
    %1130 = kiln.mul %arg26, %797 : tensor<64xf32>
    %1131 = kiln.mul %708, %800 : tensor<64xf32>
    %1132 = kiln.sub %1131, %arg74 : tensor<64xf32>
    %1133 = kiln.mul %1132, %803 : tensor<64xf32>
    %1134 = kiln.add %arg74, %1133 : tensor<64xf32>
    %1135 = kiln.mul %arg75, %806 : tensor<64xf32>
    %1136 = kiln.mul %1131, %1131 : tensor<64xf32>
    %1137 = kiln.mul %1136, %809 : tensor<64xf32>
    %1138 = kiln.add %1135, %1137 : tensor<64xf32>
    %1139 = kiln.sqrt %1138 : tensor<64xf32>
    %1140 = kiln.div %1139, %813 : tensor<64xf32>
    %1141 = kiln.add %1140, %815 : tensor<64xf32>
    %1142 = kiln.div %1134, %1141 : tensor<64xf32>
    %1143 = kiln.mul %799, %1142 : tensor<64xf32>
    %1144 = kiln.sub %1130, %1143 : tensor<64xf32>
    %1145 = kiln.mul %arg27, %949 : tensor<64x256xf32>
    %1146 = kiln.mul %713, %952 : tensor<64x256xf32>
    %1147 = kiln.sub %1146, %arg76 : tensor<64x256xf32>
    %1148 = kiln.mul %1147, %955 : tensor<64x256xf32>
    %1149 = kiln.add %arg76, %1148 : tensor<64x256xf32>
    %1150 = kiln.mul %arg77, %958 : tensor<64x256xf32>
    %1151 = kiln.mul %1146, %1146 : tensor<64x256xf32>
    %1152 = kiln.mul %1151, %961 : tensor<64x256xf32>
    %1153 = kiln.add %1150, %1152 : tensor<64x256xf32>
    %1154 = kiln.sqrt %1153 : tensor<64x256xf32>
    %1155 = kiln.div %1154, %965 : tensor<64x256xf32>
    %1156 = kiln.add %1155, %967 : tensor<64x256xf32>
    %1157 = kiln.div %1149, %1156 : tensor<64x256xf32>
    %1158 = kiln.mul %951, %1157 : tensor<64x256xf32>
    %1159 = kiln.sub %1145, %1158 : tensor<64x256xf32>
    %1160 = kiln.mul %arg28, %972 : tensor<256xf32>
    %1161 = kiln.mul %717, %975 : tensor<256xf32>
    %1162 = kiln.sub %1161, %arg78 : tensor<256xf32>
    %1163 = kiln.mul %1162, %978 : tensor<256xf32>
    %1164 = kiln.add %arg78, %1163 : tensor<256xf32>
    %1165 = kiln.mul %arg79, %981 : tensor<256xf32>
    %1166 = kiln.mul %1161, %1161 : tensor<256xf32>
    %1167 = kiln.mul %1166, %984 : tensor<256xf32>
    %1168 = kiln.add %1165, %1167 : tensor<256xf32>
    %1169 = kiln.sqrt %1168 : tensor<256xf32>
    %1170 = kiln.div %1169, %988 : tensor<256xf32>
    %1171 = kiln.add %1170, %990 : tensor<256xf32>
    %1172 = kiln.div %1164, %1171 : tensor<256xf32>
    %1173 = kiln.mul %974, %1172 : tensor<256xf32>
    %1174 = kiln.sub %1160, %1173 : tensor<256xf32>
    %1175 = kiln.mul %arg29, %19 : tensor<256x64xf32>
    %1176 = kiln.mul %722, %745 : tensor<256x64xf32>
    %1177 = kiln.sub %1176, %arg80 : tensor<256x64xf32>
    %1178 = kiln.mul %1177, %748 : tensor<256x64xf32>
    %1179 = kiln.add %arg80, %1178 : tensor<256x64xf32>
    %1180 = kiln.mul %arg81, %752 : tensor<256x64xf32>
    %1181 = kiln.mul %1176, %1176 : tensor<256x64xf32>
    %1182 = kiln.mul %1181, %756 : tensor<256x64xf32>
    %1183 = kiln.add %1180, %1182 : tensor<256x64xf32>
    %1184 = kiln.sqrt %1183 : tensor<256x64xf32>
    %1185 = kiln.div %1184, %766 : tensor<256x64xf32>
    %1186 = kiln.add %1185, %769 : tensor<256x64xf32>
    %1187 = kiln.div %1179, %1186 : tensor<256x64xf32>
    %1188 = kiln.mul %27, %1187 : tensor<256x64xf32>
    %1189 = kiln.sub %1175, %1188 : tensor<256x64xf32>
    %1190 = kiln.mul %arg30, %797 : tensor<64xf32>
    %1191 = kiln.mul %726, %800 : tensor<64xf32>
    %1192 = kiln.sub %1191, %arg82 : tensor<64xf32>
    %1193 = kiln.mul %1192, %803 : tensor<64xf32>
    %1194 = kiln.add %arg82, %1193 : tensor<64xf32>
    %1195 = kiln.mul %arg83, %806 : tensor<64xf32>
    %1196 = kiln.mul %1191, %1191 : tensor<64xf32>
    %1197 = kiln.mul %1196, %809 : tensor<64xf32>
    %1198 = kiln.add %1195, %1197 : tensor<64xf32>
    %1199 = kiln.sqrt %1198 : tensor<64xf32>
    %1200 = kiln.div %1199, %813 : tensor<64xf32>
    %1201 = kiln.add %1200, %815 : tensor<64xf32>
    %1202 = kiln.div %1194, %1201 : tensor<64xf32>
    %1203 = kiln.mul %799, %1202 : tensor<64xf32>
    %1204 = kiln.sub %1190, %1203 : tensor<64xf32>
    %1205 = kiln.mul %arg31, %797 : tensor<64xf32>
    %1206 = kiln.mul %731, %800 : tensor<64xf32>
    %1207 = kiln.sub %1206, %arg84 : tensor<64xf32>
    %1208 = kiln.mul %1207, %803 : tensor<64xf32>
    %1209 = kiln.add %arg84, %1208 : tensor<64xf32>
    %1210 = kiln.mul %arg85, %806 : tensor<64xf32>
    %1211 = kiln.mul %1206, %1206 : tensor<64xf32>
    %1212 = kiln.mul %1211, %809 : tensor<64xf32>
    %1213 = kiln.add %1210, %1212 : tensor<64xf32>
    %1214 = kiln.sqrt %1213 : tensor<64xf32>
    %1215 = kiln.div %1214, %813 : tensor<64xf32>
    %1216 = kiln.add %1215, %815 : tensor<64xf32>
    %1217 = kiln.div %1209, %1216 : tensor<64xf32>
    %1218 = kiln.mul %799, %1217 : tensor<64xf32>
    %1219 = kiln.sub %1205, %1218 : tensor<64xf32>
    %1220 = kiln.mul %arg32, %797 : tensor<64xf32>
    %1221 = kiln.mul %735, %800 : tensor<64xf32>
    %1222 = kiln.sub %1221, %arg86 : tensor<64xf32>
    %1223 = kiln.mul %1222, %803 : tensor<64xf32>
    %1224 = kiln.add %arg86, %1223 : tensor<64xf32>
    %1225 = kiln.mul %arg87, %806 : tensor<64xf32>
    %1226 = kiln.mul %1221, %1221 : tensor<64xf32>
    %1227 = kiln.mul %1226, %809 : tensor<64xf32>
    %1228 = kiln.add %1225, %1227 : tensor<64xf32>
    %1229 = kiln.sqrt %1228 : tensor<64xf32>
    %1230 = kiln.div %1229, %813 : tensor<64xf32>
    %1231 = kiln.add %1230, %815 : tensor<64xf32>
    %1232 = kiln.div %1224, %1231 : tensor<64xf32>
    %1233 = kiln.mul %799, %1232 : tensor<64xf32>
    %1234 = kiln.sub %1220, %1233 : tensor<64xf32>
    %1235 = kiln.log %334 : tensor<124x1xf32>
    %1236 = kiln.reshape %1235 : tensor<124x1xf32> -> tensor<124xf32>
    %1237 = kiln.broadcast_in_dim %1236, dims = [0] : tensor<124xf32> -> tensor<124x256xf32>
    %1238 = kiln.sub %331, %1237 : tensor<124x256xf32>
    %1239 = kiln.broadcast_in_dim %63, dims = [] : tensor<f32> -> tensor<124x256xf32>
    %1240 = kiln.select %34, %1238, %1239 : tensor<124x256xi1>, tensor<124x256xf32>
    %1241 = kiln.reduce sum %1240, dims = [1] : tensor<124x256xf32> -> tensor<124xf32>
    %1242 = kiln.mul %1241, %39 : tensor<124xf32>
    %1243 = kiln.reduce sum %1242, dims = [0] : tensor<124xf32> -> tensor<f32>
    %1244 = kiln.neg %1243 : tensor<f32>
    %1245 = kiln.div %1244, %40 : tensor<f32>
    return %13, %773, %796, %819, %834, %857, %880, %903, %918, %933, %948, %971, %994, %1009, %1024, %1039, %1054, %1069, %1084, %1099, %1114, %1129, %1144, %1159, %1174, %1189, %1204, %1219, %1234, %750, %782, %805, %824, %843, %866, %889, %908, %923, %938, %957, %980, %999, %1014, %1029, %1044, %1059, %1074, %1089, %1104, %1119, %1134, %1149, %1164, %1179, %1194, %1209, %1224, %758, %788, %811, %828, %849, %872, %895, %912, %927, %942, %963, %986, %1003, %1018, %1033, %1048, %1063, %1078, %1093, %1108, %1123, %1138, %1153, %1168, %1183, %1198, %1213, %1228, %1245, %739 : tensor<2xi64>, tensor<256x64xf32>, tensor<32x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x192xf32>, tensor<192xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x256xf32>, tensor<256xf32>, tensor<256x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x192xf32>, tensor<192xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x256xf32>, tensor<256xf32>, tensor<256x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<256x64xf32>, tensor<32x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x192xf32>, tensor<192xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x256xf32>, tensor<256xf32>, tensor<256x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x192xf32>, tensor<192xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x256xf32>, tensor<256xf32>, tensor<256x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<256x64xf32>, tensor<32x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x192xf32>, tensor<192xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x256xf32>, tensor<256xf32>, tensor<256x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x192xf32>, tensor<192xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x256xf32>, tensor<256xf32>, tensor<256x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<f32>, tensor<f32>
  }
}
