// Differential tests of the CPU backend against the reference evaluator:
// every kiln op on small shapes, in every element type it takes, with NaN,
// ±Inf, -0 and denormals among the inputs. Several ops share one function
// where they can, so each test pays for one kernel compilation.
#include "BackendTestModules.h"
#include "CpuTestSupport.h"
#include "EvaluatorTestSupport.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include <cstring>

namespace kiln::testing {
namespace {

const std::vector<int64_t> kShape = {3, 37};

TEST(CpuBackend, FloatUnaryOpsMatchReference) {
  const std::vector<std::string> ops = {"neg",   "abs",      "sign", "exp",
                                        "log",   "log1p",    "tanh", "sqrt",
                                        "rsqrt", "logistic", "erf",  "floor"};
  for (DType dtype : {DType::f32, DType::f16, DType::bf16, DType::f64}) {
    SCOPED_TRACE(std::string(dtypeName(dtype)));
    std::mt19937 rng(1);
    expectMatchesReference(elementwiseModule(ops, 1, tensorType(dtype, kShape)),
                           {randomTensor(dtype, kShape, rng)});
  }
}

TEST(CpuBackend, FloatBinaryOpsMatchReference) {
  const std::vector<std::string> ops = {"add", "sub", "mul", "div",
                                        "max", "min", "pow"};
  for (DType dtype : {DType::f32, DType::f16, DType::bf16, DType::f64}) {
    SCOPED_TRACE(std::string(dtypeName(dtype)));
    std::mt19937 rng(2);
    expectMatchesReference(
        elementwiseModule(ops, 2, tensorType(dtype, kShape)),
        {randomTensor(dtype, kShape, rng), randomTensor(dtype, kShape, rng)});
  }
}

TEST(CpuBackend, IntegerOpsMatchReference) {
  const std::vector<std::string> binary = {"add", "sub", "mul", "div", "max",
                                           "min", "pow", "and", "or"};
  const std::vector<std::string> unary = {"neg", "abs", "sign", "not"};
  for (DType dtype : {DType::i32, DType::i64}) {
    SCOPED_TRACE(std::string(dtypeName(dtype)));
    std::mt19937 rng(3);
    std::string type = tensorType(dtype, kShape);
    HostTensor a = randomTensor(dtype, kShape, rng);
    HostTensor b = randomTensor(dtype, kShape, rng);
    // The wrapping corner cases: INT_MIN / -1, neg and abs of INT_MIN.
    int64_t minValue = dtype == DType::i32 ? INT32_MIN : INT64_MIN;
    a.setInt(0, minValue);
    b.setInt(0, -1);
    b.setInt(1, 0);
    b.setInt(2, -3);
    expectMatchesReference(elementwiseModule(binary, 2, type), {a, b});
    expectMatchesReference(elementwiseModule(unary, 1, type), {a});
  }
  std::mt19937 rng(4);
  std::string type = tensorType(DType::i1, kShape);
  expectMatchesReference(elementwiseModule({"and", "or"}, 2, type),
                         {randomTensor(DType::i1, kShape, rng),
                          randomTensor(DType::i1, kShape, rng)});
  expectMatchesReference(elementwiseModule({"not"}, 1, type),
                         {randomTensor(DType::i1, kShape, rng)});
}

TEST(CpuBackend, CompareSelectClampMatchReference) {
  for (DType dtype : {DType::f32, DType::f16, DType::i32, DType::f64}) {
    SCOPED_TRACE(std::string(dtypeName(dtype)));
    std::mt19937 rng(5);
    std::string t = tensorType(dtype, kShape);
    std::string p = tensorType(DType::i1, kShape);
    std::string body;
    std::vector<std::string> results, types;
    for (const char *dir : {"EQ", "NE", "LT", "LE", "GT", "GE"}) {
      body += absl::StrCat("  %", dir, " = kiln.compare ", dir,
                           ", %a, %b : ", t, "\n");
      results.push_back(absl::StrCat("%", dir));
      types.push_back(p);
    }
    body += absl::StrCat("  %s = kiln.select %LT, %a, %b : ", p, ", ", t, "\n",
                         "  %c = kiln.clamp %a, %b, %c3 : ", t, "\n");
    results.insert(results.end(), {"%s", "%c"});
    types.insert(types.end(), {t, t});
    std::string source =
        absl::StrCat("func.func @main(%a: ", t, ", %b: ", t, ", %c3: ", t,
                     ") -> (", absl::StrJoin(types, ", "), ") {\n", body,
                     "  return ", absl::StrJoin(results, ", "), " : ",
                     absl::StrJoin(types, ", "), "\n}\n");
    HostTensor a = randomTensor(dtype, kShape, rng);
    HostTensor b = randomTensor(dtype, kShape, rng);
    b.setDouble(3, a.getDouble(3)); // equal pairs
    expectMatchesReference(source, {a, b, randomTensor(dtype, kShape, rng)});
  }
}

TEST(CpuBackend, ConvertBetweenAllTypesMatchesReference) {
  const DType all[] = {DType::f32, DType::f64, DType::f16, DType::bf16,
                       DType::i1,  DType::i32, DType::i64};
  for (DType from : all) {
    SCOPED_TRACE(std::string(dtypeName(from)));
    std::string t = tensorType(from, kShape);
    std::string body;
    std::vector<std::string> results, types;
    for (DType to : all) {
      std::string rt = tensorType(to, kShape);
      body += absl::StrCat("  %", std::string(dtypeName(to)),
                           " = kiln.convert %a : ", t, " -> ", rt, "\n");
      results.push_back(absl::StrCat("%", std::string(dtypeName(to))));
      types.push_back(rt);
    }
    std::string source = absl::StrCat(
        "func.func @main(%a: ", t, ") -> (", absl::StrJoin(types, ", "),
        ") {\n", body, "  return ", absl::StrJoin(results, ", "), " : ",
        absl::StrJoin(types, ", "), "\n}\n");
    std::mt19937 rng(6);
    // Large magnitudes exercise saturation and rounding to narrow floats.
    HostTensor a = randomTensor(from, kShape, rng, isFloat(from) ? 1e10 : 9);
    HostTensor small = randomTensor(from, kShape, rng, 300);
    for (int64_t i = 0; i < a.numElements(); i += 2)
      a.setDouble(i, small.getDouble(i));
    if (from == DType::f64)
      a.setDouble(1, 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40));
    expectMatchesReference(source, {a});
  }
}

TEST(CpuBackend, ShapeOpsMatchReference) {
  for (DType dtype : {DType::f32, DType::i1, DType::bf16, DType::i64}) {
    SCOPED_TRACE(std::string(dtypeName(dtype)));
    std::string e(dtypeName(dtype));
    std::string source = absl::StrCat(
        "func.func @main(%a: tensor<2x3x4x", e, ">, %b: tensor<2x1x4x", e,
        ">, %v: tensor<", e, ">) -> (tensor<5x2x3x4x", e, ">, tensor<6x4x", e,
        ">, tensor<4x2x3x", e, ">, tensor<2x2x2x", e, ">, tensor<2x4x4x", e,
        ">, tensor<3x6x7x", e, ">, tensor<", e, ">) {\n",
        "  %bc = kiln.broadcast_in_dim %b, dims = [1, 2, 3] : tensor<2x1x4x", e,
        "> -> tensor<5x2x3x4x", e, ">\n",
        "  %rs = kiln.reshape %a : tensor<2x3x4x", e, "> -> tensor<6x4x", e,
        ">\n", "  %tr = kiln.transpose %a, perm = [2, 0, 1] : tensor<2x3x4x", e,
        "> -> tensor<4x2x3x", e, ">\n",
        "  %sl = kiln.slice %a, start = [0, 1, 0], limit = [2, 3, 4], strides "
        "= [1, 1, 2] : tensor<2x3x4x",
        e, "> -> tensor<2x2x2x", e, ">\n",
        "  %cc = kiln.concatenate %a, %b, dim = 1 : (tensor<2x3x4x", e,
        ">, tensor<2x1x4x", e, ">) -> tensor<2x4x4x", e, ">\n",
        "  %pd = kiln.pad %a, %v, low = [1, 2, 0], high = [0, 1, 3] : "
        "tensor<2x3x4x",
        e, ">, tensor<", e, "> -> tensor<3x6x7x", e, ">\n",
        "  %id = kiln.reshape %v : tensor<", e, "> -> tensor<", e, ">\n",
        "  return %bc, %rs, %tr, %sl, %cc, %pd, %id : tensor<5x2x3x4x", e,
        ">, tensor<6x4x", e, ">, tensor<4x2x3x", e, ">, tensor<2x2x2x", e,
        ">, tensor<2x4x4x", e, ">, tensor<3x6x7x", e, ">, tensor<", e,
        ">\n}\n");
    std::mt19937 rng(7);
    expectMatchesReference(source, {randomTensor(dtype, {2, 3, 4}, rng),
                                    randomTensor(dtype, {2, 1, 4}, rng),
                                    randomTensor(dtype, {}, rng)});
  }
  for (DType dtype : {DType::f32, DType::i32, DType::f16}) {
    std::string t = tensorType(dtype, {3, 5});
    expectMatchesReference(absl::StrCat("func.func @main() -> (", t, ", ", t,
                                        ") {\n  %0 = kiln.iota dim = 0 : ", t,
                                        "\n  %1 = kiln.iota dim = 1 : ", t,
                                        "\n  return %0, %1 : ", t, ", ", t,
                                        "\n}\n"),
                           {});
  }
}

TEST(CpuBackend, ReductionsMatchReference) {
  for (DType dtype : {DType::f32, DType::f16, DType::i32, DType::f64}) {
    SCOPED_TRACE(std::string(dtypeName(dtype)));
    std::string e(dtypeName(dtype));
    std::string in = absl::StrCat("tensor<3x4x50x", e, ">");
    std::string source =
        reduceModule(in, e, {"sum", "max", "min", "prod"},
                     {{"[2]", "3x4x"}, {"[0, 2]", "4x"}, {"[0, 1, 2]", ""},
                      {"[]", "3x4x50x"}});
    std::mt19937 rng(8);
    // Values near 1 keep products finite; specials still appear.
    HostTensor a = randomTensor(dtype, {3, 4, 50}, rng, 1.05);
    for (int64_t i = 0; i < a.numElements(); ++i)
      if (isFloat(dtype) && std::isfinite(a.getDouble(i)) && i % 3)
        a.setDouble(i, 1 + a.getDouble(i) / 20);
    expectMatchesReference(source, {a}, /*scale=*/600);
  }
}

/// dot_general layouts: plain, either or both operands transposed,
/// batched (also through strides), multi-contracting, vector, outer product
/// and empty (k = 0).
struct DotCase {
  std::vector<int64_t> lhs, rhs, out;
  std::string dims;
};
const DotCase kDotCases[] = {
    {{7, 33}, {33, 9}, {7, 9}, "batch = [] x [], contract = [1] x [0]"},
    {{33, 7}, {33, 9}, {7, 9}, "batch = [] x [], contract = [0] x [0]"},
    {{7, 33}, {9, 33}, {7, 9}, "batch = [] x [], contract = [1] x [1]"},
    {{33, 7}, {9, 33}, {7, 9}, "batch = [] x [], contract = [0] x [1]"},
    {{2, 5, 6}, {2, 6, 3}, {2, 5, 3},
     "batch = [0] x [0], contract = [2] x [1]"},
    {{5, 2, 6}, {6, 3, 2}, {2, 5, 3},
     "batch = [1] x [2], contract = [2] x [0]"},
    {{3, 4, 5}, {5, 4, 2}, {3, 2},
     "batch = [] x [], contract = [1, 2] x [1, 0]"},
    {{4}, {4}, {}, "batch = [] x [], contract = [0] x [0]"},
    {{3}, {2}, {3, 2}, "batch = [] x [], contract = [] x []"},
    {{3, 0}, {0, 2}, {3, 2}, "batch = [] x [], contract = [1] x [0]"},
};

TEST(CpuBackend, DotGeneralMatchesReference) {
  for (DType dtype :
       {DType::f32, DType::i32, DType::f64, DType::bf16, DType::f16}) {
    for (const DotCase &c : kDotCases) {
      SCOPED_TRACE(absl::StrCat(std::string(dtypeName(dtype)), " ", c.dims));
      std::mt19937 rng(9);
      // GEMM libraries may not keep NaN/Inf positions exact through sums
      // with other specials, so the values here are finite.
      expectMatchesReference(dotModule(tensorType(dtype, c.lhs),
                                       tensorType(dtype, c.rhs),
                                       tensorType(dtype, c.out), c.dims),
                             {randomTensor(dtype, c.lhs, rng, 4, false),
                              randomTensor(dtype, c.rhs, rng, 4, false)},
                             /*scale=*/40);
    }
  }
}

/// The GEMM thunk type of a 16-bit or f32 element type.
runtime::GemmType gemmTypeOf(DType dtype) {
  return dtype == DType::bf16  ? runtime::GemmType::bf16
         : dtype == DType::f16 ? runtime::GemmType::f16
                               : runtime::GemmType::f32;
}

/// A program whose executable must hold a GEMM thunk of `input` operands
/// into `output` (not a generated kernel), loaded with `library`.
ProgramFactory halfGemmPrograms(runtime::GemmLibrary library, DType input,
                                DType output) {
  return [library, input, output](mlir::ModuleOp module)
             -> absl::StatusOr<std::unique_ptr<runtime::Program>> {
    absl::StatusOr<runtime::Executable> exe =
        compiler::cpu::compileExecutable(module, "main");
    if (!exe.ok())
      return exe.status();
    bool halfGemm = false;
    for (const runtime::Thunk &t : exe->thunks)
      halfGemm |= t.kind == runtime::Thunk::Kind::gemm &&
                  t.gemm.input == gemmTypeOf(input) &&
                  t.gemm.output == gemmTypeOf(output);
    if (!halfGemm)
      return absl::InternalError(
          "no GEMM thunk of the 16-bit type into the result type");
    runtime::CpuRuntimeOptions options;
    options.gemm = library;
    return runtime::loadCpuProgram(std::move(*exe), options);
  };
}

// Mixed precision: bf16 or f16 operands into an f32 or a same-type result
// are a GEMM thunk on both libraries (oneDNN's matmul where the CPU has
// one of the type; else, and on OpenBLAS, operands widened to f32 and a
// 16-bit result rounded once from the f32 sums), with every transpose and
// batch layout the f32 GEMMs take, and match the reference, which sums the
// exact products in double and rounds once.
TEST(CpuBackend, SixteenBitDotsMatchReferenceOnBothLibraries) {
  for (runtime::GemmLibrary library :
       {runtime::GemmLibrary::onednn, runtime::GemmLibrary::openblas})
    for (DType in : {DType::bf16, DType::f16})
      for (DType out : {DType::f32, in})
        for (const DotCase &c : kDotCases) {
          SCOPED_TRACE(absl::StrCat(
              library == runtime::GemmLibrary::onednn ? "onednn "
                                                      : "openblas ",
              std::string(dtypeName(in)), " -> ",
              std::string(dtypeName(out)), " ", c.dims));
          std::mt19937 rng(11);
          expectMatchesReferenceOn(
              halfGemmPrograms(library, in, out),
              dotModule(tensorType(in, c.lhs), tensorType(in, c.rhs),
                        tensorType(out, c.out), c.dims),
              {randomTensor(in, c.lhs, rng, 4, false),
               randomTensor(in, c.rhs, rng, 4, false)},
              /*scale=*/40);
        }
}

/// @main(a, b, acc) = (tanh(dot(a, b) + c), c) with c = acc + acc, or
/// tanh(dot(a, b) + tanh(acc)) (`computed`): the accumulator a value that
/// outlives the add (returned) or dies in it. A barrier ties the sum, so
/// it is stored whatever fuses (the epilogue's condition) and, not being
/// returned, lives in the arena.
std::string accumulateModule(const std::string &lhs, const std::string &rhs,
                             const std::string &out, const std::string &dims,
                             bool computed) {
  std::string results = computed ? out : absl::StrCat("(", out, ", ", out, ")");
  return absl::StrCat(
      "func.func @main(%a: ", lhs, ", %b: ", rhs, ", %acc: ", out, ") -> ",
      results, " {\n  %p = kiln.dot_general %a, %b, ", dims, " : ", lhs,
      ", ", rhs, " -> ", out, "\n",
      computed ? absl::StrCat("  %c = kiln.tanh %acc : ", out, "\n")
               : "  %c = kiln.add %acc, %acc : " + out + "\n",
      "  %s = kiln.add %p, %c : ", out, "\n  %t = kiln.optimization_barrier %s : ",
      out, "\n  %r = kiln.tanh %t : ", out, "\n",
      computed ? absl::StrCat("  return %r : ", out)
               : absl::StrCat("  return %r, %c : ", out, ", ", out),
      "\n}\n");
}

/// Programs whose executable (through a serialization round trip) holds
/// one GEMM thunk that accumulates (into a viewed C with `viewedC`) and no
/// kernel for its add or pad; with `inPlace`, C written over the
/// accumulator's bytes.
ProgramFactory accumulatingGemmPrograms(runtime::GemmLibrary library,
                                        bool inPlace, bool viewedC = false) {
  return [library, inPlace, viewedC](mlir::ModuleOp module)
             -> absl::StatusOr<std::unique_ptr<runtime::Program>> {
    absl::StatusOr<runtime::Executable> exe = compileRoundTripped(module);
    if (!exe.ok())
      return exe.status();
    int accumulating = 0, adds = 0;
    for (const runtime::Thunk &t : exe->thunks) {
      if (t.kind == runtime::Thunk::Kind::kernel &&
          (t.kernel.label.find("pad") != std::string::npos ||
           (t.kernel.label.find("add") != std::string::npos &&
            t.kernel.label.find("dot_general") == std::string::npos)))
        ++adds;
      if (t.kind != runtime::Thunk::Kind::gemm || !t.gemm.accumulates())
        continue;
      ++accumulating;
      if (t.gemm.cView.packed() == viewedC)
        return absl::InternalError(viewedC ? "C is not viewed" : "C is viewed");
      const runtime::BufferSlot &acc = exe->plan.slots[t.gemm.accumulator];
      const runtime::BufferSlot &c = exe->plan.slots[t.gemm.c];
      bool shared = acc.kind == runtime::BufferSlot::Kind::arena &&
                    c.kind == runtime::BufferSlot::Kind::arena &&
                    acc.offset == c.offset;
      if (shared != inPlace)
        return absl::InternalError(absl::StrCat(
            "the accumulator ", shared ? "shares" : "does not share",
            " C's bytes"));
    }
    // acc + acc is a kernel of its own.
    if (accumulating != 1 || adds != (inPlace ? 0 : 1))
      return absl::InternalError(absl::StrCat(
          accumulating, " accumulating GEMM thunks and ", adds,
          " add kernels"));
    runtime::CpuRuntimeOptions options;
    options.gemm = library;
    return runtime::loadCpuProgram(*std::move(exe), options);
  };
}

// kiln-fuse-gemm-epilogue: dot + an f32 accumulator is one GEMM thunk that
// adds it (beta = 1; oneDNN's sum post-op for 16-bit operands), in every
// transpose and batch layout and on both libraries; C takes the
// accumulator's bytes when it dies there, else the accumulator is copied
// into C first. Matches the reference, which rounds the product to f32 and
// then adds.
TEST(CpuBackend, GemmEpilogueAddsTheAccumulatorOnBothLibraries) {
  for (runtime::GemmLibrary library :
       {runtime::GemmLibrary::onednn, runtime::GemmLibrary::openblas})
    for (DType in : {DType::f32, DType::bf16})
      for (bool computed : {false, true})
        for (const DotCase &c : kDotCases) {
          SCOPED_TRACE(absl::StrCat(
              library == runtime::GemmLibrary::onednn ? "onednn " : "openblas ",
              std::string(dtypeName(in)), computed ? " computed " : " input ",
              c.dims));
          std::mt19937 rng(13);
          expectMatchesReferenceOn(
              accumulatingGemmPrograms(library, computed),
              accumulateModule(tensorType(in, c.lhs), tensorType(in, c.rhs),
                               tensorType(DType::f32, c.out), c.dims,
                               computed),
              {randomTensor(in, c.lhs, rng, 4, false),
               randomTensor(in, c.rhs, rng, 4, false),
               randomTensor(DType::f32, c.out, rng, 4, false)},
              /*scale=*/40);
        }
}

/// @main(a, b, acc): as accumulateModule, the product padded with zeros
/// along its rows (`low` and `high` of its `rank` dims, row dim rank - 2)
/// before the add, into an accumulator of type `padded`.
std::string accumulatePaddedModule(const std::string &lhs,
                                   const std::string &rhs,
                                   const std::string &out,
                                   const std::string &padded,
                                   const std::string &dims, int64_t rank,
                                   int64_t low, int64_t high, bool computed) {
  auto pads = [&](int64_t rows) {
    std::vector<std::string> p(rank, "0");
    p[rank - 2] = absl::StrCat(rows);
    return absl::StrCat("[", absl::StrJoin(p, ", "), "]");
  };
  std::string results =
      computed ? padded : absl::StrCat("(", padded, ", ", padded, ")");
  return absl::StrCat(
      "func.func @main(%a: ", lhs, ", %b: ", rhs, ", %acc: ", padded, ") -> ",
      results, " {\n  %p = kiln.dot_general %a, %b, ", dims, " : ", lhs,
      ", ", rhs, " -> ", out,
      "\n  %zero = kiln.constant dense<0.000000e+00> : tensor<f32>\n"
      "  %z = kiln.pad %p, %zero, low = ", pads(low), ", high = ", pads(high),
      " : ", out, ", tensor<f32> -> ", padded, "\n",
      computed ? absl::StrCat("  %c = kiln.tanh %acc : ", padded, "\n")
               : "  %c = kiln.add %acc, %acc : " + padded + "\n",
      "  %s = kiln.add %z, %c : ", padded,
      "\n  %t = kiln.optimization_barrier %s : ", padded,
      "\n  %r = kiln.tanh %t : ", padded, "\n",
      computed ? absl::StrCat("  return %r : ", padded)
               : absl::StrCat("  return %r, %c : ", padded, ", ", padded),
      "\n}\n");
}

// A product padded with zeros along its rows and added (attention's key
// gradient of a chunk of queries) is one GEMM thunk whose C is a view of
// blocks of the sum's rows: in place over the accumulator, or after
// copying it whole (the rows outside the blocks are the accumulator's), on
// both libraries, batched or not, with a transposed operand, in f32 and
// bf16. Matches the reference's pad and add.
TEST(CpuBackend, GemmEpilogueAddsAPaddedProductIntoItsRows) {
  struct PaddedCase {
    std::vector<int64_t> lhs, rhs, out, padded;
    std::string dims;
    int64_t low, high;
  };
  const PaddedCase cases[] = {
      {{2, 5, 3}, {2, 5, 4}, {2, 3, 4}, {2, 8, 4},
       "batch = [0] x [0], contract = [1] x [1]", 1, 4},
      {{3, 5}, {5, 4}, {3, 4}, {6, 4}, "batch = [] x [], contract = [1] x [0]",
       0, 3},
      {{2, 3, 2, 5}, {2, 3, 4, 5}, {2, 3, 2, 4}, {2, 3, 7, 4},
       "batch = [0, 1] x [0, 1], contract = [3] x [3]", 2, 3},
  };
  for (runtime::GemmLibrary library :
       {runtime::GemmLibrary::onednn, runtime::GemmLibrary::openblas})
    for (DType in : {DType::f32, DType::bf16})
      for (bool computed : {false, true})
        for (const PaddedCase &c : cases) {
          SCOPED_TRACE(absl::StrCat(
              library == runtime::GemmLibrary::onednn ? "onednn " : "openblas ",
              std::string(dtypeName(in)), computed ? " computed " : " input ",
              c.dims));
          std::mt19937 rng(17);
          expectMatchesReferenceOn(
              accumulatingGemmPrograms(library, computed, /*viewedC=*/true),
              accumulatePaddedModule(
                  tensorType(in, c.lhs), tensorType(in, c.rhs),
                  tensorType(DType::f32, c.out),
                  tensorType(DType::f32, c.padded), c.dims,
                  static_cast<int64_t>(c.out.size()), c.low, c.high, computed),
              {randomTensor(in, c.lhs, rng, 4, false),
               randomTensor(in, c.rhs, rng, 4, false),
               randomTensor(DType::f32, c.padded, rng, 4, false)},
              /*scale=*/40);
        }
}

TEST(CpuBackend, GatherAndScatterAddMatchReference) {
  for (DType dtype : {DType::f32, DType::i64, DType::f16}) {
    SCOPED_TRACE(std::string(dtypeName(dtype)));
    std::string e(dtypeName(dtype));
    std::string source = absl::StrCat(
        "func.func @main(%a: tensor<5x3x", e,
        ">, %i: tensor<2x4xi32>, %u: "
        "tensor<2x4x3x",
        e, ">, %j: tensor<6xi64>, %w: tensor<5x6x", e, ">) -> (tensor<2x4x3x",
        e, ">, tensor<5x3x", e, ">, tensor<5x6x", e,
        ">) {\n"
        "  %g = kiln.gather %a[%i], axis = 0 : tensor<5x3x",
        e, ">, tensor<2x4xi32> -> tensor<2x4x3x", e,
        ">\n"
        "  %s = kiln.scatter_add %a[%i], %u, axis = 0 : tensor<5x3x",
        e, ">, tensor<2x4xi32>, tensor<2x4x3x", e,
        ">\n"
        "  %t = kiln.scatter_add %w[%j], %w, axis = 1 : tensor<5x6x",
        e, ">, tensor<6xi64>, tensor<5x6x", e,
        ">\n"
        "  return %g, %s, %t : tensor<2x4x3x",
        e, ">, tensor<5x3x", e, ">, tensor<5x6x", e, ">\n}\n");
    std::mt19937 rng(10);
    HostTensor indices = ints(DType::i32, {2, 4}, {0, 4, -2, 7, 1, 1, 3, 1});
    HostTensor indices2 = ints(DType::i64, {6}, {5, 0, 0, 9, -1, 2});
    expectMatchesReference(source,
                           {randomTensor(dtype, {5, 3}, rng, 4, false), indices,
                            randomTensor(dtype, {2, 4, 3}, rng, 4, false),
                            indices2,
                            randomTensor(dtype, {5, 6}, rng, 4, false)},
                           /*scale=*/8);
  }
}

TEST(CpuBackend, RngUniformMatchesReferenceBitForBit) {
  for (DType dtype : {DType::f32, DType::f16, DType::bf16, DType::f64}) {
    SCOPED_TRACE(std::string(dtypeName(dtype)));
    std::string t = tensorType(dtype, {3, 7});
    std::string source = absl::StrCat(
        "func.func @main(%s: tensor<2xi64>) -> (", t,
        ", tensor<2xi64>) {\n  %v, %n = kiln.rng_uniform %s : tensor<2xi64> "
        "-> ",
        t, "\n  return %v, %n : ", t, ", tensor<2xi64>\n}\n");
    HostTensor state =
        ints(DType::i64, {2}, {0x123456789abcdefLL, -3 /* wraps */});
    expectMatchesReference(source, {state}, /*scale=*/0);
  }
}

TEST(CpuBackend, ConstantsAndElementwiseFusionMatchReference) {
  std::string source =
      "func.func @main(%a: tensor<4x9xf32>, %b: tensor<4x9xf32>) -> "
      "(tensor<4x9xf32>, tensor<4x9xf32>, tensor<3xi32>, tensor<2xbf16>) {\n"
      "  %c = kiln.constant dense<-0.5> : tensor<4x9xf32>\n"
      "  %k = kiln.constant dense<[1, -7, 3]> : tensor<3xi32>\n"
      "  %h = kiln.constant dense<[1.5, -2.25]> : tensor<2xbf16>\n"
      "  %0:2 = kiln.fusion loop(%a, %b, %c) : (tensor<4x9xf32>, "
      "tensor<4x9xf32>, tensor<4x9xf32>) -> (tensor<4x9xf32>, "
      "tensor<4x9xf32>) {\n"
      "  ^bb0(%x: tensor<4x9xf32>, %y: tensor<4x9xf32>, %z: tensor<4x9xf32>):\n"
      "    %s = kiln.add %x, %y : tensor<4x9xf32>\n"
      "    %t = kiln.tanh %s : tensor<4x9xf32>\n"
      "    %p = kiln.mul %t, %z : tensor<4x9xf32>\n"
      "    kiln.yield %p, %s : tensor<4x9xf32>, tensor<4x9xf32>\n"
      "  }\n"
      "  return %0#0, %0#1, %k, %h : tensor<4x9xf32>, tensor<4x9xf32>, "
      "tensor<3xi32>, tensor<2xbf16>\n}\n";
  std::mt19937 rng(11);
  expectMatchesReference(source, {randomTensor(DType::f32, {4, 9}, rng),
                                  randomTensor(DType::f32, {4, 9}, rng)});
}

TEST(CpuBackend, ComparisonRuleRejectsWrongValues) {
  HostTensor a = floats(DType::f32, {3}, {1.0, NAN, INFINITY});
  HostTensor b = a;
  EXPECT_EQ(compareTensors(a, b, 1), "");
  b.setDouble(0, 1.0001);
  EXPECT_NE(compareTensors(a, b, 1), "");
  b = a;
  b.setDouble(1, 0.0);
  EXPECT_NE(compareTensors(a, b, 1), "");
  b = a;
  b.setDouble(2, -INFINITY);
  EXPECT_NE(compareTensors(a, b, 1), "");
}

/// Distance in units in the last place between two finite floats.
int64_t ulpDistance(float a, float b) {
  auto ordered = [](float f) {
    int32_t i;
    std::memcpy(&i, &f, 4);
    return i < 0 ? int64_t{INT32_MIN} - i : int64_t{i};
  };
  return std::llabs(ordered(a) - ordered(b));
}

TEST(CpuBackend, PolynomialApproximationsStayWithinFewUlpOfLibm) {
  // A sweep over the normal f32 range each function is used in.
  const int64_t n = 1 << 16;
  HostTensor x(DType::f32, {n});
  for (int64_t i = 0; i < n; ++i) {
    double t = static_cast<double>(i) / n;
    x.setDouble(i, (i % 2 ? -1 : 1) * std::exp(-20 + 24.5 * t));
  }
  struct Fn {
    const char *op;
    double (*libm)(double);
    int64_t maxUlp;
  };
  const Fn fns[] = {
      {"exp", [](double v) { return std::exp(v); }, 3},
      {"log", [](double v) { return std::log(v); }, 3},
      {"log1p", [](double v) { return std::log1p(v); }, 3},
      {"tanh", [](double v) { return std::tanh(v); }, 4},
      {"erf", [](double v) { return std::erf(v); }, 4},
      {"logistic", [](double v) { return 1 / (1 + std::exp(-v)); }, 3},
  };
  std::vector<std::string> ops;
  for (const Fn &f : fns)
    ops.push_back(f.op);
  ParsedModule parsed =
      parseModule(elementwiseModule(ops, 1, tensorType(DType::f32, {n})));
  auto program = compiler::cpu::createCpuProgram(*parsed.module, "main");
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  auto results =
      (*program)->run(runtime::inputList(runtime::ProgramInput::borrow(x)));
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  for (size_t k = 0; k < ops.size(); ++k) {
    int64_t worst = 0;
    double worstAt = 0;
    for (int64_t i = 0; i < n; ++i) {
      double v = x.getDouble(i);
      double exact = fns[k].libm(v);
      float expected = static_cast<float>(exact);
      if (std::isnan(exact) || !std::isfinite(expected) ||
          std::fabs(expected) < 1.2e-38)
        continue; // outside the domain or the normal range
      int64_t d =
          ulpDistance(static_cast<float>((*results)[k].getDouble(i)), expected);
      if (d > worst) {
        worst = d;
        worstAt = v;
      }
    }
    EXPECT_LE(worst, fns[k].maxUlp) << ops[k] << " at x = " << worstAt;
    std::printf("%-8s max error %lld ulp (at %g)\n", ops[k].c_str(),
                static_cast<long long>(worst), worstAt);
  }
}

} // namespace
} // namespace kiln::testing
