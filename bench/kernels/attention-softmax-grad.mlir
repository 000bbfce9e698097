module {
  func.func @main(%a0: tensor<16x12x128x512xbf16>, %a1: tensor<2xi64>, %a2: tensor<16x12x128x512xbf16>) -> (tensor<16x12x128x512xbf16>, tensor<16x12x128x512xbf16>) {
    %893:2 = kiln.fusion reduction(%a0, %a1, %a2) : (tensor<16x12x128x512xbf16>, tensor<2xi64>, tensor<16x12x128x512xbf16>) -> (tensor<16x12x128x512xbf16>, tensor<16x12x128x512xbf16>) {
    ^bb0(%arg448: tensor<16x12x128x512xbf16>, %arg449: tensor<2xi64>, %arg450: tensor<16x12x128x512xbf16>):
      %2560 = kiln.constant dense<[0, 9437184]> : tensor<2xi64>
      %2561 = kiln.constant dense<1.250000e-01> : tensor<f32>
      %2562 = kiln.broadcast_in_dim %2561, dims = [] : tensor<f32> -> tensor<16x12x128x512xf32>
      %2563 = kiln.convert %arg448 : tensor<16x12x128x512xbf16> -> tensor<16x12x128x512xf32>
      %2564 = kiln.mul %2563, %2562 : tensor<16x12x128x512xf32>
      %2565 = kiln.constant dense<-3.40282347E+38> : tensor<f32>
      %2566 = kiln.broadcast_in_dim %2565, dims = [] : tensor<f32> -> tensor<16x12x128x512xf32>
      %2567 = kiln.constant dense<384> : tensor<i64>
      %2568 = kiln.broadcast_in_dim %2567, dims = [] : tensor<i64> -> tensor<16x12x128x512xi64>
      %2569 = kiln.iota dim = 2 : tensor<16x12x128x512xi64>
      %2570 = kiln.add %2569, %2568 : tensor<16x12x128x512xi64>
      %2571 = kiln.iota dim = 3 : tensor<16x12x128x512xi64>
      %2572 = kiln.compare GT, %2571, %2570 : tensor<16x12x128x512xi64>
      %2573 = kiln.select %2572, %2566, %2564 : tensor<16x12x128x512xi1>, tensor<16x12x128x512xf32>
      %2574 = kiln.reduce max %2573, dims = [3] : tensor<16x12x128x512xf32> -> tensor<16x12x128xf32>
      %2575 = kiln.broadcast_in_dim %2574, dims = [0, 1, 2] : tensor<16x12x128xf32> -> tensor<16x12x128x512xf32>
      %2576 = kiln.sub %2573, %2575 : tensor<16x12x128x512xf32>
      %2577 = kiln.exp %2576 : tensor<16x12x128x512xf32>
      %2578 = kiln.reduce sum %2577, dims = [3] : tensor<16x12x128x512xf32> -> tensor<16x12x128xf32>
      %2579 = kiln.broadcast_in_dim %2578, dims = [0, 1, 2] : tensor<16x12x128xf32> -> tensor<16x12x128x512xf32>
      %2580 = kiln.div %2577, %2579 : tensor<16x12x128x512xf32>
      %2581 = kiln.add %arg449, %2560 : tensor<2xi64>
      %2582 = kiln.constant dense<1.000000e-01> : tensor<f32>
      %2583 = kiln.broadcast_in_dim %2582, dims = [] : tensor<f32> -> tensor<16x12x128x512xf32>
      %result, %new_state = kiln.rng_uniform %2581 : tensor<2xi64> -> tensor<128x98304xf32>
      %2584 = kiln.reshape %result : tensor<128x98304xf32> -> tensor<128x16x12x512xf32>
      %2585 = kiln.transpose %2584, perm = [1, 2, 0, 3] : tensor<128x16x12x512xf32> -> tensor<16x12x128x512xf32>
      %2586 = kiln.compare GE, %2585, %2583 : tensor<16x12x128x512xf32>
      %2587 = kiln.constant dense<0.000000e+00> : tensor<f32>
      %2588 = kiln.broadcast_in_dim %2587, dims = [] : tensor<f32> -> tensor<16x12x128x512xf32>
      %2589 = kiln.constant dense<1.11111116> : tensor<f32>
      %2590 = kiln.broadcast_in_dim %2589, dims = [] : tensor<f32> -> tensor<16x12x128x512xf32>
      %2591 = kiln.mul %2580, %2590 : tensor<16x12x128x512xf32>
      %2592 = kiln.select %2586, %2591, %2588 : tensor<16x12x128x512xi1>, tensor<16x12x128x512xf32>
      %2593 = kiln.convert %2592 : tensor<16x12x128x512xf32> -> tensor<16x12x128x512xbf16>
      %2594 = kiln.convert %arg450 : tensor<16x12x128x512xbf16> -> tensor<16x12x128x512xf32>
      %2595 = kiln.mul %2594, %2590 : tensor<16x12x128x512xf32>
      %2596 = kiln.select %2586, %2595, %2588 : tensor<16x12x128x512xi1>, tensor<16x12x128x512xf32>
      %2597 = kiln.mul %2580, %2596 : tensor<16x12x128x512xf32>
      %2598 = kiln.reduce sum %2597, dims = [3] : tensor<16x12x128x512xf32> -> tensor<16x12x128xf32>
      %2599 = kiln.broadcast_in_dim %2598, dims = [0, 1, 2] : tensor<16x12x128xf32> -> tensor<16x12x128x512xf32>
      %2600 = kiln.sub %2596, %2599 : tensor<16x12x128x512xf32>
      %2601 = kiln.mul %2580, %2600 : tensor<16x12x128x512xf32>
      %2602 = kiln.mul %2601, %2562 : tensor<16x12x128x512xf32>
      %2603 = kiln.convert %2602 : tensor<16x12x128x512xf32> -> tensor<16x12x128x512xbf16>
      kiln.yield %2593, %2603 : tensor<16x12x128x512xbf16>, tensor<16x12x128x512xbf16>
    }
    return %893#0, %893#1 : tensor<16x12x128x512xbf16>, tensor<16x12x128x512xbf16>
  }
}
