// The ops of the kiln dialect. docs/IR.md states each op's exact semantics;
// verifiers and type inference live in KilnOps.cpp, folders in KilnFolders.cpp.
#ifndef KILN_OPS_TD
#define KILN_OPS_TD

include "ir/KilnBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class Kiln_UnaryOp<string mnemonic, Type type, list<Trait> traits = []>
    : Kiln_Op<mnemonic, !listconcat(traits, [Pure, Elementwise,
          SameOperandsAndResultType, InferTypeOpInterface])> {
  let arguments = (ins type:$operand);
  let results = (outs type:$result);
  let assemblyFormat = "$operand attr-dict `:` type($result)";
}

class Kiln_BinaryOp<string mnemonic, Type type, list<Trait> traits = []>
    : Kiln_Op<mnemonic, !listconcat(traits, [Pure, Elementwise,
          SameOperandsAndResultType, InferTypeOpInterface])> {
  let arguments = (ins type:$lhs, type:$rhs);
  let results = (outs type:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

def Kiln_AddOp : Kiln_BinaryOp<"add", Kiln_NumericTensor, [Commutative]> {
  let summary = "elementwise addition";
  let hasFolder = 1;
}
def Kiln_SubOp : Kiln_BinaryOp<"sub", Kiln_NumericTensor> {
  let summary = "elementwise subtraction";
  let hasFolder = 1;
}
def Kiln_MulOp : Kiln_BinaryOp<"mul", Kiln_NumericTensor, [Commutative]> {
  let summary = "elementwise multiplication";
  let hasFolder = 1;
}
def Kiln_DivOp : Kiln_BinaryOp<"div", Kiln_NumericTensor> {
  let summary = "elementwise division (integers truncate toward zero)";
  let hasFolder = 1;
}
def Kiln_MaxOp : Kiln_BinaryOp<"max", Kiln_NumericTensor, [Commutative]> {
  let summary = "elementwise maximum; NaN propagates";
}
def Kiln_MinOp : Kiln_BinaryOp<"min", Kiln_NumericTensor, [Commutative]> {
  let summary = "elementwise minimum; NaN propagates";
}
def Kiln_PowOp : Kiln_BinaryOp<"pow", Kiln_NumericTensor> {
  let summary = "elementwise power";
}
def Kiln_AndOp : Kiln_BinaryOp<"and", Kiln_LogicalTensor, [Commutative]> {
  let summary = "elementwise logical (i1) or bitwise (integer) and";
}
def Kiln_OrOp : Kiln_BinaryOp<"or", Kiln_LogicalTensor, [Commutative]> {
  let summary = "elementwise logical (i1) or bitwise (integer) or";
}

def Kiln_NegOp : Kiln_UnaryOp<"neg", Kiln_SignedTensor> {
  let summary = "elementwise negation";
}
def Kiln_AbsOp : Kiln_UnaryOp<"abs", Kiln_SignedTensor> {
  let summary = "elementwise absolute value";
}
def Kiln_SignOp : Kiln_UnaryOp<"sign", Kiln_SignedTensor> {
  let summary = "elementwise sign: -1, 0 or 1; NaN and -0 are kept";
}
def Kiln_ExpOp : Kiln_UnaryOp<"exp", Kiln_FloatTensor> {
  let summary = "elementwise e^x";
}
def Kiln_LogOp : Kiln_UnaryOp<"log", Kiln_FloatTensor> {
  let summary = "elementwise natural logarithm";
}
def Kiln_Log1pOp : Kiln_UnaryOp<"log1p", Kiln_FloatTensor> {
  let summary = "elementwise log(1 + x)";
}
def Kiln_TanhOp : Kiln_UnaryOp<"tanh", Kiln_FloatTensor> {
  let summary = "elementwise hyperbolic tangent";
}
def Kiln_SqrtOp : Kiln_UnaryOp<"sqrt", Kiln_FloatTensor> {
  let summary = "elementwise square root";
}
def Kiln_RsqrtOp : Kiln_UnaryOp<"rsqrt", Kiln_FloatTensor> {
  let summary = "elementwise 1 / sqrt(x)";
}
def Kiln_LogisticOp : Kiln_UnaryOp<"logistic", Kiln_FloatTensor> {
  let summary = "elementwise 1 / (1 + e^-x)";
}
def Kiln_ErfOp : Kiln_UnaryOp<"erf", Kiln_FloatTensor> {
  let summary = "elementwise error function";
}
def Kiln_FloorOp : Kiln_UnaryOp<"floor", Kiln_FloatTensor> {
  let summary = "elementwise round toward -inf";
}
def Kiln_NotOp : Kiln_UnaryOp<"not", Kiln_LogicalTensor> {
  let summary = "elementwise logical (i1) or bitwise (integer) not";
}

def Kiln_CompareOp : Kiln_Op<"compare", [Pure, Elementwise,
    AllTypesMatch<["lhs", "rhs"]>,
    InferTypeOpAdaptor]> {
  let summary = "elementwise comparison producing i1";
  let description = [{
    Ordered for floats except NE: a NaN operand makes EQ, LT, LE, GT, GE false
    and NE true.
  }];
  let arguments = (ins Kiln_ComparisonDirection:$direction,
                       Kiln_NumericTensor:$lhs, Kiln_NumericTensor:$rhs);
  let results = (outs RankedTensorOf<[I1]>:$result);
  let assemblyFormat = "$direction `,` $lhs `,` $rhs attr-dict `:` type($lhs)";
}

def Kiln_SelectOp : Kiln_Op<"select", [Pure, Elementwise,
    AllTypesMatch<["on_true", "on_false", "result"]>]> {
  let summary = "elementwise pred ? on_true : on_false";
  let arguments = (ins RankedTensorOf<[I1]>:$pred, Kiln_Tensor:$on_true,
                       Kiln_Tensor:$on_false);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $pred `,` $on_true `,` $on_false attr-dict `:` type($pred) `,` type($result)
  }];
}

