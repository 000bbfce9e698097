module {
  func.func @main(%a0: tensor<16x512xf32>, %a1: tensor<16x512x768xf32>, %a2: tensor<8192x768xbf16>, %a3: tensor<768xf32>, %a4: tensor<768xf32>) -> (tensor<256x768xf64>, tensor<256x768xf64>, tensor<8192x768xbf16>) {
    %823:3 = kiln.fusion multi_output(%a0, %a1, %a2, %a3, %a4) : (tensor<16x512xf32>, tensor<16x512x768xf32>, tensor<8192x768xbf16>, tensor<768xf32>, tensor<768xf32>) -> (tensor<256x768xf64>, tensor<256x768xf64>, tensor<8192x768xbf16>) {
    ^bb0(%arg448: tensor<16x512xf32>, %arg449: tensor<16x512x768xf32>, %arg450: tensor<8192x768xbf16>, %arg451: tensor<768xf32>, %arg452: tensor<768xf32>):
      %2560 = kiln.broadcast_in_dim %arg448, dims = [0, 1] : tensor<16x512xf32> -> tensor<16x512x768xf32>
      %2561 = kiln.mul %arg449, %2560 : tensor<16x512x768xf32>
      %2562 = kiln.convert %arg450 : tensor<8192x768xbf16> -> tensor<8192x768xf32>
      %2563 = kiln.reshape %2562 : tensor<8192x768xf32> -> tensor<16x512x768xf32>
      %2564 = kiln.mul %2563, %2561 : tensor<16x512x768xf32>
      %2565 = kiln.convert %2564 : tensor<16x512x768xf32> -> tensor<16x512x768xf64>
      %2566 = kiln.reshape %2565 : tensor<16x512x768xf64> -> tensor<16x256x2x768xf64>
      %2567 = kiln.reduce sum %2566, dims = [0, 2] : tensor<16x256x2x768xf64> -> tensor<256x768xf64>
      %2568 = kiln.convert %2563 : tensor<16x512x768xf32> -> tensor<16x512x768xf64>
      %2569 = kiln.reshape %2568 : tensor<16x512x768xf64> -> tensor<16x256x2x768xf64>
      %2570 = kiln.reduce sum %2569, dims = [0, 2] : tensor<16x256x2x768xf64> -> tensor<256x768xf64>
      %2571 = kiln.broadcast_in_dim %arg451, dims = [2] : tensor<768xf32> -> tensor<16x512x768xf32>
      %2572 = kiln.broadcast_in_dim %arg452, dims = [2] : tensor<768xf32> -> tensor<16x512x768xf32>
      %2573 = kiln.mul %2561, %2572 : tensor<16x512x768xf32>
      %2574 = kiln.add %2573, %2571 : tensor<16x512x768xf32>
      %2575 = kiln.reshape %2574 : tensor<16x512x768xf32> -> tensor<8192x768xf32>
      %2576 = kiln.convert %2575 : tensor<8192x768xf32> -> tensor<8192x768xbf16>
      kiln.yield %2567, %2570, %2576 : tensor<256x768xf64>, tensor<256x768xf64>, tensor<8192x768xbf16>
    }
    return %823#0, %823#1, %823#2 : tensor<256x768xf64>, tensor<256x768xf64>, tensor<8192x768xbf16>
  }
}
