// The kiln passes: simplification, fusion, scheduling and rematerialization
// over the kiln dialect, in the order compiler/Pipeline.cpp runs them. Each
// pass has one .cpp file named after it and a lit test
// tests/passes/<pass-name>.mlir.
#ifndef KILN_PASSES_TD
#define KILN_PASSES_TD

include "mlir/Pass/PassBase.td"

def SimplifyPass : Pass<"kiln-simplify", "mlir::func::FuncOp"> {
  let summary = "Fold and algebraically simplify kiln ops";
  let description = [{
    Runs the dialect's folders (x·1, x+(-0.0), integer x+0, reshape and
    transpose chains, identity converts and broadcasts) together with
    rewrites that are exact under docs/IR.md's semantics:
    - convert(convert(x)) → convert(x) when the inner convert is lossless
      (f32→f64→f32 is x; f32→f16→f32 is not touched);
    - dot_general(transpose(x), y) → dot_general(x, y) with the transpose
      folded into the dimension numbers, when the free dimensions keep their
      order;
    - transpose(dot_general(x, y)) → dot_general(y, x) when the transpose
      swaps x's free dimensions with y's (batch first, each group in
      order) and is the product's one reader;
    - reduce sum of a broadcast over exactly the broadcast dimensions →
      x·count (+0.0 for floats, so -0.0 sums to +0.0 as the reduce does);
      reduce max/min of such a broadcast → x;
    - neg(neg(x)) → x.

    Before:
    ```mlir
    %b = kiln.broadcast_in_dim %x, dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
    %s = kiln.reduce max %b, dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
    ```
    After: uses of `%s` read `%x`.
  }];
  let dependentDialects = ["kiln::KilnDialect"];
  let statistics = [
    Statistic<"numConvertChains", "convert-chains", "convert chains folded">,
    Statistic<"numTransposesIntoDot", "transposes-into-dot",
              "transposes folded into dot_general">,
    Statistic<"numTransposedProducts", "transposed-products",
              "transposed products computed with swapped operands">,
    Statistic<"numBroadcastReduces", "broadcast-reduces",
              "reduces of broadcasts simplified">,
    Statistic<"numDoubleNegations", "double-negations",
              "neg(neg(x)) removed">
  ];
}