def Kiln_ClampOp : Kiln_Op<"clamp", [Pure, Elementwise,
    SameOperandsAndResultType, InferTypeOpInterface]> {
  let summary = "elementwise min(max(operand, min), max)";
  let arguments = (ins Kiln_NumericTensor:$min, Kiln_NumericTensor:$operand,
                       Kiln_NumericTensor:$max);
  let results = (outs Kiln_NumericTensor:$result);
  let assemblyFormat = "$min `,` $operand `,` $max attr-dict `:` type($result)";
}

def Kiln_ConvertOp : Kiln_Op<"convert", [Pure, Elementwise]> {
  let summary = "elementwise element-type conversion";
  let arguments = (ins Kiln_Tensor:$operand);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Shape
//===----------------------------------------------------------------------===//

def Kiln_BroadcastInDimOp : Kiln_Op<"broadcast_in_dim", [Pure,
    AllElementTypesMatch<["operand", "result"]>]> {
  let summary = "broadcast an operand into a larger shape";
  let description = [{
    Operand dimension i maps to result dimension broadcast_dimensions[i]; its
    size is 1 or equal to the result's. Result dimensions not mapped repeat.
  }];
  let arguments = (ins Kiln_Tensor:$operand,
                       DenseI64ArrayAttr:$broadcast_dimensions);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $operand `,` `dims` `=` $broadcast_dimensions attr-dict `:`
    type($operand) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Kiln_ReshapeOp : Kiln_Op<"reshape", [Pure,
    AllElementTypesMatch<["operand", "result"]>]> {
  let summary = "reinterpret the row-major elements under a new shape";
  let arguments = (ins Kiln_Tensor:$operand);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Kiln_TransposeOp : Kiln_Op<"transpose", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "permute dimensions: result dim i is operand dim permutation[i]";
  let arguments = (ins Kiln_Tensor:$operand, DenseI64ArrayAttr:$permutation);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $operand `,` `perm` `=` $permutation attr-dict `:`
    type($operand) `->` type($result)
  }];
  let hasFolder = 1;
}

def Kiln_SliceOp : Kiln_Op<"slice", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "strided slice [start, limit) with positive strides";
  let arguments = (ins Kiln_Tensor:$operand, DenseI64ArrayAttr:$start_indices,
                       DenseI64ArrayAttr:$limit_indices,
                       DenseI64ArrayAttr:$strides);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $operand `,` `start` `=` $start_indices `,` `limit` `=` $limit_indices `,`
    `strides` `=` $strides attr-dict `:` type($operand) `->` type($result)
  }];
}

