// A small builder of kiln ops for passes that write computations out op by
// op (the decompositions of fused composites): result types are worked out
// here, scalars are splatted with broadcast_in_dim, and every op gets the
// builder's location.
#ifndef KILN_PASSES_TENSORBUILDER_H
#define KILN_PASSES_TENSORBUILDER_H

#include "ir/KilnDialect.h"

#include "mlir/IR/Builders.h"

namespace kiln {

class TensorBuilder {
public:
  TensorBuilder(mlir::OpBuilder &builder, mlir::Location loc)
      : b_(builder), loc_(loc) {}

  static llvm::ArrayRef<int64_t> shapeOf(mlir::Value v) {
    return mlir::cast<mlir::RankedTensorType>(v.getType()).getShape();
  }
  static mlir::Type elementOf(mlir::Value v) {
    return mlir::cast<mlir::RankedTensorType>(v.getType()).getElementType();
  }

  /// `value` of `element` type in every element of `shape`.
  mlir::Value splat(double value, mlir::Type element,
                    llvm::ArrayRef<int64_t> shape);
  /// `value` like `like` (same shape and element type).
  mlir::Value splatLike(double value, mlir::Value like) {
    return splat(value, elementOf(like), shapeOf(like));
  }
  /// A dense i64 constant of the given values (1-D).
  mlir::Value i64Vector(llvm::ArrayRef<int64_t> values);

  mlir::Value slice(mlir::Value x, llvm::ArrayRef<int64_t> start,
                    llvm::ArrayRef<int64_t> limit);
  /// x[.., begin:end, ..] along `dim`; x itself when that is all of it.
  mlir::Value sliceDim(mlir::Value x, int64_t dim, int64_t begin, int64_t end);
  mlir::Value reshape(mlir::Value x, llvm::ArrayRef<int64_t> shape);
  mlir::Value transpose(mlir::Value x, llvm::ArrayRef<int64_t> perm);
  mlir::Value broadcast(mlir::Value x, llvm::ArrayRef<int64_t> shape,
                        llvm::ArrayRef<int64_t> dims);
  /// x padded with zeros: `low[d]` elements before dimension d's start and
  /// `high[d]` after its end.
  mlir::Value pad(mlir::Value x, llvm::ArrayRef<int64_t> low,
                  llvm::ArrayRef<int64_t> high);
  /// pad() with nothing before.
  mlir::Value padHigh(mlir::Value x, llvm::ArrayRef<int64_t> high);
  mlir::Value concatenate(mlir::ValueRange xs, int64_t dim);
  mlir::Value convert(mlir::Value x, mlir::Type element);
  mlir::Value iota(mlir::Type element, llvm::ArrayRef<int64_t> shape,
                   int64_t dim);

  mlir::Value dot(mlir::Value lhs, mlir::Value rhs,
                  llvm::ArrayRef<int64_t> lhsBatch,
                  llvm::ArrayRef<int64_t> rhsBatch,
                  llvm::ArrayRef<int64_t> lhsContract,
                  llvm::ArrayRef<int64_t> rhsContract);
  mlir::Value reduce(ReduceKind kind, mlir::Value x,
                     llvm::ArrayRef<int64_t> dims);

  mlir::Value add(mlir::Value a, mlir::Value b);
  mlir::Value sub(mlir::Value a, mlir::Value b);
  mlir::Value mul(mlir::Value a, mlir::Value b);
  mlir::Value div(mlir::Value a, mlir::Value b);
  mlir::Value exp(mlir::Value x);
  mlir::Value log(mlir::Value x);
  mlir::Value tanh(mlir::Value x);
  mlir::Value compare(ComparisonDirection direction, mlir::Value a,
                      mlir::Value b);
  mlir::Value select(mlir::Value pred, mlir::Value onTrue,
                     mlir::Value onFalse);
  /// (values, new state) of kiln.rng_uniform with `shape` f32 values.
  std::pair<mlir::Value, mlir::Value> rngUniform(mlir::Value state,
                                                 llvm::ArrayRef<int64_t> shape);

  mlir::OpBuilder &builder() { return b_; }
  mlir::Location loc() const { return loc_; }

private:
  mlir::OpBuilder &b_;
  mlir::Location loc_;
};

/// Rows per chunk when a decomposition splits `n` rows into chunks of at
/// most `most` rows (attention's query rows, the loss's token rows): as few
/// chunks as `most` allows, of nearly equal size, in whole GEMM tiles of 64
/// rows where that fits (rounded up, else down), so that the chunks' GEMMs
/// and rows start on tile and 16-byte boundaries and only the last chunk
/// is short. Attention's 512 query rows under 170: 4 chunks of 128, not 3
/// of 171 (whose 171- and 342-key rows were 4-byte aligned, and their
/// GEMMs ran at a fifth to a third of the f32 peak on the H100).
int64_t tiledChunkRows(int64_t n, int64_t most);

} // namespace kiln

#endif // KILN_PASSES_TENSORBUILDER_H
