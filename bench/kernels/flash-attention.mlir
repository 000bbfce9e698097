module {
  func.func @main(%q: tensor<16x12x512x64xbf16>, %k: tensor<16x12x512x64xbf16>, %v: tensor<16x12x512x64xbf16>, %s: tensor<2xi64>) -> tensor<16x12x512x64xbf16> {
    %o, %stats_o = kiln.fused_attention %q, %k, %v, rng = %s {causal, dropout = 0.100000 : f64, scale = 0.125000 : f64} : tensor<16x12x512x64xbf16>, tensor<16x12x512x64xbf16>, tensor<16x12x512x64xbf16>, tensor<2xi64> -> tensor<16x12x512x64xbf16>, tensor<16x12x512xf32>
    return %o : tensor<16x12x512x64xbf16>
  }
}