def Kiln_ConcatenateOp : Kiln_Op<"concatenate", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "concatenate operands along one dimension";
  let arguments = (ins Variadic<Kiln_Tensor>:$inputs, I64Attr:$dimension);
  let results = (outs Kiln_Tensor:$result);
  // `%a, %b, dim = 1`: a declarative `$inputs `,` `dim`` would read `dim` as
  // one more operand, so the operand list is parsed by hand (KilnOps.cpp).
  let assemblyFormat = [{
    custom<ConcatInputs>($inputs, $dimension) attr-dict `:`
    `(` type($inputs) `)` `->` type($result)
  }];
}

def Kiln_PadOp : Kiln_Op<"pad", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "pad with a scalar value before and after each dimension";
  let arguments = (ins Kiln_Tensor:$operand, Kiln_Tensor:$padding_value,
                       DenseI64ArrayAttr:$edge_padding_low,
                       DenseI64ArrayAttr:$edge_padding_high);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $operand `,` $padding_value `,` `low` `=` $edge_padding_low `,`
    `high` `=` $edge_padding_high attr-dict `:`
    type($operand) `,` type($padding_value) `->` type($result)
  }];
}

def Kiln_IotaOp : Kiln_Op<"iota", [Pure]> {
  let summary = "result[i0, ..., in] = i_{iota_dimension}";
  let arguments = (ins I64Attr:$iota_dimension);
  let results = (outs Kiln_NumericTensor:$result);
  let assemblyFormat = "`dim` `=` $iota_dimension attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Reductions, contractions, indexing
//===----------------------------------------------------------------------===//

def Kiln_ReduceOp : Kiln_Op<"reduce", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "reduce over a set of dimensions, which the result drops";
  let description = [{
    The initial value is given by the kind: 0 for sum, 1 for prod, -inf (or
    the type's lowest value) for max, +inf (or the highest) for min.
  }];
  let arguments = (ins Kiln_ReduceKind:$kind, Kiln_NumericTensor:$operand,
                       DenseI64ArrayAttr:$dimensions);
  let results = (outs Kiln_NumericTensor:$result);
  let assemblyFormat = [{
    $kind $operand `,` `dims` `=` $dimensions attr-dict `:`
    type($operand) `->` type($result)
  }];
}

def Kiln_DotGeneralOp : Kiln_Op<"dot_general", [Pure,
    InferTypeOpAdaptorWithIsCompatible]> {
  let summary = "general tensor contraction";
  let description = [{
    Result dimensions: the batch dimensions (in lhs_batching order), then the
    lhs dimensions that are neither batch nor contracting, then the rhs ones.
    The result has the operands' element type, or f32 where the operands are
    bf16 or f16 (XLA's preferred_element_type): the products accumulate in
    f32 and are not rounded to 16 bits, as mixed precision wants.
  }];
  let arguments = (ins Kiln_NumericTensor:$lhs, Kiln_NumericTensor:$rhs,
                       DenseI64ArrayAttr:$lhs_batching_dimensions,
                       DenseI64ArrayAttr:$rhs_batching_dimensions,
                       DenseI64ArrayAttr:$lhs_contracting_dimensions,
                       DenseI64ArrayAttr:$rhs_contracting_dimensions);
  let results = (outs Kiln_NumericTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `,` `batch` `=` $lhs_batching_dimensions `x`
    $rhs_batching_dimensions `,` `contract` `=` $lhs_contracting_dimensions `x`
    $rhs_contracting_dimensions attr-dict `:`
    type($lhs) `,` type($rhs) `->` type($result)
  }];
}

def Kiln_GatherOp : Kiln_Op<"gather", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "take slices of operand along one axis at the given indices";
  let description = [{
    result shape = operand[:axis] ++ indices ++ operand[axis+1:]. Indices are
    clamped to [0, operand[axis] - 1].
  }];
  let arguments = (ins Kiln_Tensor:$operand, Kiln_IndexTensor:$indices,
                       I64Attr:$axis);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $operand `[` $indices `]` `,` `axis` `=` $axis attr-dict `:`
    type($operand) `,` type($indices) `->` type($result)
  }];
}

