module {
  func.func @main(%a0: tensor<3072xf32>, %a1: tensor<8192x3072xbf16>, %a2: tensor<8192x3072xbf16>) -> (tensor<8192x3072xbf16>, tensor<64x3072xf64>, tensor<8192x3072xbf16>) {
    %809:3 = kiln.fusion multi_output(%a0, %a1, %a2) : (tensor<3072xf32>, tensor<8192x3072xbf16>, tensor<8192x3072xbf16>) -> (tensor<8192x3072xbf16>, tensor<64x3072xf64>, tensor<8192x3072xbf16>) {
    ^bb0(%arg448: tensor<3072xf32>, %arg449: tensor<8192x3072xbf16>, %arg450: tensor<8192x3072xbf16>):
      %2560 = kiln.broadcast_in_dim %arg448, dims = [2] : tensor<3072xf32> -> tensor<16x512x3072xf32>
      %2561 = kiln.convert %arg449 : tensor<8192x3072xbf16> -> tensor<8192x3072xf32>
      %2562 = kiln.reshape %2561 : tensor<8192x3072xf32> -> tensor<16x512x3072xf32>
      %2563 = kiln.add %2562, %2560 : tensor<16x512x3072xf32>
      %2564 = kiln.mul %2563, %2563 : tensor<16x512x3072xf32>
      %2565 = kiln.mul %2564, %2563 : tensor<16x512x3072xf32>
      %2566 = kiln.constant dense<4.471500e-02> : tensor<16x512x3072xf32>
      %2567 = kiln.mul %2565, %2566 : tensor<16x512x3072xf32>
      %2568 = kiln.add %2563, %2567 : tensor<16x512x3072xf32>
      %2569 = kiln.constant dense<0.797884583> : tensor<16x512x3072xf32>
      %2570 = kiln.mul %2568, %2569 : tensor<16x512x3072xf32>
      %2571 = kiln.tanh %2570 : tensor<16x512x3072xf32>
      %2572 = kiln.constant dense<1.000000e+00> : tensor<16x512x3072xf32>
      %2573 = kiln.add %2571, %2572 : tensor<16x512x3072xf32>
      %2574 = kiln.convert %arg450 : tensor<8192x3072xbf16> -> tensor<8192x3072xf32>
      %2575 = kiln.reshape %2574 : tensor<8192x3072xf32> -> tensor<16x512x3072xf32>
      %2576 = kiln.mul %2575, %2573 : tensor<16x512x3072xf32>
      %2577 = kiln.constant dense<5.000000e-01> : tensor<16x512x3072xf32>
      %2578 = kiln.mul %2576, %2577 : tensor<16x512x3072xf32>
      %2579 = kiln.mul %2571, %2571 : tensor<16x512x3072xf32>
      %2580 = kiln.sub %2572, %2579 : tensor<16x512x3072xf32>
      %2581 = kiln.mul %2563, %2577 : tensor<16x512x3072xf32>
      %2582 = kiln.mul %2575, %2581 : tensor<16x512x3072xf32>
      %2583 = kiln.mul %2582, %2580 : tensor<16x512x3072xf32>
      %2584 = kiln.mul %2583, %2569 : tensor<16x512x3072xf32>
      %2585 = kiln.mul %2584, %2566 : tensor<16x512x3072xf32>
      %2586 = kiln.mul %2585, %2563 : tensor<16x512x3072xf32>
      %2587 = kiln.mul %2586, %2563 : tensor<16x512x3072xf32>
      %2588 = kiln.mul %2585, %2564 : tensor<16x512x3072xf32>
      %2589 = kiln.add %2584, %2588 : tensor<16x512x3072xf32>
      %2590 = kiln.add %2589, %2587 : tensor<16x512x3072xf32>
      %2591 = kiln.add %2590, %2587 : tensor<16x512x3072xf32>
      %2592 = kiln.add %2591, %2578 : tensor<16x512x3072xf32>
      %2593 = kiln.reshape %2592 : tensor<16x512x3072xf32> -> tensor<8192x3072xf32>
      %2594 = kiln.convert %2593 : tensor<8192x3072xf32> -> tensor<8192x3072xbf16>
      %2595 = kiln.convert %2592 : tensor<16x512x3072xf32> -> tensor<16x512x3072xf64>
      %2596 = kiln.reshape %2595 : tensor<16x512x3072xf64> -> tensor<16x64x8x3072xf64>
      %2597 = kiln.reduce sum %2596, dims = [0, 2] : tensor<16x64x8x3072xf64> -> tensor<64x3072xf64>
      %2598 = kiln.mul %2581, %2573 : tensor<16x512x3072xf32>
      %2599 = kiln.reshape %2598 : tensor<16x512x3072xf32> -> tensor<8192x3072xf32>
      %2600 = kiln.convert %2599 : tensor<8192x3072xf32> -> tensor<8192x3072xbf16>
      kiln.yield %2594, %2597, %2600 : tensor<8192x3072xbf16>, tensor<64x3072xf64>, tensor<8192x3072xbf16>
    }
    return %809#0, %809#1, %809#2 : tensor<8192x3072xbf16>, tensor<64x3072xf64>, tensor<8192x3072xbf16>
  }
}