def LowerCrossEntropyPass : Pass<"kiln-lower-cross-entropy",
                                 "mlir::func::FuncOp"> {
  let summary = "Write the fused linear cross-entropy out, chunk by chunk";
  let description = [{
    Replaces kiln.fused_linear_cross_entropy and its gradient with primitive
    ops for backends without a kernel of their own: per chunk of rows, the
    logits (one GEMM), their logsumexp and the label's logit; the gradient
    recomputes the chunk's logits and softmax, takes its hidden gradient
    and adds its weight gradient to the chunks' sum. A chunk's logits stay
    within `max-chunk-bytes`, so the [N, V] logits are never stored (a
    language model's lm_head and loss). When the gradient's loss_grad is
    one scalar broadcast to every row (a mean's gradient) and the forward
    op with the same operands precedes it, the forward computes the
    gradients for a loss_grad of 1 while it has each chunk's logits, and
    the gradient op becomes two multiplications by the scalar: three GEMMs
    over the logits in all instead of four.

    Before:
    ```mlir
    %l = kiln.fused_linear_cross_entropy %h, %w, %y {ignore_index = -100}
        : tensor<6x4xf32>, tensor<10x4xf32>, tensor<6xi64> -> tensor<6xf32>
    ```
    After, per chunk: a `kiln.optimization_barrier` tying the inputs to the
    previous chunk, `dot_general` (logits), `reduce max`, `exp`,
    `reduce sum`, `log`, an `iota`/`compare` one-hot, `select`, and a
    `concatenate` of the chunks' losses.
  }];
  let dependentDialects = ["kiln::KilnDialect"];
  let options = [
    Option<"maxChunkBytes", "max-chunk-bytes", "int64_t", "64 << 20",
           "the most bytes one chunk's logits may take">,
    Option<"vocabMultiple", "vocab-multiple", "int64_t", "1",
           "pad the weight's rows (the vocabulary) to a multiple of this; "
           "padded logits are masked out">
  ];
  let statistics = [
    Statistic<"numLowered", "lowered", "cross-entropy ops written out">,
    Statistic<"numGradientsInForward", "gradients-in-forward",
              "gradients computed in the forward pass (uniform loss_grad)">
  ];
}

def LowerAttentionPass : Pass<"kiln-lower-attention", "mlir::func::FuncOp"> {
  let summary = "Write fused attention out as primitive ops, chunk by chunk";
  let description = [{
    Replaces kiln.fused_attention and kiln.fused_attention_grad with
    primitive ops for backends without an attention kernel: per chunk of
    query rows, the scores (causal: only the keys up to the chunk's last
    row), the softmax, the dropout mask from kiln.rng_uniform at the
    chunk's counter (the op's recipe, so the mask does not depend on the
    chunking), and the products with the values; the gradient recomputes
    the probabilities and sums the key and value gradients over chunks. A
    chunk's scores stay within `max-chunk-bytes`, so no [T, S] matrix is
    stored and nothing the size of the scores lives from the forward to
    the backward pass.

    Before:
    ```mlir
    %o = kiln.fused_attention %q, %k, %v {causal, scale = 0.125 : f64}
        : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>
        -> tensor<1x2x8x4xf32>
    ```
    After: `dot_general` (scores), `iota`/`compare`/`select` (the mask),
    `reduce max`, `exp`, `reduce sum`, `div`, `dot_general` per chunk, and
    a `concatenate` of the chunks' results.
  }];
  let dependentDialects = ["kiln::KilnDialect"];
  let options = [
    Option<"maxChunkBytes", "max-chunk-bytes", "int64_t", "64 << 20",
           "the most bytes one chunk's scores may take">,
    Option<"keepKernelAttention", "keep-kernel-attention", "bool", "false",
           "leave whole the attention ops an attention kernel runs (16-bit, "
           "head dim a multiple of 8 up to 128: kiln::fitsAttentionKernel)">
  ];
  let statistics = [
    Statistic<"numLowered", "lowered", "attention ops written out">,
    Statistic<"numKept", "kept", "attention ops left for a kernel">
  ];
}

def AutocastPass : Pass<"kiln-autocast", "mlir::func::FuncOp"> {
  let summary = "Run f32 matrix products in bf16 or f16 (mixed precision)";
  let description = [{
    Mixed precision as a compiler pass (PyTorch's autocast, XLA's bf16
    normalization): every `dot_general` of f32 operands into an f32 result
    takes its operands rounded to the 16-bit `type` (bf16, or f16 for
    `--fp16`), so the GEMM runs on the tensor cores (the GPU) or 16-bit
    instructions (CPUs that have them) with exact products and f32 sums.
    Its result is rounded to that type as well (autocast's form:
    half the bytes, and what a saved activation takes) and widened back to
    f32 for its readers, so everything else stays f32: layer norms, softmax,
    the loss, the optimizer and the master weights. With `f32-results` the
    product produces f32 directly (the dialect's mixed form) and nothing is
    widened. A value read by several products is rounded once (one
    `convert` after its definition); a widened product result is read in
    the 16-bit type as it is. With `f32-sums` (the pipeline's, with
    kiln-fuse-gemm-epilogue) a product whose only reader adds it to
    another stored f32 value (a running sum: the loss's lm_head weight
    gradient over its chunks) keeps an f32 result, so the sum is not
    rounded term by term and the add folds into the GEMM. An f32 value
    that every reader rounds, some through views (slices, reshapes,
    transposes, barrier slots: attention's keys, sliced by each chunk), is
    rounded once where it is made and the views carry the 16-bit type
    (exact: a convert commutes with moving elements). Products of
    other types are left alone. f16
    keeps 11 significant bits where bf16 keeps 8, but its largest value is
    65504: a training step in f16 needs loss scaling (nn::GradScaler), so
    that small gradients do not flush to zero and an overflow is caught.

    Before:
    ```mlir
    %y = kiln.dot_general %x, %w, batch = [] x [], contract = [1] x [0]
        : tensor<8x4xf32>, tensor<4x6xf32> -> tensor<8x6xf32>
    ```
    After:
    ```mlir
    %xb = kiln.convert %x : tensor<8x4xf32> -> tensor<8x4xbf16>
    %wb = kiln.convert %w : tensor<4x6xf32> -> tensor<4x6xbf16>
    %yb = kiln.dot_general %xb, %wb, batch = [] x [], contract = [1] x [0]
        : tensor<8x4xbf16>, tensor<4x6xbf16> -> tensor<8x6xbf16>
    %y = kiln.convert %yb : tensor<8x6xbf16> -> tensor<8x6xf32>
    ```
  }];
  let dependentDialects = ["kiln::KilnDialect"];
  let options = [
    Option<"halfType", "type", "std::string", "\"bf16\"",
           "the 16-bit type products read: bf16 or f16">,
    Option<"f32Results", "f32-results", "bool", "false",
           "keep the products' results in f32 (16-bit operands into f32)">,
    Option<"f32Sums", "f32-sums", "bool", "false",
           "keep in f32 the result of a product only an f32 add of a "
           "stored value reads (what kiln-fuse-gemm-epilogue folds)">,
    Option<"attention", "attention", "bool", "false",
           "also run whole f32 attention ops in the 16-bit type where an "
           "attention kernel can (kiln::fitsAttentionKernel): operands "
           "rounded, results widened">
  ];
  let statistics = [
    Statistic<"numProducts", "products", "products moved to 16-bit inputs">,
    Statistic<"numRounded", "rounded", "values rounded to the 16-bit type">,
    Statistic<"numAttention", "attention",
              "attention ops moved to the 16-bit type whole">,
    Statistic<"numAccumulated", "accumulated",
              "products kept in f32 for the f32 sum that adds them">,
    Statistic<"numRoundedAtSource", "rounded-at-source",
              "values every reader rounds through views, rounded once where "
              "they are made">
  ];
}

def PartitionPass : Pass<"kiln-partition", "mlir::func::FuncOp"> {
  let summary = "Choose what the forward pass saves for the backward pass; recompute the rest";
  let description = [{
    In a training step (a function holding a kiln.optimization_barrier
    marked gradient_seed), every op that depends on the seed is the
    backward pass, every other op the forward pass. A minimum cut over the
    forward ops decides which of them the backward reads from memory
    (saved: the cut's capacity is their bytes) and which it recomputes:
    elementwise ops, layout ops and kiln.rng_uniform may be recomputed;
    dot_general, reduce, gather, scatter_add and barriers are always saved
    when the backward needs them. Recomputed values are cloned right
    before each backward op that reads them, from the saved values read
    through a kiln.optimization_barrier together with that op's backward
    operands, so they run in the backward pass and fusion folds them into
    their consumer. Dropout masks are regenerated from the RNG state rather
    than stored. A function without a gradient seed is left alone.

    Before (forward: x → t = tanh(x) → y = t · w; backward: dt = dy · w,
    dx = dt · (1 − t²)): `t` is saved for the backward.
    After: the backward reads `x` (a GEMM's result, saved anyway) through a
    barrier with `dy`, recomputes `tanh`, and `t` dies in the forward.
  }];
  let dependentDialects = ["kiln::KilnDialect"];
  let options = [
    Option<"recomputeCost", "recompute-cost", "int64_t", "64 << 10",
           "what running an op again costs, in bytes kept instead: values "
           "smaller than this are kept (a kernel and a pass over its inputs "
           "are not worth less memory)">
  ];
  let statistics = [
    Statistic<"numSaved", "saved", "forward ops the backward reads">,
    Statistic<"numSavedBytes", "saved-bytes",
              "bytes of the forward values the backward reads">,
    Statistic<"numRecomputed", "recomputed", "ops cloned into the backward">,
    Statistic<"numErased", "erased", "forward ops no longer read">
  ];
}

def SplitReductionsPass : Pass<"kiln-split-reductions", "mlir::func::FuncOp"> {
  let summary = "Split reductions with few outputs into two stages (a tree)";
  let description = [{
    A reduction kernel walks its outputs in parallel and each output's
    reduced elements serially, so a reduction with few outputs and many
    reduced elements runs on a handful of threads: a global gradient norm
    (one output over 38.6M elements for GPT-2's wte) is one GPU thread's
    loop. XLA's GPU compiler rewrites such reductions into a tree (its
    TreeReductionRewriter); this pass does the same for kiln.reduce.

    A reduce becomes two when each of its threads would take more than
    `max-serial` elements and it has fewer than `parallelism` threads. A
    reduce has a thread per output, or `row-lanes` (a GPU's warp) when
    its reduced dims are innermost and each output reduces at least
    `min-laned-row` elements (the row kernels' lanes). The first stage
    reduces all
    but `parts` slices of one reduced dimension (a dimension kept whole
    when the reduce has others, or split by a reshape into [parts,
    extent / parts]), the second reduces the parts. `parts` is the divisor
    of a reduced dimension closest (in ratio) to what fills `parallelism`
    threads, while leaving each first-stage output at least 32 elements.
    Both stages are split again while they qualify. With
    `contiguous-parts` (a CPU, whose row kernel gives an output one
    core's serial walk and reads it best as one run of memory) only
    reductions over innermost dims are split, and only at their
    outermost reduced dimension, so every part is a contiguous block;
    a part that strides through the operand (768 = 16 x 48 across
    50257 rows) ran 4-10x slower there than the unsplit reduce.
    Sums of f32, f16 and
    bf16 are done in f64 (converted before the first stage, back after
    the second), so the result is the same f64-accumulated sum a single
    kernel computes; max and min are exact; products and integer sums are
    left alone. Run before fusion: each stage then fuses with its
    producers and consumers as any reduce does.

    Before:
    ```mlir
    %s = kiln.reduce sum %x, dims = [0, 1] : tensor<4096x768xf32> -> tensor<f32>
    ```
    After:
    ```mlir
    %w = kiln.convert %x : tensor<4096x768xf32> -> tensor<4096x768xf64>
    %p = kiln.reduce sum %w, dims = [1] : tensor<4096x768xf64> -> tensor<4096xf64>
    %q = kiln.reshape %p : tensor<4096xf64> -> tensor<128x32xf64>
    %r = kiln.reduce sum %q, dims = [1] : tensor<128x32xf64> -> tensor<128xf64>
    %t = kiln.reduce sum %r, dims = [0] : tensor<128xf64> -> tensor<f64>
    %s = kiln.convert %t : tensor<f64> -> tensor<f32>
    ```
  }];
  let dependentDialects = ["kiln::KilnDialect"];
  let options = [
    Option<"parallelism", "parallelism", "int64_t", "32768",
           "reductions on at least this many threads are left alone">,
    Option<"maxSerial", "max-serial", "int64_t", "1024",
           "reductions over at most this many elements per thread are "
           "left alone">,
    Option<"rowLanes", "row-lanes", "int64_t", "1",
           "threads per output of a reduction over innermost dims">,
    Option<"minLanedRow", "min-laned-row", "int64_t", "64",
           "fewest elements per output for row-lanes threads">,
    Option<"contiguousParts", "contiguous-parts", "bool", "false",
           "split only reductions over innermost dims, and only their "
           "outermost reduced dim, so each part is one contiguous run (a "
           "CPU's row kernel)">
  ];
  let statistics = [
    Statistic<"numSplit", "split", "reductions split in two">
  ];
}

def JoinSumsPass : Pass<"kiln-join-sums", "mlir::func::FuncOp"> {
  let summary = "Join a scalar sum of many full reductions into one reduction";
  let description = [{
    Gradient clipping's global norm adds one sum of squares per parameter.
    After kiln-split-reductions each of those sums is a tree of its own: a
    wide first stage, then second and third stages on one warp each, and
    the scalars are added one by one (GPT-2 124M: 163 kernels of a few
    microseconds, 113 after the first stages). This pass keeps each tree's
    first stage and sums all their results at once: the pieces are
    flattened, concatenated (per element type) and reduced by one
    kiln.reduce, which the next kiln-split-reductions splits again.
    PyTorch's clip_grad_norm_ does the same with its multi-tensor foreach
    norm.

    A sum tree is a root scalar float kiln.add and the scalar adds under
    it, each read only by the add above. A leaf joins when it is a
    kiln.reduce sum over every dimension of a float value (optionally
    behind one float convert, as kiln-split-reductions narrows its f64
    sums back), read only by the tree. Its piece is the value that sum
    reads, moved down through a split tree's stages (sums read once,
    reshapes between) while a stage's operand has at most 2^18 elements:
    the first stage's partial sums, never the gradient they read. With at
    least 3 such leaves the tree is rewritten; leaves that do not join are
    added to the joined sums. Float sums are reassociated (as a split
    does); each element type's pieces are summed in that type, f32 and
    f16 ones in f64 once kiln-split-reductions splits them.

    Before:
    ```mlir
    %a = kiln.reduce sum %x, dims = [0] : tensor<768xf32> -> tensor<f32>
    %b = kiln.reduce sum %y, dims = [0] : tensor<2304xf32> -> tensor<f32>
    %c = kiln.reduce sum %z, dims = [0, 1] : tensor<24x64xf32> -> tensor<f32>
    %s = kiln.add %a, %b : tensor<f32>
    %t = kiln.add %s, %c : tensor<f32>
    ```
    After:
    ```mlir
    %z1 = kiln.reshape %z : tensor<24x64xf32> -> tensor<1536xf32>
    %j = kiln.concatenate %x, %y, %z1, dim = 0
        : (tensor<768xf32>, tensor<2304xf32>, tensor<1536xf32>) -> tensor<4608xf32>
    %t = kiln.reduce sum %j, dims = [0] : tensor<4608xf32> -> tensor<f32>
    ```
  }];
  let dependentDialects = ["kiln::KilnDialect"];
  let statistics = [
    Statistic<"numJoined", "joined", "sum trees joined">,
    Statistic<"numLeaves", "leaves", "full reductions joined">
  ];
}

def FuseGemmEpiloguePass : Pass<"kiln-fuse-gemm-epilogue", "mlir::func::FuncOp"> {
  let summary = "Fuse the f32 add that reads a matrix product into its GEMM";
  let description = [{
    A `dot_general` with an f32 result (f32 operands, or the bf16 / f16
    operands of kiln-autocast's mixed form) whose only reader is a
    `kiln.add` of another computed f32 value of its type becomes, with that
    add, one `kiln.fusion gemm(lhs, rhs, accumulator)`. The backends run it
    as one GEMM library call that adds the accumulator as it stores the
    product (beta = 1: cuBLASLt's C, oneDNN's sum post-op, BLAS's beta),
    writing the result over the accumulator when it dies there. The loss's
    lm_head weight gradient, summed over the loss's chunks, is the case that
    pays: one GEMM a chunk instead of a GEMM and an add kernel that reads
    the product back. A product with other readers, a 16-bit result (its
    body would round to 16 bits before the add), a broadcast or constant
    accumulator are left alone.

    Before:
    ```mlir
    %p = kiln.dot_general %x, %dy, batch = [] x [], contract = [0] x [0]
        : tensor<16x8xbf16>, tensor<16x4xbf16> -> tensor<8x4xf32>
    %s = kiln.add %p, %acc : tensor<8x4xf32>
    ```
    After:
    ```mlir
    %s = kiln.fusion gemm(%x, %dy, %acc) : (...) -> tensor<8x4xf32> {
    ^bb0(%a: tensor<16x8xbf16>, %b: tensor<16x4xbf16>, %c: tensor<8x4xf32>):
      %p = kiln.dot_general %a, %b, ...
      %s = kiln.add %p, %c : tensor<8x4xf32>
      kiln.yield %s : tensor<8x4xf32>
    }
    ```
  }];
  let dependentDialects = ["kiln::KilnDialect"];
  let statistics = [
    Statistic<"numFused", "num-fused", "adds fused into their GEMM">
  ];
}

def FuseSmallProductsPass : Pass<"kiln-fuse-small-products", "mlir::func::FuncOp"> {
  let summary = "Write a product over a few contracted elements as a loop";
  let description = [{
    A `dot_general` that contracts at most `max-contraction` elements (one
    contracted dim, no batch dims, float) and whose result has at least as
    many elements as its operands together, and at least
    `min-result-bytes`, is bound by writing its result, not by arithmetic:
    LoRA's rank-8 up-projection ([4096, 8] x [8, 1024] for v). As a GEMM it
    is a library call that writes the whole result and a kernel that reads
    it back. Here it becomes a `kiln.fusion loop` computing each point as
    the sum of the K products of its lhs row and rhs column, in f32,
    rounded once to the result type as the GEMM rounds;
    kiln-fuse-elementwise then merges it into its readers (v's heads'
    transpose), so the result is never stored. torch.compile decomposes
    such memory-bound matrix products into pointwise work for the same
    reason. Only where each point would be computed once: the product's
    value flows through elementwise-like ops, each read by one op, to
    readers that fuse no loop. A product that reaches a reduction (a row
    kernel computes it in each pass) or that two fusing ops read (a rotary
    embedding's halves) stays a GEMM: ~25 instructions a point, computed
    twice, cost more than the bytes saved. A tie on the product moves to
    its latest operand.

    Before:
    ```mlir
    %p = kiln.dot_general %h, %b, batch = [] x [], contract = [1] x [1]
        : tensor<64x2xbf16>, tensor<32x2xbf16> -> tensor<64x32xbf16>
    ```
    After (a loop fusion of, for each k < 2, the slices h[:, k] and
    b[:, k] widened to f32, broadcast to 64x32 and multiplied, the products
    added in order of k and the sum rounded to bf16).
  }];
  let dependentDialects = ["kiln::KilnDialect"];
  let options = [
    Option<"maxContraction", "max-contraction", "int64_t", "16",
           "the most contracted elements a product written as a loop may "
           "have">,
    Option<"minResultBytes", "min-result-bytes", "int64_t", "1048576",
           "the fewest bytes its result may have (a smaller one costs about "
           "a launch either way)">,
  ];
  let statistics = [
    Statistic<"numRewritten", "num-rewritten", "products written as loops">,
  ];
}

def FuseElementwisePass : Pass<"kiln-fuse-elementwise", "mlir::func::FuncOp"> {
  let summary = "Fuse elementwise producers into their consumers";
  let description = [{
    Input: unfused kiln ops. Output: `kiln.fusion loop` ops, each rooted at an
    elementwise consumer that has absorbed its producers: elementwise ops,
    broadcasts, converts, reshapes, iota, rng_uniform (its new state becomes
    a second result) and cheap transposes. Consumers are visited from the
    end of the function, and each grows until no producer is legal. A
    producer is refused, and a statistic counts why, when it is not
    fusible (dot_general, reduce, gather, scatter_add, ...), when fusing
    would create a cycle, when its element count differs from the
    consumer's, when it is an expensive transpose, when it has other users
    and is too expensive to duplicate, or when the fusion would exceed
    `max-operands` inputs or `max-ops` ops in its body (each fusion step
    clones the grown body, so an unbounded chain of 20,000 adds took
    minutes, quadratic in its length), or when it is a slice that is one
    run of its source and the consumer a lone reshape (a reshape alone is
    no kernel, and products read such a slice in place, reshaped or not).
    Cheap producers with other users are duplicated
    (also when they read cheap shared ops, if those read fewer bytes per
    element than they make: a widened, masked 16-bit product); one the
    function returns joins a consumer of its shape as an extra result.

    Before:
    ```mlir
    %b = kiln.broadcast_in_dim %bias, dims = [1]
        : tensor<8xf32> -> tensor<4x8xf32>
    %s = kiln.add %x, %b : tensor<4x8xf32>
    %t = kiln.tanh %s : tensor<4x8xf32>
    ```
    After: one `kiln.fusion loop(%x, %bias)` whose body holds all three.
  }];
  let dependentDialects = ["kiln::KilnDialect"];
  let options = [
    Option<"maxOperands", "max-operands", "unsigned", "16",
           "refuse fusions whose group exceeds this many inputs">,
    Option<"maxOps", "max-ops", "unsigned", "kiln::kMaxFusionOps",
           "refuse fusions whose body would exceed this many ops "
           "(kMaxFusionOps, which the other fusion passes keep)">,
    Option<"emitRemarks", "emit-remarks", "bool", "false",
           "explain every refusal with a remark (pass statistics are no-ops "
           "in LLVM release builds)">
  ];
  let statistics = [
    Statistic<"numFused", "num-fused", "producers fused">,
    Statistic<"numDuplicated", "num-duplicated",
              "cheap producers duplicated into a fusion">,
    Statistic<"numRefusedNotFusible", "refused-not-fusible",
              "producers that never fuse here (dot, reduce, gather, ...)">,
    Statistic<"numRefusedCycle", "refused-cycle",
              "fusions refused because they would create a cycle">,
    Statistic<"numRefusedDuplication", "refused-duplication",
              "expensive producers with other users">,
    Statistic<"numRefusedShape", "refused-shape",
              "producers whose element count differs from the consumer's">,
    Statistic<"numRefusedTranspose", "refused-transpose",
              "expensive transposes">,
    Statistic<"numRefusedOperands", "refused-operands",
              "fusions that would exceed max-operands">,
    Statistic<"numRefusedSize", "refused-size",
              "fusions that would exceed max-ops">,
    Statistic<"numRefusedSliceReshaped", "refused-slice-reshaped",
              "slices left for products to read in place through a reshape">
  ];
}

def FuseReductionsPass : Pass<"kiln-fuse-reductions", "mlir::func::FuncOp"> {
  let summary = "Fuse reductions with their producers and epilogues";
  let description = [{
    Groups every `kiln.reduce` with the reduces of the same signature
    (operand shape and reduced dimensions) it is connected to, their
    elementwise producers and their elementwise epilogues, into one
    `kiln.fusion reduction`. Members are ops of the group's full shape, of
    its reduced shape, or of the reduced shape with the reduced dimensions
    kept as 1 (elementwise ops, broadcasts, converts, reshapes, iota, loop
    fusions). A producer with users outside the group is kept as an extra
    result. Softmax becomes one fusion; layer norm one; cross-entropy two
    (row reductions, then the batch mean).

    Before: `reduce max` → `sub`/`exp` → `reduce sum` → `div` (softmax).
    After: one `kiln.fusion reduction` yielding the softmax.
  }];
  let dependentDialects = ["kiln::KilnDialect"];
  let options = [
    Option<"maxOperands", "max-operands", "unsigned", "16",
           "refuse fusions whose group exceeds this many inputs">,
    Option<"emitRemarks", "emit-remarks", "bool", "false",
           "explain every refusal with a remark (pass statistics are no-ops "
           "in LLVM release builds)">,
    Option<"loneRowsFrom", "lone-rows-from", "int64_t", "0",
           "nonzero: a reduce that groups with nothing becomes a fusion of "
           "its own too when its reduced dims are innermost and a row has "
           "at least this many elements (a GPU's fusion kernel gives such a "
           "row a warp, its plain reduce kernel one thread)">
  ];
  let statistics = [
    Statistic<"numFusions", "num-fusions", "reduction fusions created">,
    Statistic<"numFused", "num-fused", "ops fused into reduction fusions">,
    Statistic<"numRefusedNotFusible", "refused-not-fusible",
              "neighbours that never fuse into a reduction">,
    Statistic<"numRefusedSignature", "refused-signature",
              "reduces of another operand shape or dimensions">,
    Statistic<"numRefusedShape", "refused-shape",
              "neighbours outside the group's full and reduced shapes">,
    Statistic<"numRefusedCycle", "refused-cycle",
              "fusions refused because they would create a cycle">,
    Statistic<"numRefusedOperands", "refused-operands",
              "fusions that would exceed max-operands">
  ];
}

def FuseSiblingsPass : Pass<"kiln-fuse-siblings", "mlir::func::FuncOp"> {
  let summary = "Multi-output fusion: siblings of one input, and producers "
                "whose results are also read elsewhere";
  let description = [{
    Two top-level consumers (fusions or elementwise ops) that read the same
    input of at least `min-bytes` bytes, do not depend on each other,
    iterate over the same number of elements and hold reduces of one
    signature at most become one `kiln.fusion multi_output`, so the input
    is read once.

    Then each consumer absorbs the producers (fusions or elementwise ops)
    over the same element count whose results other ops also read: those
    results become extra results of the merged fusion (producer-consumer
    multi-output fusion), unless a path through other ops joins the two.

    Before: `%a = kiln.exp %x` and `%b = kiln.tanh %x`.
    After: `%a, %b = kiln.fusion multi_output(%x)`.
  }];
  let dependentDialects = ["kiln::KilnDialect"];
  let options = [
    Option<"minBytes", "min-bytes", "int64_t", "256",
           "only inputs of at least this many bytes make siblings">,
    Option<"maxOperands", "max-operands", "unsigned", "16",
           "refuse fusions whose group exceeds this many inputs">,
    Option<"emitRemarks", "emit-remarks", "bool", "false",
           "explain every refusal with a remark (pass statistics are no-ops "
           "in LLVM release builds)">
  ];
  let statistics = [
    Statistic<"numMerged", "num-merged", "sibling pairs merged">,
    Statistic<"numMergedProducers", "num-merged-producers",
              "producers merged into a consumer as extra results">,
    Statistic<"numRefusedCycle", "refused-cycle",
              "siblings that depend on each other">,
    Statistic<"numRefusedShape", "refused-shape",
              "siblings over different element counts">,
    Statistic<"numRefusedReductions", "refused-reductions",
              "siblings holding reduces of different shapes">,
    Statistic<"numRefusedOperands", "refused-operands",
              "merges that would exceed max-operands">
  ];
}

def MoveTiesPass : Pass<"kiln-move-ties", "mlir::func::FuncOp"> {
  let summary = "Move barrier ties onto values that are buffers anyway";
  let description = [{
    A tie is a `kiln.optimization_barrier` operand whose result nothing
    reads: it only orders the barrier's other results after that value,
    and a backend gives it a buffer. A tie on a convert moves to the
    convert's operand when the convert widens (a 16-bit product's result
    that kiln-autocast widened to f32) or only ties read it; a tie on a
    fusion result nothing else reads moves to a read result of the same
    fusion (the same kernel, so the same order); a tie on a backward value
    computed elementwise (an optimizer's update, tied to by the
    partitioner) climbs through the latest backward operand of each
    elementwise op to a product or a value of at most 64 KiB. Converts and
    fusion results nothing reads any more are dropped. The pipeline runs it
    before fusion and after it.

    Before: `%w = kiln.convert %p : bf16 -> f32` read by a fusion and tied
    by `%b:2 = kiln.optimization_barrier %x, %w`, `%b#1` unread.
    After: `%b:2 = kiln.optimization_barrier %x, %p`; the convert fuses
    into its reader instead of storing an f32 copy.
  }];
  let dependentDialects = ["kiln::KilnDialect"];
  let statistics = [
    Statistic<"numMoved", "num-moved", "ties moved">,
    Statistic<"numErased", "num-erased",
              "converts erased that only ties read">
  ];
}

def SchedulePass : Pass<"kiln-schedule", "mlir::func::FuncOp"> {
  let summary = "Order top-level ops for a low peak of live memory";
  let description = [{
    A greedy list scheduler: among the ops whose operands are ready it
    picks the one that frees the most bytes net of what it allocates
    (ties: the original order), so buffers die early and are allocated
    late. Function arguments are not counted (the caller owns them);
    returned values stay live to the end. The new order is kept only if
    its estimated peak is lower than the original's. Then, in either
    order, each kiln.all_reduce (with the optimization barrier that ties
    it to the sum before it) moves up to just after its latest operand:
    an exchange runs as soon as its gradient exists, and one whose result
    nothing reads frees its operand there.
  }];
  let options = [
    Option<"emitRemarks", "emit-remarks", "bool", "false",
           "report the estimated peaks with a remark (pass statistics are "
           "no-ops in LLVM release builds)">
  ];
  let statistics = [
    Statistic<"peakBytesBefore", "peak-bytes-before",
              "estimated peak live bytes in the input order">,
    Statistic<"peakBytesAfter", "peak-bytes-after",
              "estimated peak live bytes in the scheduled order">
  ];
}

def RematerializePass : Pass<"kiln-rematerialize", "mlir::func::FuncOp"> {
  let summary = "Recompute cheap values instead of keeping them live, "
                "under a memory budget";
  let description = [{
    Runs after kiln-schedule, on each function's top-level ops in their
    order. The estimate is kiln-schedule's liveness model
    (passes/Liveness.h) plus the bytes of the function's arguments (the
    caller's parameters, optimizer state and batch stay resident), so it
    approximates the backend's planned peak. While the estimate exceeds
    `memory-budget`, the pass takes the values live across the peak op
    (defined before it, not read by it, read after it) and recomputes one
    of them after the peak, in two tiers. Cheap producers come first,
    largest first: a loop fusion, a multi-output fusion without reduces,
    or one elementwise, broadcast_in_dim, convert, iota, transpose,
    reshape or rng_uniform op (Pure: the same state gives the same bits).
    Only when none of them lowers the peak (the budget demands more) come
    the costly ones (`recompute-costly`, on by default): reduces and
    reduction fusions, then dot_general, least work per byte freed first
    (a GEMM is charged 2·M·N·K flops at 16 flops a byte). gather,
    scatter_add, slice, pad and concatenate are never recomputed. A
    candidate is a chain: the producer and, up to 4 ops, the producers of
    operands nothing else reads at or after the peak, when their tier
    allows them (a bias add with the GEMM it reads). The pass clones the
    chain before the producer's first user after the peak and redirects
    every later user to the clone; originals are erased when nothing
    reads them any more. A clone keeps its operands live up to
    it: the estimate counts that, and a candidate is taken only when the
    peak falls (or stays while fewer ops reach it; such steps are undone
    unless the peak later falls). `memory-budget=0` does nothing; the
    pass never fails, even when the budget cannot be met (the backend's
    memory planner reports that).

    Before (budget below the peak at the dot):
    ```mlir
    %a = kiln.exp %x            // 16 KiB, read again after the dot
    %d = kiln.dot_general ...   // the peak
    %y = kiln.add %a, %d
    ```
    After: `%a` is computed again right before the add.
  }];
  let options = [
    Option<"memoryBudget", "memory-budget", "int64_t", "0",
           "the most bytes the step may hold at its estimated peak, "
           "arguments included (0: do nothing)">,
    Option<"recomputeCostly", "recompute-costly", "bool", "true",
           "when nothing cheap lowers the peak, recompute reductions and "
           "GEMMs too">,
    Option<"emitRemarks", "emit-remarks", "bool", "false",
           "report every recomputed value and the estimated peaks with "
           "remarks (pass statistics are no-ops in LLVM release builds)">
  ];
  let statistics = [
    Statistic<"numRematerialized", "num-rematerialized",
              "values recomputed after the peak">,
    Statistic<"numCostly", "num-costly",
              "reductions and GEMMs among them">,
    Statistic<"bytesSaved", "bytes-saved",
              "estimated peak bytes removed by recomputation">,
    Statistic<"numBudgetsMissed", "budgets-missed",
              "functions still over the budget afterwards">
  ];
}

#endif // KILN_PASSES_TD
