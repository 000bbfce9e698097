module {
  func.func @main(%a0: tensor<16x12x512x64xf32>, %a1: tensor<16x12x512x64xf32>, %a2: tensor<16x12x512x64xf32>, %a3: tensor<16x12x512x64xf32>, %a4: tensor<16x12x512x64xf32>) -> (tensor<8192x2304xbf16>, tensor<128x2304xf64>) {
    %901:2 = kiln.fusion multi_output(%a0, %a1, %a2, %a3, %a4) : (tensor<16x12x512x64xf32>, tensor<16x12x512x64xf32>, tensor<16x12x512x64xf32>, tensor<16x12x512x64xf32>, tensor<16x12x512x64xf32>) -> (tensor<8192x2304xbf16>, tensor<128x2304xf64>) {
    ^bb0(%arg448: tensor<16x12x512x64xf32>, %arg449: tensor<16x12x512x64xf32>, %arg450: tensor<16x12x512x64xf32>, %arg451: tensor<16x12x512x64xf32>, %arg452: tensor<16x12x512x64xf32>):
      %2560 = kiln.transpose %arg448, perm = [0, 2, 1, 3] : tensor<16x12x512x64xf32> -> tensor<16x512x12x64xf32>
      %2561 = kiln.reshape %2560 : tensor<16x512x12x64xf32> -> tensor<16x512x768xf32>
      %2562 = kiln.constant dense<0.000000e+00> : tensor<f32>
      %2563 = kiln.pad %2561, %2562, low = [0, 0, 0], high = [0, 0, 1536] : tensor<16x512x768xf32>, tensor<f32> -> tensor<16x512x2304xf32>
      %2564 = kiln.add %arg449, %arg450 : tensor<16x12x512x64xf32>
      %2565 = kiln.transpose %2564, perm = [0, 2, 1, 3] : tensor<16x12x512x64xf32> -> tensor<16x512x12x64xf32>
      %2566 = kiln.reshape %2565 : tensor<16x512x12x64xf32> -> tensor<16x512x768xf32>
      %2567 = kiln.pad %2566, %2562, low = [0, 0, 768], high = [0, 0, 768] : tensor<16x512x768xf32>, tensor<f32> -> tensor<16x512x2304xf32>
      %2568 = kiln.add %arg451, %arg452 : tensor<16x12x512x64xf32>
      %2569 = kiln.transpose %2568, perm = [0, 2, 1, 3] : tensor<16x12x512x64xf32> -> tensor<16x512x12x64xf32>
      %2570 = kiln.reshape %2569 : tensor<16x512x12x64xf32> -> tensor<16x512x768xf32>
      %2571 = kiln.pad %2570, %2562, low = [0, 0, 1536], high = [0, 0, 0] : tensor<16x512x768xf32>, tensor<f32> -> tensor<16x512x2304xf32>
      %2572 = kiln.add %2571, %2567 : tensor<16x512x2304xf32>
      %2573 = kiln.add %2572, %2563 : tensor<16x512x2304xf32>
      %2574 = kiln.reshape %2573 : tensor<16x512x2304xf32> -> tensor<8192x2304xf32>
      %2575 = kiln.convert %2574 : tensor<8192x2304xf32> -> tensor<8192x2304xbf16>
      %2576 = kiln.convert %2573 : tensor<16x512x2304xf32> -> tensor<16x512x2304xf64>
      %2577 = kiln.reshape %2576 : tensor<16x512x2304xf64> -> tensor<16x128x4x2304xf64>
      %2578 = kiln.reduce sum %2577, dims = [0, 2] : tensor<16x128x4x2304xf64> -> tensor<128x2304xf64>
      kiln.yield %2575, %2578 : tensor<8192x2304xbf16>, tensor<128x2304xf64>
    }
    return %901#0, %901#1 : tensor<8192x2304xbf16>, tensor<128x2304xf64>
  }
}
