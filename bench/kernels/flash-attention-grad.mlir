module {
  func.func @main(%q: tensor<16x12x512x64xbf16>, %k: tensor<16x12x512x64xbf16>, %v: tensor<16x12x512x64xbf16>, %o: tensor<16x12x512x64xbf16>, %lse: tensor<16x12x512xf32>, %g: tensor<16x12x512x64xbf16>, %s: tensor<2xi64>) -> (tensor<16x12x512x64xbf16>, tensor<16x12x512x64xbf16>, tensor<16x12x512x64xbf16>) {
    %dq, %dk, %dv = kiln.fused_attention_grad %q, %k, %v, %o, %lse, %g, rng = %s {causal, dropout = 0.100000 : f64, scale = 0.125000 : f64} : tensor<16x12x512x64xbf16>, tensor<16x12x512x64xbf16>, tensor<16x12x512x64xbf16>, tensor<16x12x512x64xbf16>, tensor<16x12x512xf32>, tensor<16x12x512x64xbf16>, tensor<2xi64> -> tensor<16x12x512x64xbf16>, tensor<16x12x512x64xbf16>, tensor<16x12x512x64xbf16>
    return %dq, %dk, %dv : tensor<16x12x512x64xbf16>, tensor<16x12x512x64xbf16>, tensor<16x12x512x64xbf16>
  }
}
