module {
  func.func @main(%a0: tensor<768xf32>, %a1: tensor<8192x768xbf16>, %a2: tensor<2xi64>, %a3: tensor<16x512x768xf32>) -> (tensor<16x512x768xf32>, tensor<16x512x768xf32>, tensor<16x512x1xf32>) {
    %197:3 = kiln.fusion reduction(%a0, %a1, %a2, %a3) : (tensor<768xf32>, tensor<8192x768xbf16>, tensor<2xi64>, tensor<16x512x768xf32>) -> (tensor<16x512x768xf32>, tensor<16x512x768xf32>, tensor<16x512x1xf32>) {
    ^bb0(%arg448: tensor<768xf32>, %arg449: tensor<8192x768xbf16>, %arg450: tensor<2xi64>, %arg451: tensor<16x512x768xf32>):
      %2560 = kiln.broadcast_in_dim %arg448, dims = [2] : tensor<768xf32> -> tensor<16x512x768xf32>
      %2561 = kiln.convert %arg449 : tensor<8192x768xbf16> -> tensor<8192x768xf32>
      %2562 = kiln.reshape %2561 : tensor<8192x768xf32> -> tensor<16x512x768xf32>
      %2563 = kiln.add %2562, %2560 : tensor<16x512x768xf32>
      %2564 = kiln.constant dense<1.11111116> : tensor<16x512x768xf32>
      %2565 = kiln.mul %2563, %2564 : tensor<16x512x768xf32>
      %result, %new_state = kiln.rng_uniform %arg450 : tensor<2xi64> -> tensor<16x512x768xf32>
      %2566 = kiln.constant dense<1.000000e-01> : tensor<16x512x768xf32>
      %2567 = kiln.compare GE, %result, %2566 : tensor<16x512x768xf32>
      %2568 = kiln.constant dense<0.000000e+00> : tensor<16x512x768xf32>
      %2569 = kiln.select %2567, %2565, %2568 : tensor<16x512x768xi1>, tensor<16x512x768xf32>
      %2570 = kiln.add %arg451, %2569 : tensor<16x512x768xf32>
      %2571 = kiln.reduce sum %2570, dims = [2] : tensor<16x512x768xf32> -> tensor<16x512xf32>
      %2572 = kiln.reshape %2571 : tensor<16x512xf32> -> tensor<16x512x1xf32>
      %2573 = kiln.constant dense<7.680000e+02> : tensor<16x512x1xf32>
      %2574 = kiln.div %2572, %2573 : tensor<16x512x1xf32>
      %2575 = kiln.reshape %2574 : tensor<16x512x1xf32> -> tensor<16x512xf32>
      %2576 = kiln.broadcast_in_dim %2575, dims = [0, 1] : tensor<16x512xf32> -> tensor<16x512x768xf32>
      %2577 = kiln.sub %2570, %2576 : tensor<16x512x768xf32>
      %2578 = kiln.mul %2577, %2577 : tensor<16x512x768xf32>
      %2579 = kiln.reduce sum %2578, dims = [2] : tensor<16x512x768xf32> -> tensor<16x512xf32>
      %2580 = kiln.reshape %2579 : tensor<16x512xf32> -> tensor<16x512x1xf32>
      %2581 = kiln.div %2580, %2573 : tensor<16x512x1xf32>
      %2582 = kiln.constant dense<9.99999974E-6> : tensor<16x512x1xf32>
      %2583 = kiln.add %2581, %2582 : tensor<16x512x1xf32>
      %2584 = kiln.rsqrt %2583 : tensor<16x512x1xf32>
      kiln.yield %2570, %2577, %2584 : tensor<16x512x768xf32>, tensor<16x512x768xf32>, tensor<16x512x1xf32>
    }
    return %197#0, %197#1, %197#2 : tensor<16x512x768xf32>, tensor<16x512x768xf32>, tensor<16x512x1xf32>
  }
}
