// The kiln dialect: its definition, element types and enums shared by the ops.
#ifndef KILN_BASE_TD
#define KILN_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/EnumAttr.td"

def Kiln_Dialect : Dialect {
  let name = "kiln";
  let cppNamespace = "::kiln";
  let summary = "An HLO-like tensor dialect for transformer training steps";
  let description = [{
    Static shapes, ranked tensors of f32, f64, f16, bf16, i1, i32 or i64. Functions
    are `func.func`; a `kiln.donate` argument attribute marks an input whose
    buffer an output may reuse. docs/IR.md gives every op's exact semantics.
  }];
  let hasConstantMaterializer = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    /// The argument attribute that marks a donated input buffer.
    static constexpr llvm::StringLiteral kDonateAttrName = "kiln.donate";
    /// On a donated argument: the index of the result that is this
    /// argument's new value (a parameter after its update; XLA's
    /// input_output_alias). Backends write that result into the argument's
    /// buffer where they can, so the value stays where the next step
    /// expects it.
    static constexpr llvm::StringLiteral kOutputAliasAttrName =
        "kiln.output_alias";
  }];
}

// Every kiln op checks that the tensors it touches have a bounded size
// (kiln::kMaxTensorElements), before any other verifier does arithmetic on
// their shapes.
def Kiln_BoundedTensorShapes : NativeOpTrait<"BoundedTensorShapes"> {
  let cppNamespace = "::kiln::OpTrait";
}

class Kiln_Op<string mnemonic, list<Trait> traits = []>
    : Op<Kiln_Dialect, mnemonic, !listconcat([Kiln_BoundedTensorShapes], traits)>;

// Element types.
def Kiln_Float : AnyTypeOf<[F32, F64, F16, BF16]>;
def Kiln_Int : AnyTypeOf<[I32, I64]>;
def Kiln_Element : AnyTypeOf<[F32, F64, F16, BF16, I1, I32, I64]>;

def Kiln_Tensor : RankedTensorOf<[F32, F64, F16, BF16, I1, I32, I64]>;
def Kiln_FloatTensor : RankedTensorOf<[F32, F64, F16, BF16]>;
def Kiln_NumericTensor : RankedTensorOf<[F32, F64, F16, BF16, I32, I64]>;
def Kiln_SignedTensor : RankedTensorOf<[F32, F64, F16, BF16, I32, I64]>;
def Kiln_LogicalTensor : RankedTensorOf<[I1, I32, I64]>;
def Kiln_IndexTensor : RankedTensorOf<[I32, I64]>;
def Kiln_RngStateTensor : 1DTensorOf<[I64]>;
def Kiln_F32Tensor : RankedTensorOf<[F32]>;

// Enums: integer-backed, so the custom assembly prints a bare keyword
// (`kiln.compare LT, ...`, `kiln.reduce sum ...`).
def Kiln_ComparisonDirection : I32EnumAttr<"ComparisonDirection",
    "comparison direction", [
      I32EnumAttrCase<"EQ", 0>, I32EnumAttrCase<"NE", 1>,
      I32EnumAttrCase<"LT", 2>, I32EnumAttrCase<"LE", 3>,
      I32EnumAttrCase<"GT", 4>, I32EnumAttrCase<"GE", 5>]> {
  let cppNamespace = "::kiln";
}

def Kiln_ReduceKind : I32EnumAttr<"ReduceKind", "reduction kind", [
      I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"max", 1>,
      I32EnumAttrCase<"min", 2>, I32EnumAttrCase<"prod", 3>]> {
  let cppNamespace = "::kiln";
}

def Kiln_FusionKind : I32EnumAttr<"FusionKind", "fusion kind", [
      I32EnumAttrCase<"loop", 0>, I32EnumAttrCase<"reduction", 1>,
      I32EnumAttrCase<"multi_output", 2>, I32EnumAttrCase<"gemm", 3>]> {
  let cppNamespace = "::kiln";
}

#endif // KILN_BASE_TD