def Kiln_ScatterAddOp : Kiln_Op<"scatter_add", [Pure,
    AllTypesMatch<["operand", "result"]>]> {
  let summary = "add updates into operand along one axis at the given indices";
  let description = [{
    The inverse shape relation of gather; repeated indices accumulate,
    out-of-range indices are skipped.
  }];
  let arguments = (ins Kiln_NumericTensor:$operand, Kiln_IndexTensor:$indices,
                       Kiln_NumericTensor:$updates, I64Attr:$axis);
  let results = (outs Kiln_NumericTensor:$result);
  let assemblyFormat = [{
    $operand `[` $indices `]` `,` $updates `,` `axis` `=` $axis attr-dict `:`
    type($operand) `,` type($indices) `,` type($updates)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Random numbers and constants
//===----------------------------------------------------------------------===//

def Kiln_RngUniformOp : Kiln_Op<"rng_uniform", [Pure,
    AllTypesMatch<["state", "new_state"]>]> {
  let summary = "uniform [0, 1) floats from a Philox-4x32-10 state";
  let description = [{
    state = [key, counter] as i64. Element i of the row-major result uses the
    32-bit lane (i mod 4) of Philox-4x32-10(key, counter + i div 4); the new
    state advances the counter by ceil(n / 4). docs/IR.md has the bit recipe.
  }];
  let arguments = (ins Kiln_RngStateTensor:$state);
  let results = (outs Kiln_FloatTensor:$result, Kiln_RngStateTensor:$new_state);
  let assemblyFormat = "$state attr-dict `:` type($state) `->` type($result)";
  let hasVerifier = 1;
}

def Kiln_ConstantOp : Kiln_Op<"constant", [ConstantLike, Pure,
    InferTypeOpAdaptor]> {
  let summary = "a dense constant";
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Kiln_Tensor:$result);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasFolder = 1;
  let builders = [OpBuilder<(ins "::mlir::ElementsAttr":$value), [{
    build($_builder, $_state, value.getType(), value);
  }]>];
}

//===----------------------------------------------------------------------===//
// Fused composites: ops with an exact reference definition (docs/IR.md) that
// frontends record whole, so that a backend can run them without storing
// their large intermediates; kiln-lower-attention decomposes them into
// primitives, chunk by chunk, for backends without a kernel of their own.
//===----------------------------------------------------------------------===//

class Kiln_AttentionOpBase<string mnemonic> : Kiln_Op<mnemonic, [Pure]> {
  code attentionAttrs = [{
    /// The number of random values the op draws (T · 4·ceil(B·H·S / 4)):
    /// what a frontend advances its generator state by.
    int64_t randomValuesDrawn();
  }];
  let hasVerifier = 1;
}

def Kiln_FusedAttentionOp : Kiln_AttentionOpBase<"fused_attention"> {
  let summary = "softmax(scale · q kᵀ, causal or windowed mask) with dropout, times v";
  let description = [{
    query [B, H, T, D], key and value [B, Hkv, S, D] (H a multiple of Hkv:
    grouped-query attention; query head h reads kv head h / (H / Hkv)).
    `causal` masks key j > query i (T == S); a `window` w > 0 (causal only:
    a sliding window, as Mistral's) masks key j <= i - w too, so each query
    sees at most its w latest keys. A `softcap` c > 0 (Gemma 2's) makes
    each scaled score s, before the masks, c · tanh(s / c). With `dropout`
    p > 0 each
    probability is kept (and scaled by 1 / (1 - p)) where its uniform value
    is >= p; the values come from `rng_state` as docs/IR.md says, and the
    same state regenerates them in the gradient. `row_stats` [B, H, T], f32,
    is each query row's log-sum-exp of its scaled, masked scores: what the
    gradient needs to recompute the probabilities in one pass.
  }];
  let arguments = (ins Kiln_FloatTensor:$query, Kiln_FloatTensor:$key,
                       Kiln_FloatTensor:$value,
                       Optional<Kiln_RngStateTensor>:$rng_state,
                       F64Attr:$scale, UnitAttr:$causal,
                       DefaultValuedAttr<F64Attr, "0.0">:$dropout,
                       DefaultValuedAttr<I64Attr, "0">:$window,
                       DefaultValuedAttr<F64Attr, "0.0">:$softcap);
  let results = (outs Kiln_FloatTensor:$result, Kiln_F32Tensor:$row_stats);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`,` `rng` `=` $rng_state^)? attr-dict `:`
    type($query) `,` type($key) `,` type($value)
    (`,` type($rng_state)^)? `->` type($result) `,` type($row_stats)
  }];
  let extraClassDeclaration = attentionAttrs # [{
    /// row_stats' type for `query` [B, H, T, D]: [B, H, T] f32.
    static ::mlir::RankedTensorType rowStatsType(::mlir::Value query);
  }];
}

