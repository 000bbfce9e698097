// The composites a frontend builds from primitives (written as
// frontends/lazy/Composites.cpp emits them: keepdim reductions are a
// reduce and a reshape, scalars are 0-d constants broadcast to a shape),
// through the whole pipeline: softmax and layer norm become one reduction
// fusion each, GELU one loop fusion, cross-entropy two reduction fusions
// (the row reductions, then the batch mean). Each has a negative twin whose
// fusion must stop at a dot_general. tests/unit/PipelineTest.cpp evaluates
// every function of this file before and after the pipeline.
// RUN: kiln-opt %s --split-input-file --kiln-pipeline | FileCheck %s

// CHECK-LABEL: func.func @softmax_last_dim(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4x16xf32>
// CHECK-NEXT: %[[R:.+]] = kiln.fusion reduction(%[[X]])
// CHECK: kiln.reduce max
// CHECK: kiln.exp
// CHECK: kiln.reduce sum
// CHECK: kiln.div
// CHECK: kiln.yield
// CHECK-NEXT: }
// CHECK-NEXT: return %[[R]]
func.func @softmax_last_dim(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %m = kiln.reduce max %x, dims = [1] : tensor<4x16xf32> -> tensor<4xf32>
  %mk = kiln.reshape %m : tensor<4xf32> -> tensor<4x1xf32>
  %mb = kiln.broadcast_in_dim %mk, dims = [0, 1] : tensor<4x1xf32> -> tensor<4x16xf32>
  %z = kiln.sub %x, %mb : tensor<4x16xf32>
  %e = kiln.exp %z : tensor<4x16xf32>
  %s = kiln.reduce sum %e, dims = [1] : tensor<4x16xf32> -> tensor<4xf32>
  %sk = kiln.reshape %s : tensor<4xf32> -> tensor<4x1xf32>
  %sb = kiln.broadcast_in_dim %sk, dims = [0, 1] : tensor<4x1xf32> -> tensor<4x16xf32>
  %y = kiln.div %e, %sb : tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// The scores come from a dot_general, which never fuses: the softmax after
// it is still one fusion, and the dot stays a kernel of its own.
// CHECK-LABEL: func.func @softmax_after_dot_keeps_the_dot(
// CHECK-NEXT: %[[D:.+]] = kiln.dot_general
// CHECK-NEXT: %[[R:.+]] = kiln.fusion reduction(%[[D]])
// CHECK-NOT: kiln.dot_general
// CHECK: kiln.yield
// CHECK-NEXT: }
// CHECK-NEXT: return %[[R]]
func.func @softmax_after_dot_keeps_the_dot(%q: tensor<4x8xf32>, %k: tensor<16x8xf32>) -> tensor<4x16xf32> {
  %x = kiln.dot_general %q, %k, batch = [] x [], contract = [1] x [1] : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  %m = kiln.reduce max %x, dims = [1] : tensor<4x16xf32> -> tensor<4xf32>
  %mk = kiln.reshape %m : tensor<4xf32> -> tensor<4x1xf32>
  %mb = kiln.broadcast_in_dim %mk, dims = [0, 1] : tensor<4x1xf32> -> tensor<4x16xf32>
  %z = kiln.sub %x, %mb : tensor<4x16xf32>
  %e = kiln.exp %z : tensor<4x16xf32>
  %s = kiln.reduce sum %e, dims = [1] : tensor<4x16xf32> -> tensor<4xf32>
  %sk = kiln.reshape %s : tensor<4xf32> -> tensor<4x1xf32>
  %sb = kiln.broadcast_in_dim %sk, dims = [0, 1] : tensor<4x1xf32> -> tensor<4x16xf32>
  %y = kiln.div %e, %sb : tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// CHECK-LABEL: func.func @layer_norm_last_dim(
// CHECK-NEXT: %[[R:.+]] = kiln.fusion reduction(
// CHECK: kiln.reduce sum
// CHECK: kiln.reduce sum
// CHECK: kiln.rsqrt
// CHECK: kiln.yield
// CHECK-NEXT: }
// CHECK-NEXT: return %[[R]]
func.func @layer_norm_last_dim(%x: tensor<4x16xf32>, %w: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %s = kiln.reduce sum %x, dims = [1] : tensor<4x16xf32> -> tensor<4xf32>
  %sk = kiln.reshape %s : tensor<4xf32> -> tensor<4x1xf32>
  %n = kiln.constant dense<16.0> : tensor<f32>
  %nb = kiln.broadcast_in_dim %n, dims = [] : tensor<f32> -> tensor<4x1xf32>
  %mean = kiln.div %sk, %nb : tensor<4x1xf32>
  %meanb = kiln.broadcast_in_dim %mean, dims = [0, 1] : tensor<4x1xf32> -> tensor<4x16xf32>
  %c = kiln.sub %x, %meanb : tensor<4x16xf32>
  %c2 = kiln.mul %c, %c : tensor<4x16xf32>
  %v = kiln.reduce sum %c2, dims = [1] : tensor<4x16xf32> -> tensor<4xf32>
  %vk = kiln.reshape %v : tensor<4xf32> -> tensor<4x1xf32>
  %var = kiln.div %vk, %nb : tensor<4x1xf32>
  %eps = kiln.constant dense<1.0e-05> : tensor<f32>
  %epsb = kiln.broadcast_in_dim %eps, dims = [] : tensor<f32> -> tensor<4x1xf32>
  %ve = kiln.add %var, %epsb : tensor<4x1xf32>
  %r = kiln.rsqrt %ve : tensor<4x1xf32>
  %rb = kiln.broadcast_in_dim %r, dims = [0, 1] : tensor<4x1xf32> -> tensor<4x16xf32>
  %y0 = kiln.mul %c, %rb : tensor<4x16xf32>
  %wb = kiln.broadcast_in_dim %w, dims = [1] : tensor<16xf32> -> tensor<4x16xf32>
  %y1 = kiln.mul %y0, %wb : tensor<4x16xf32>
  %bb = kiln.broadcast_in_dim %b, dims = [1] : tensor<16xf32> -> tensor<4x16xf32>
  %y = kiln.add %y1, %bb : tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// CHECK-LABEL: func.func @gelu_tanh(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4x16xf32>
// CHECK-NEXT: %[[R:.+]] = kiln.fusion loop(%[[X]])
// CHECK: kiln.tanh
// CHECK: kiln.yield
// CHECK-NEXT: }
// CHECK-NEXT: return %[[R]]
func.func @gelu_tanh(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %x2 = kiln.mul %x, %x : tensor<4x16xf32>
  %x3 = kiln.mul %x2, %x : tensor<4x16xf32>
  %k = kiln.constant dense<0.044715> : tensor<f32>
  %kb = kiln.broadcast_in_dim %k, dims = [] : tensor<f32> -> tensor<4x16xf32>
  %kx3 = kiln.mul %x3, %kb : tensor<4x16xf32>
  %inner = kiln.add %x, %kx3 : tensor<4x16xf32>
  %c = kiln.constant dense<0.797884583> : tensor<f32>
  %cb = kiln.broadcast_in_dim %c, dims = [] : tensor<f32> -> tensor<4x16xf32>
  %u = kiln.mul %inner, %cb : tensor<4x16xf32>
  %t = kiln.tanh %u : tensor<4x16xf32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %oneb = kiln.broadcast_in_dim %one, dims = [] : tensor<f32> -> tensor<4x16xf32>
  %tp1 = kiln.add %t, %oneb : tensor<4x16xf32>
  %half = kiln.constant dense<0.5> : tensor<f32>
  %halfb = kiln.broadcast_in_dim %half, dims = [] : tensor<f32> -> tensor<4x16xf32>
  %xh = kiln.mul %x, %halfb : tensor<4x16xf32>
  %y = kiln.mul %xh, %tp1 : tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// GELU between two matmuls (an MLP block): the GELU is one loop fusion, and
// neither dot_general joins it.
// CHECK-LABEL: func.func @gelu_between_dots_keeps_the_dots(
// CHECK-NEXT: %[[D0:.+]] = kiln.dot_general
// CHECK-NEXT: %[[G:.+]] = kiln.fusion loop(%[[D0]])
// CHECK-NOT: kiln.dot_general
// CHECK: kiln.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[D1:.+]] = kiln.dot_general %[[G]]
// CHECK-NEXT: return %[[D1]]
func.func @gelu_between_dots_keeps_the_dots(%x: tensor<4x8xf32>, %w1: tensor<8x16xf32>, %w2: tensor<16x8xf32>) -> tensor<4x8xf32> {
  %h = kiln.dot_general %x, %w1, batch = [] x [], contract = [1] x [0] : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %h2 = kiln.mul %h, %h : tensor<4x16xf32>
  %h3 = kiln.mul %h2, %h : tensor<4x16xf32>
  %k = kiln.constant dense<0.044715> : tensor<f32>
  %kb = kiln.broadcast_in_dim %k, dims = [] : tensor<f32> -> tensor<4x16xf32>
  %kh3 = kiln.mul %h3, %kb : tensor<4x16xf32>
  %inner = kiln.add %h, %kh3 : tensor<4x16xf32>
  %c = kiln.constant dense<0.797884583> : tensor<f32>
  %cb = kiln.broadcast_in_dim %c, dims = [] : tensor<f32> -> tensor<4x16xf32>
  %u = kiln.mul %inner, %cb : tensor<4x16xf32>
  %t = kiln.tanh %u : tensor<4x16xf32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %oneb = kiln.broadcast_in_dim %one, dims = [] : tensor<f32> -> tensor<4x16xf32>
  %tp1 = kiln.add %t, %oneb : tensor<4x16xf32>
  %half = kiln.constant dense<0.5> : tensor<f32>
  %halfb = kiln.broadcast_in_dim %half, dims = [] : tensor<f32> -> tensor<4x16xf32>
  %hh = kiln.mul %h, %halfb : tensor<4x16xf32>
  %a = kiln.mul %hh, %tp1 : tensor<4x16xf32>
  %y = kiln.dot_general %a, %w2, batch = [] x [], contract = [1] x [0] : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// cross_entropy(logits, targets, ignore_index = -100) as the frontend emits
// it: log-softmax, a one-hot mask from an iota, the picked log-probability
// per row, then the mean over the valid rows.
// CHECK-LABEL: func.func @cross_entropy_one_hot(
// CHECK-NEXT: %[[ROWS:.+]]:2 = kiln.fusion reduction(
// CHECK: kiln.reduce max
// CHECK: kiln.iota
// CHECK: kiln.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[LOSS:.+]] = kiln.fusion reduction(%[[ROWS]]#{{[01]}}, %[[ROWS]]#{{[01]}})
// CHECK: kiln.reduce sum %{{.*}}, dims = [0]
// CHECK: kiln.div
// CHECK: kiln.yield
// CHECK-NEXT: }
// CHECK-NEXT: return %[[LOSS]]
func.func @cross_entropy_one_hot(%logits: tensor<4x5xf32>, %targets: tensor<4xi32>) -> tensor<f32> {
  %m = kiln.reduce max %logits, dims = [1] : tensor<4x5xf32> -> tensor<4xf32>
  %mk = kiln.reshape %m : tensor<4xf32> -> tensor<4x1xf32>
  %mb = kiln.broadcast_in_dim %mk, dims = [0, 1] : tensor<4x1xf32> -> tensor<4x5xf32>
  %sh = kiln.sub %logits, %mb : tensor<4x5xf32>
  %e = kiln.exp %sh : tensor<4x5xf32>
  %se = kiln.reduce sum %e, dims = [1] : tensor<4x5xf32> -> tensor<4xf32>
  %sek = kiln.reshape %se : tensor<4xf32> -> tensor<4x1xf32>
  %lse = kiln.log %sek : tensor<4x1xf32>
  %lseb = kiln.broadcast_in_dim %lse, dims = [0, 1] : tensor<4x1xf32> -> tensor<4x5xf32>
  %logp = kiln.sub %sh, %lseb : tensor<4x5xf32>
  %cls = kiln.iota dim = 1 : tensor<4x5xi32>
  %tk = kiln.reshape %targets : tensor<4xi32> -> tensor<4x1xi32>
  %tb = kiln.broadcast_in_dim %tk, dims = [0, 1] : tensor<4x1xi32> -> tensor<4x5xi32>
  %hit = kiln.compare EQ, %cls, %tb : tensor<4x5xi32>
  %zero = kiln.constant dense<0.0> : tensor<f32>
  %zb = kiln.broadcast_in_dim %zero, dims = [] : tensor<f32> -> tensor<4x5xf32>
  %sel = kiln.select %hit, %logp, %zb : tensor<4x5xi1>, tensor<4x5xf32>
  %picked = kiln.reduce sum %sel, dims = [1] : tensor<4x5xf32> -> tensor<4xf32>
  %ign = kiln.constant dense<-100> : tensor<i32>
  %ignb = kiln.broadcast_in_dim %ign, dims = [] : tensor<i32> -> tensor<4xi32>
  %ne = kiln.compare NE, %targets, %ignb : tensor<4xi32>
  %valid = kiln.convert %ne : tensor<4xi1> -> tensor<4xf32>
  %pv = kiln.mul %picked, %valid : tensor<4xf32>
  %tot = kiln.reduce sum %pv, dims = [0] : tensor<4xf32> -> tensor<f32>
  %neg = kiln.neg %tot : tensor<f32>
  %cnt = kiln.reduce sum %valid, dims = [0] : tensor<4xf32> -> tensor<f32>
  %loss = kiln.div %neg, %cnt : tensor<f32>
  return %loss : tensor<f32>
}