def Kiln_FusedAttentionGradOp : Kiln_AttentionOpBase<"fused_attention_grad"> {
  let summary = "the gradients of kiln.fused_attention for a result gradient";
  let description = [{
    Same operands and attributes as the kiln.fused_attention it differentiates,
    plus that op's `result` and `row_stats` and `result_grad` (the gradient
    of its result) → the gradients of query, key and value. The
    probabilities and the dropout mask are recomputed: from `row_stats`,
    with each row's Σ_j p_j dP_j as result_grad · result (FlashAttention-2's
    backward), or from the scores alone; both agree when `result` and
    `row_stats` are the forward op's.
  }];
  let arguments = (ins Kiln_FloatTensor:$query, Kiln_FloatTensor:$key,
                       Kiln_FloatTensor:$value, Kiln_FloatTensor:$result,
                       Kiln_F32Tensor:$row_stats, Kiln_FloatTensor:$result_grad,
                       Optional<Kiln_RngStateTensor>:$rng_state,
                       F64Attr:$scale, UnitAttr:$causal,
                       DefaultValuedAttr<F64Attr, "0.0">:$dropout,
                       DefaultValuedAttr<I64Attr, "0">:$window,
                       DefaultValuedAttr<F64Attr, "0.0">:$softcap);
  let results = (outs Kiln_FloatTensor:$query_grad, Kiln_FloatTensor:$key_grad,
                      Kiln_FloatTensor:$value_grad);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $result `,` $row_stats `,` $result_grad
    (`,` `rng` `=` $rng_state^)? attr-dict `:` type($query) `,` type($key)
    `,` type($value) `,` type($result) `,` type($row_stats) `,`
    type($result_grad) (`,` type($rng_state)^)? `->` type($query_grad) `,`
    type($key_grad) `,` type($value_grad)
  }];
  let extraClassDeclaration = attentionAttrs;
}

def Kiln_FusedLinearCrossEntropyOp : Kiln_Op<"fused_linear_cross_entropy",
    [Pure]> {
  let summary = "per-row cross-entropy of hidden · weightᵀ against labels";
  let description = [{
    hidden [N, C], weight [V, C] (one float element type), labels [N]
    (i32 or i64) → loss [N] of hidden's element type: for row i, with the
    logits z_ij = hidden_i · weight_j, logsumexp_j(z_ij) − z_i,labels[i],
    and 0 where labels[i] == ignore_index. A label outside [0, V) picks no
    class (its row's loss is the logsumexp), as the one-hot composite does.
    With `softcap` c > 0 the logits are c · tanh(z / c) (Gemma 2's final
    soft cap). The logits [N, V] are never a value: a backend computes
    them a chunk of rows at a time (the lm_head of a language model and
    its loss).
  }];
  let arguments = (ins Kiln_FloatTensor:$hidden, Kiln_FloatTensor:$weight,
                       Kiln_IndexTensor:$labels, I64Attr:$ignore_index,
                       DefaultValuedAttr<F64Attr, "0.0">:$softcap);
  let results = (outs Kiln_FloatTensor:$loss);
  let assemblyFormat = [{
    $hidden `,` $weight `,` $labels attr-dict `:` type($hidden) `,`
    type($weight) `,` type($labels) `->` type($loss)
  }];
  let hasVerifier = 1;
}

def Kiln_FusedLinearCrossEntropyGradOp
    : Kiln_Op<"fused_linear_cross_entropy_grad", [Pure]> {
  let summary = "the gradients of kiln.fused_linear_cross_entropy";
  let description = [{
    The operands and attribute of the kiln.fused_linear_cross_entropy it
    differentiates, plus `loss_grad` [N] (the gradient of its result) →
    the gradients of hidden and weight: with p = softmax(hidden · weightᵀ)
    row by row, dlogits_ij = loss_grad_i · (p_ij − [j == labels[i]]) (0 on
    ignored rows), hidden_grad = dlogits · weight, weight_grad = dlogitsᵀ ·
    hidden; with `softcap` c > 0, p is the softmax of the capped logits
    and dlogits is multiplied by their derivative, 1 − tanh²(z / c). The
    probabilities are recomputed, never stored.
  }];
  let arguments = (ins Kiln_FloatTensor:$hidden, Kiln_FloatTensor:$weight,
                       Kiln_IndexTensor:$labels, Kiln_FloatTensor:$loss_grad,
                       I64Attr:$ignore_index,
                       DefaultValuedAttr<F64Attr, "0.0">:$softcap);
  let results = (outs Kiln_FloatTensor:$hidden_grad,
                      Kiln_FloatTensor:$weight_grad);
  let assemblyFormat = [{
    $hidden `,` $weight `,` $labels `,` $loss_grad attr-dict `:`
    type($hidden) `,` type($weight) `,` type($labels) `,` type($loss_grad)
    `->` type($hidden_grad) `,` type($weight_grad)
  }];
  let hasVerifier = 1;
}

def Kiln_OptimizationBarrierOp : Kiln_Op<"optimization_barrier", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "the identity on its operands, which passes may not see through";
  let description = [{
    Each result is its operand. Passes treat the results as new values: a
    computation on them is neither merged (CSE, sibling fusion) with the
    same computation on the operands nor moved before every operand is
    available. A recomputation in the backward pass reads its inputs
    through a barrier that also takes the incoming gradient, so it stays a
    recomputation (XLA's opt-barrier, as jax.checkpoint uses it). Backends
    alias each result to its operand's buffer. With `gradient_seed`, result
    0 is the gradient a backward pass starts from and operand 1 the value
    it differentiates: every op that depends on the barrier belongs to the
    backward pass (kiln-partition decides what the forward keeps for it).
  }];
  let arguments = (ins Variadic<Kiln_Tensor>:$operands,
                       UnitAttr:$gradient_seed);
  let results = (outs Variadic<Kiln_Tensor>:$results);
  let assemblyFormat = [{
    $operands attr-dict `:` type($operands)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

def Kiln_AllReduceOp : Kiln_Op<"all_reduce", [SameOperandsAndResultType,
    InferTypeOpInterface, MemoryEffects<[MemWrite]>]> {
  let summary = "the sum of a tensor over the processes of a data-parallel run";
  let description = [{
    Every process of the run computes the same program; each element of the
    result is the sum of that element of the operand over the processes (a
    process that runs alone: the operand). The declared write keeps passes
    from merging, recomputing or dropping it: each all_reduce is one
    exchange that every process makes, in the same order. f32, f64, i32
    and i64.
  }];
  let arguments = (ins Kiln_NumericTensor:$operand);
  let results = (outs Kiln_NumericTensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Fusion
//===----------------------------------------------------------------------===//

def Kiln_FusionOp : Kiln_Op<"fusion", [IsolatedFromAbove,
    SingleBlock, RecursiveMemoryEffects]> {
  let summary = "a group of ops that a backend emits as one kernel";
  let description = [{
    Created only by fusion passes. The body's block arguments take the
    operands; `kiln.yield` returns the results.
  }];
  let arguments = (ins Kiln_FusionKind:$kind, Variadic<Kiln_Tensor>:$inputs);
  let results = (outs Variadic<Kiln_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $kind `(` $inputs `)` attr-dict `:` functional-type($inputs, $results)
    $body
  }];
  let hasVerifier = 1;
}

def Kiln_YieldOp : Kiln_Op<"yield", [Pure, Terminator, ReturnLike,
    HasParent<"FusionOp">]> {
  let summary = "the results of a kiln.fusion body";
  let arguments = (ins Variadic<Kiln_Tensor>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

#endif // KILN_OPS_TD
