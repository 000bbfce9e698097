// The lazy-tensor frontend's public API: `kiln::Tensor`, a thin handle to a
// lazy node (a pending computation) or to device data; reverse-mode autograd
// over those nodes; `kiln::step()`, which compiles (or finds in a cache) and
// runs everything pending as one graph; generators; options and metrics.
// Ops record nodes and check shapes and dtypes at the call: a user's mistake
// throws kiln::Error naming the op and the shapes, never later at step().
//
// A training step:
//   Tensor loss = cross_entropy(model(x), y);     // records nodes only
//   loss.backward();                               // gradient nodes
//   { NoGradGuard g; p.assign_(p - lr * p.grad()); p.zero_grad(); }
//   kiln::step();                                  // one compiled graph
//   log(loss.item());                              // data now: no sync
// with `lr = Tensor::scalar(value)` so a schedule never recompiles.
//
// Naming: the user-facing methods follow PyTorch (`from_host`,
// `requires_grad_`, `assign_`, `log_softmax`), so models read like their
// PyTorch originals; everything else follows the project style. Not
// thread-safe: one thread traces and steps. kiln::Error's type information
// is emitted by the library (built with RTTI), so code built with -fno-rtti
// can still catch it by type.
#ifndef KILN_FRONTENDS_LAZY_TENSOR_H
#define KILN_FRONTENDS_LAZY_TENSOR_H

#include "support/HostTensor.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

/// A user's mistake in the tensor API (a shape, a dtype, a bad argument),
/// thrown at the call that made it. The message names the op and the values,
/// e.g. "matmul: shapes [2, 3] and [4, 5] cannot be multiplied".
class Error : public std::runtime_error {
public:
  explicit Error(const std::string &message);
  ~Error() override;
};

/// A step that does not fit: the device's memory (or
/// KILN_DEVICE_MEMORY_LIMIT's cap on it) ran out, or the step cannot be
/// planned within Options::memoryBudgetBytes. torch.OutOfMemoryError's
/// counterpart, so that a search for the batch that fits (kiln-bench's)
/// tells it from other errors by type.
class OutOfMemoryError : public Error {
public:
  using Error::Error;
  ~OutOfMemoryError() override;
};

using Shape = std::vector<int64_t>;

/// Where a tensor's data lives. Host memory is the CPU device's memory; the
/// reference and cpu backends both run there.
enum class Device : uint8_t { cpu };

namespace detail {
struct TensorImpl;
} // namespace detail

class Generator;

/// A handle to a tensor: copies share the same tensor (like torch.Tensor).
/// Dimension arguments may be negative (counted from the end).
class Tensor {
public:
  /// An undefined tensor (`defined()` is false), e.g. a gradient not yet set.
  Tensor();

  //===--- Creation -------------------------------------------------------===//

  /// host tensor → device data (a graph input leaf, never an IR constant).
  static Tensor from_host(HostTensor value, bool requires_grad = false);
  /// Row-major values + shape → device data of `dtype`.
  static Tensor from_vector(const std::vector<double> &values, Shape shape,
                            DType dtype = DType::f32,
                            bool requires_grad = false);
  /// value → a 0-d device-data tensor: an input of the graph, not a constant,
  /// so a value that changes every step (learning rate, step counter, loss
  /// scale) never causes a recompilation.
  static Tensor scalar(double value, DType dtype = DType::f32);
  /// Lazy constants computed on the device.
  static Tensor zeros(Shape shape, DType dtype = DType::f32);
  static Tensor ones(Shape shape, DType dtype = DType::f32);
  static Tensor full(Shape shape, double value, DType dtype = DType::f32);
  /// [0, end) or [start, end) by step, 1-d, computed on the device.
  static Tensor arange(int64_t end, DType dtype = DType::i64);
  static Tensor arange(int64_t start, int64_t end, int64_t step = 1,
                       DType dtype = DType::i64);
  /// Uniform [0, 1) / standard normal (Box–Muller) values from `generator`
  /// (default_generator() when null); advances the generator's state.
  static Tensor rand(Shape shape, DType dtype = DType::f32,
                     Generator *generator = nullptr);
  static Tensor randn(Shape shape, DType dtype = DType::f32,
                      Generator *generator = nullptr);

  //===--- Properties -----------------------------------------------------===//

  bool defined() const { return impl_ != nullptr; }
  DType dtype() const;
  const Shape &shape() const;
  /// The rank.
  int64_t dim() const;
  /// The size of dimension `d` (negative counts from the end).
  int64_t size(int64_t d) const;
  int64_t numel() const;
  Device device() const { return Device::cpu; }
  /// True while the tensor's value is a pending computation (not yet run by
  /// step() or a sync).
  bool is_pending() const;
  /// "Tensor<2x3xf32, pending>".
  std::string str() const;
  /// True when both handles refer to the same tensor.
  bool is_same(const Tensor &other) const { return impl_ == other.impl_; }

  //===--- Host transfers -------------------------------------------------===//

  /// device → host copy. A pending tensor forces a sync first (it runs
  /// everything pending, as step() does, and counts as a forced sync).
  HostTensor to_host() const;
  /// The value in host memory without a copy (same sync rule as
  /// to_host()): what a writer of files reads, so that saving a model
  /// does not hold a second copy of it. Valid while this tensor lives and
  /// keeps its value (until it dies, is assigned, or a step replaces it).
  const HostTensor &host_data() const;
  /// The row-major values as doubles (same sync rule as to_host()).
  std::vector<double> to_vector() const;
  /// The value of a one-element tensor (same sync rule as to_host()).
  double item() const;

  //===--- Autograd -------------------------------------------------------===//

  bool requires_grad() const;
  /// Marks a leaf as a parameter whose gradient backward() accumulates.
  /// Throws on a non-leaf (a result of ops on tensors requiring grad).
  Tensor &requires_grad_(bool requires_grad = true);
  /// True for tensors not produced by ops on tensors requiring grad.
  bool is_leaf() const;
  /// The accumulated gradient (undefined until a backward() reaches this leaf).
  Tensor grad() const;
  /// Replaces the accumulated gradient (undefined clears it).
  void set_grad(const Tensor &grad);
  /// Clears the gradient (PyTorch's set_to_none=True).
  void zero_grad();
  /// The same value cut from autograd (gradients do not flow through it).
  Tensor detach() const;
  /// Reverse mode from this one-element tensor: adds d(this)/d(leaf) to the
  /// grad() of every leaf that requires grad and that this depends on.
  /// Must run before this tensor's graph is executed by step() or a sync.
  void backward() const;
  /// The same with an explicit gradient of this tensor's shape.
  void backward(const Tensor &grad_output) const;

  //===--- In-place update ------------------------------------------------===//

  /// Makes `value` (same shape and dtype) this tensor's next value, keeping
  /// this tensor's identity: how parameters and optimizer state update. At
  /// step() the old buffer is donated when nothing live still needs it.
  /// The tensor's requires_grad flag is kept; `value` is detached.
  Tensor &assign_(const Tensor &value);
  /// Replaces the value of a leaf that does not require grad with `value`
  /// of the same shape and any dtype (PyTorch's `p.data = v`): how a frozen
  /// parameter changes its storage type. Every handle sees the new value
  /// and dtype; `value` is detached.
  Tensor &set_data_(const Tensor &value);

  //===--- Elementwise ----------------------------------------------------===//

  /// Element-type conversion (identity when already `dtype`).
  Tensor to(DType dtype) const;
  Tensor neg() const;
  Tensor abs() const;
  Tensor exp() const;
  Tensor log() const;
  Tensor tanh() const;
  Tensor sqrt() const;
  Tensor rsqrt() const;
  Tensor sigmoid() const;
  Tensor relu() const;
  /// GELU, tanh approximation (GPT-2's "gelu_new").
  Tensor gelu() const;
  Tensor pow(double exponent) const;
  Tensor pow(const Tensor &exponent) const;
  Tensor maximum(const Tensor &other) const;
  Tensor minimum(const Tensor &other) const;
  Tensor clamp(double lo, double hi) const;
  /// Comparisons (broadcasting) → i1 tensors.
  Tensor eq(const Tensor &other) const;
  Tensor ne(const Tensor &other) const;
  Tensor lt(const Tensor &other) const;
  Tensor le(const Tensor &other) const;
  Tensor gt(const Tensor &other) const;
  Tensor ge(const Tensor &other) const;
  /// Elements where the i1 `mask` (broadcast) is true become `value`.
  Tensor masked_fill(const Tensor &mask, double value) const;

  //===--- Reductions -----------------------------------------------------===//

  /// Over `dims` (empty: all dimensions); `keepdim` keeps them as size 1.
  Tensor sum(std::vector<int64_t> dims = {}, bool keepdim = false) const;
  Tensor mean(std::vector<int64_t> dims = {}, bool keepdim = false) const;
  Tensor max(std::vector<int64_t> dims = {}, bool keepdim = false) const;
  /// The (first) index of the maximum along `dim`, as i64, a NaN counting
  /// as the maximum (PyTorch's rule); not differentiable. An empty `dim`
  /// throws.
  Tensor argmax(int64_t dim, bool keepdim = false) const;

  //===--- Shape ----------------------------------------------------------===//

  /// Row-major reshape; one dimension may be -1 (inferred).
  Tensor reshape(Shape shape) const;
  /// Same as reshape (lazy tensors have no strides to alias).
  Tensor view(Shape shape) const { return reshape(std::move(shape)); }
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  /// Result dimension i is this tensor's dimension dims[i].
  Tensor permute(std::vector<int64_t> dims) const;
  /// [start, end) by step along `dim` (Python rules: negative start/end count
  /// from the end; both are clamped to the dimension).
  Tensor slice(int64_t dim, int64_t start, int64_t end, int64_t step = 1) const;
  /// Broadcast to `shape` (NumPy rules; -1 keeps a dimension).
  Tensor expand(Shape shape) const;
  Tensor unsqueeze(int64_t dim) const;
  /// Removes dimension `dim`, which must have size 1.
  Tensor squeeze(int64_t dim) const;
  /// Merges dimensions [start, end] into one.
  Tensor flatten(int64_t start = 0, int64_t end = -1) const;
  /// Consecutive pieces of `size` along `dim` (the last may be smaller),
  /// e.g. splitting a fused qkv projection.
  std::vector<Tensor> split(int64_t size, int64_t dim) const;
  /// Pads with `value`: low[i] before and high[i] after dimension i.
  Tensor pad(std::vector<int64_t> low, std::vector<int64_t> high,
             double value = 0) const;

  //===--- Contractions and composites ------------------------------------===//

  /// [.., m, k] x [.., k, n] → [.., m, n] with batch broadcasting; 1-d
  /// operands as in NumPy. Lowers to dot_general.
  Tensor matmul(const Tensor &other) const;
  /// [b, m, k] x [b, k, n] → [b, m, n].
  Tensor bmm(const Tensor &other) const;
  Tensor softmax(int64_t dim) const;
  Tensor log_softmax(int64_t dim) const;

  /// Internal: the implementation behind the handle (for the frontend's own
  /// files, not for users).
  const std::shared_ptr<detail::TensorImpl> &impl() const { return impl_; }
  explicit Tensor(std::shared_ptr<detail::TensorImpl> impl);

private:
  std::shared_ptr<detail::TensorImpl> impl_;
};

//===--- Arithmetic with NumPy broadcasting (and scalars) -----------------===//
// A scalar operand becomes a constant of the tensor's dtype (use
// Tensor::scalar for values that change between steps).

Tensor operator+(const Tensor &a, const Tensor &b);
Tensor operator-(const Tensor &a, const Tensor &b);
Tensor operator*(const Tensor &a, const Tensor &b);
Tensor operator/(const Tensor &a, const Tensor &b);
Tensor operator+(const Tensor &a, double b);
Tensor operator-(const Tensor &a, double b);
Tensor operator*(const Tensor &a, double b);
Tensor operator/(const Tensor &a, double b);
Tensor operator+(double a, const Tensor &b);
Tensor operator-(double a, const Tensor &b);
Tensor operator*(double a, const Tensor &b);
Tensor operator/(double a, const Tensor &b);
Tensor operator-(const Tensor &a);

//===--- Data parallelism -------------------------------------------------===//
// A launcher (mpirun -np N) starts N copies of a program, each with its own
// share of the data; they agree on their parameters by summing gradients
// (torch.distributed's model). Alone, a program is rank 0 of 1.

/// The processes of this run (1 when it runs alone) and this one's place
/// among them. The first call joins the others (runtime/World.h); a
/// process that cannot (no MPI plugin, a malformed launcher variable)
/// throws kiln::Error saying why.
int world_size();
int world_rank();
/// x summed over the processes, as torch.distributed.all_reduce(x, SUM),
/// recorded into the step like any op (kiln.all_reduce): it runs with the
/// step's graph. f32, f64, i32 or i64; its gradient is the sum of the
/// processes' gradients.
Tensor all_reduce(const Tensor &x);
/// Process `root`'s x on every process, as torch.distributed.broadcast(x,
/// src=root); the others' x gives only the shape and dtype. Recorded as an
/// all_reduce to which the other processes add zeros (XLA decomposes
/// all-gathers the same way): exact, at twice a broadcast's traffic. Any
/// float or 32/64-bit integer dtype (16-bit floats travel as f32). x itself
/// when the process runs alone.
Tensor broadcast(const Tensor &x, int root);
/// Waits until every process has called it (torch.distributed.barrier):
/// between steps, e.g. so that no process reads a folder before the one
/// writing it is done. Pending work is not run. Nothing alone.
void barrier();
/// Ends the run: this process and, in a data-parallel run, every other
/// one (MPI_Abort), with `exit_code`, after flushing stdout and stderr. For
/// a process that fails: the others would wait for it in their next sum.
[[noreturn]] void abort_processes(int exit_code);

/// cond (i1) ? a : b, broadcasting all three.
Tensor where(const Tensor &cond, const Tensor &a, const Tensor &b);
/// Concatenation along `dim`; all other dimensions and dtypes must agree.
Tensor cat(const std::vector<Tensor> &tensors, int64_t dim);
/// Stacks equal-shaped tensors along a new dimension `dim`.
Tensor stack(const std::vector<Tensor> &tensors, int64_t dim);
Tensor matmul(const Tensor &a, const Tensor &b);
Tensor bmm(const Tensor &a, const Tensor &b);
Tensor softmax(const Tensor &x, int64_t dim);
Tensor log_softmax(const Tensor &x, int64_t dim);
Tensor gelu(const Tensor &x);
Tensor relu(const Tensor &x);
/// Normalizes over the last `normalized_dims` dimensions:
/// (x - mean) / sqrt(var + eps) * weight + bias (biased variance; weight and
/// bias may be undefined, else they have the normalized shape).
Tensor layer_norm(const Tensor &x, const Tensor &weight, const Tensor &bias,
                  double eps = 1e-5, int64_t normalized_dims = 1);
/// weight [V, D], integer indices [...] → [..., D] (a gather on axis 0).
/// Indices the host holds must be in [0, V) (throws otherwise, as PyTorch's
/// IndexError); computed ones are not read, and the device clamps them.
Tensor embedding(const Tensor &weight, const Tensor &indices);
/// logits [N, C] (or [C]), integer targets [N] → mean over targets that are
/// not `ignore_index` of -log_softmax(logits)[target] (a 0-d tensor; NaN when
/// every target is ignored, as in PyTorch). Targets the host holds must be
/// in [0, C) or ignore_index (throws otherwise); computed ones are not read.
Tensor cross_entropy(const Tensor &logits, const Tensor &targets,
                     int64_t ignore_index = -100);
/// cross_entropy(input · weightᵀ, targets, ignore_index) for input [N, C],
/// weight [V, C] (a language model's lm_head and its loss), recorded as one
/// op (kiln.fused_linear_cross_entropy) that backends run a chunk of rows
/// at a time: the [N, V] logits are never stored, and the gradient
/// recomputes them. Same value and gradients as the two-step form. With
/// softcap > 0 the logits are softcap · tanh(logits / softcap) (Gemma 2's
/// final soft cap), inside the op.
Tensor linear_cross_entropy(const Tensor &input, const Tensor &weight,
                            const Tensor &targets, int64_t ignore_index = -100,
                            double softcap = 0);
/// Zeroes each element with probability p and scales the rest by 1/(1-p);
/// the identity when !training or p == 0. Random bits come from `generator`
/// (default_generator() when null), whose device state advances: dropout is
/// deterministic for a seed and never bakes a constant mask.
Tensor dropout(const Tensor &x, double p, bool training = true,
               Generator *generator = nullptr);
/// PyTorch's F.scaled_dot_product_attention: query [B, H, T, D], key and
/// value [B, Hkv, S, D] (H a multiple of Hkv: grouped-query attention) →
/// softmax(scale · q kᵀ, with key j > query i masked when is_causal), with
/// dropout p, times v: [B, H, T, D]. scale defaults to 1/sqrt(D). Recorded
/// as one op (kiln.fused_attention), which backends run without storing
/// the [T, S] probabilities; its gradient recomputes them and regenerates
/// the dropout mask from the generator's state (default_generator() when
/// null), which advances as dropout's does.
Tensor scaled_dot_product_attention(const Tensor &query, const Tensor &key,
                                    const Tensor &value, double dropout_p = 0,
                                    bool is_causal = false,
                                    std::optional<double> scale = std::nullopt,
                                    Generator *generator = nullptr);
/// Causal attention within a sliding window: query i sees keys (i - window,
/// i], its `window` latest (Mistral's, Phi-3's and Qwen's sliding-window
/// layers, as transformers masks them; flash-attn's window_size (window -
/// 1, 0)). Otherwise scaled_dot_product_attention with is_causal; a window
/// as long as the sequence is plain causal attention.
Tensor sliding_window_attention(const Tensor &query, const Tensor &key,
                                const Tensor &value, int64_t window,
                                double dropout_p = 0,
                                std::optional<double> scale = std::nullopt,
                                Generator *generator = nullptr);
/// Causal attention whose scaled scores s are capped at softcap · tanh(s /
/// softcap) before the mask and the softmax (Gemma 2's
/// attn_logit_softcapping; softcap > 0), within `window` (0: none) as
/// sliding_window_attention. The same fused op, with the cap as an
/// attribute; backends write it out in chunks (no attention kernel has
/// the cap).
Tensor softcapped_attention(const Tensor &query, const Tensor &key,
                            const Tensor &value, double softcap,
                            int64_t window = 0, double dropout_p = 0,
                            std::optional<double> scale = std::nullopt,
                            Generator *generator = nullptr);

//===--- Random numbers ---------------------------------------------------===//

/// A counter-based (Philox) random stream whose state [key, counter] is a
/// device tensor: each use reads the state and assigns the advanced state, so
/// the state is a graph input and output, never a constant.
class Generator {
public:
  explicit Generator(uint64_t seed = 0);
  /// Resets the state to [seed, 0].
  void manual_seed(uint64_t seed);
  /// Uniform [0, 1) values of `shape` (f32, f16, bf16; f64 converts from
  /// f32); advances the state.
  Tensor uniform(Shape shape, DType dtype = DType::f32);
  /// The current state: an i64 tensor of shape [2].
  const Tensor &state() const { return state_; }
  /// The current state, then the state advanced past `values` values: for
  /// ops that draw their own random values from a state (fused attention).
  Tensor take_state(int64_t values);

private:
  Tensor state_;
};

/// The process-wide generator used when none is given.
Generator &default_generator();
/// Reseeds default_generator().
void manual_seed(uint64_t seed);

//===--- Grad mode --------------------------------------------------------===//

/// While alive, ops record no autograd information (results do not require
/// grad), as torch.no_grad(). Nests.
class NoGradGuard {
public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard &) = delete;
  NoGradGuard &operator=(const NoGradGuard &) = delete;

private:
  bool previous_;
};

/// False inside a NoGradGuard.
bool is_grad_enabled();

//===--- Execution --------------------------------------------------------===//

enum class Backend : uint8_t { reference, cpu, cuda };

/// "reference" | "cpu" | "cuda".
std::string_view backendName(Backend backend);

/// How ops run. `graph` (the default) records them lazily and compiles what
/// is pending into one graph at step(); `eager` runs each primitive op at
/// once as a single-op kernel compiled once per (op, attributes, operand
/// types): the baseline without the compiler (PyTorch eager's role), where
/// buffers die with their tensors and step() only commits assign_ updates.
enum class Mode : uint8_t { graph, eager };

/// How step() compiles. Read from the environment once, at the edge, by
/// options_from_env(); the library itself never reads environment variables.
struct Options {
  /// The backend compiled graphs run on: native CPU code by default; the
  /// reference evaluator stays selectable (KILN_BACKEND=reference), and an
  /// NVIDIA GPU is KILN_BACKEND=cuda.
  Backend backend = Backend::cpu;
  /// cuda: the architecture kernels are built for (KILN_CUDA_ARCH, sm_80 |
  /// sm_90) and TF32 GEMMs (KILN_TF32=1; exact f32 by default).
  std::string cudaArch = "sm_90";
  bool tf32 = false;
  /// Mixed precision: bf16 (KILN_BF16=1, kiln-train's --bf16) or f16
  /// (KILN_FP16=1, --fp16) makes the compiler run every f32 matrix product
  /// in that type (16-bit inputs, f32 sums, a 16-bit result widened back
  /// to f32, as PyTorch's autocast); weights, optimizer state and
  /// everything else stay f32 (cpu and cuda backends). f32: off. f16's
  /// range (at most 65504) asks for loss scaling (nn::GradScaler).
  DType productType = DType::f32;
  /// When not empty, every distinct graph the run traces is written there
  /// once as canonical text, `graph-<hash>.mlir`, with a line in
  /// `manifest.jsonl` (its cache key and graph tag): the input of
  /// `kilnc precompile`. (kiln-train's --dump_graphs sets this field.)
  std::string dumpDir;
  /// When not empty (KILN_DUMP_DIR), every graph compiled for the cpu
  /// backend is written after each compiler pass, as
  /// `graph-<hash>/NN-<pass>.mlir` (XLA's --xla_dump_to).
  std::string passDumpDir;
  /// The most bytes a compiled step may need at its planned peak (arena,
  /// inputs, fresh outputs; cpu backend); 0: no budget. A graph over it
  /// fails to compile, naming the largest buffers at the peak.
  uint64_t memoryBudgetBytes = 0;
  /// The compiler's save/recompute partition (kiln-partition): the backward
  /// pass recomputes cheap forward values instead of keeping them.
  /// KILN_PARTITION=0 turns it off (to measure what it saves).
  bool partition = true;
  /// When not empty, the persistent compile cache's directory (cpu backend).
  std::string cacheDir;
  /// Look up only: never store into cacheDir (secondary workers).
  bool cacheReadOnly = false;
  /// The cache's size cap in bytes (0: the cache's default).
  uint64_t cacheMaxBytes = 0;
  /// Graph or eager execution (KILN_MODE).
  Mode mode = Mode::graph;
  /// The CPU runtime's memory-plan check (KILN_POISON_DEAD_BUFFERS=1):
  /// dead arena bytes are filled with NaN after every kernel, so a plan
  /// that reuses memory too early changes results. Slow; for tests.
  /// Changing it drops the compiled programs (they are reloaded with it).
  bool poisonDeadBuffers = false;
  /// Numerics check (KILN_CHECK_NUMERICS=1), for debugging: every node
  /// records where the model code built it, lowered ops carry that as
  /// their location, and a step whose outputs hold a NaN or an Inf throws
  /// kiln::Error naming the first op that made one (re-run op by op on the
  /// reference evaluator), its location and its call site; in eager mode
  /// each kernel's result is checked. Off: no cost (docs/DEBUGGING.md).
  bool checkNumerics = false;
  /// Profiling (KILN_PROFILE=trace.json): every program run records its
  /// thunks' times; at exit the runs are written there as a Chrome /
  /// Perfetto trace and a per-thunk summary goes to stderr (see profile).
  std::string profilePath;
};

/// KILN_BACKEND ("reference" | "cpu" | "cuda"), KILN_CUDA_ARCH, KILN_TF32=1,
/// KILN_BF16=1, KILN_FP16=1,
/// KILN_DUMP_GRAPHS, KILN_DUMP_DIR,
/// KILN_CACHE_DIR, KILN_CACHE_READONLY=1, KILN_MODE ("graph" | "eager"),
/// KILN_POISON_DEAD_BUFFERS=1, KILN_CHECK_NUMERICS=1, KILN_PARTITION=0 and
/// KILN_PROFILE=PATH → Options; throws
/// kiln::Error on an unknown backend or mode name.
Options options_from_env();
/// Names the graphs traced from now on in the graph dump's manifest
/// ("train step", "eval step", "first step", ...); the default is "step".
void set_graph_tag(std::string_view tag);
/// Replaces the options (the graph cache is kept: its key includes the
/// backend). A change of mode first runs step() in the old mode, so nothing
/// pending crosses over.
void set_options(const Options &options);
/// Switches graph/eager mode as set_options() does.
void set_mode(Mode mode);
Mode mode();
const Options &options();
void set_backend(Backend backend);
/// Throws kiln::Error saying what is missing when `backend` cannot run on
/// this machine (cuda: no driver, no GPU); a tool calls it before it
/// builds a model, so a missing GPU costs nothing.
void check_backend_available(Backend backend);
/// "reference" | "cpu"; throws kiln::Error on another name.
void set_backend(std::string_view name);

/// torch_xla's mark_step: collects every live tensor with a pending
/// computation, builds one graph with the device-data leaves in a canonical
/// order, finds its compiled program in the cache by structural hash (or
/// lowers and compiles it), runs it and makes those tensors device data.
/// Throws kiln::Error when compiling or running fails.
void step();

/// Drops every compiled program (the next step() of each graph compiles).
void clear_graph_cache();

//===--- Planning a step without running it (Planning.cpp) ----------------===//

/// The graph step() would run now, compiled as far as its memory plan (no
/// code generated, nothing loaded or run) → its planned peak bytes (arena,
/// inputs, fresh outputs), or nullopt when it stays over
/// options().memoryBudgetBytes after recomputation. Pending computations
/// stay pending; 0 when nothing is pending. Throws kiln::Error in eager
/// mode or on the reference backend (nothing to plan) and when compiling
/// fails otherwise. When it is over the budget and `overBudget` is given,
/// that receives the planner's account: the smallest peak it reached and
/// the largest buffers live there.
std::optional<uint64_t> plan_step(std::string *overBudget = nullptr);

/// What a traced step needs kept alive until it is planned: its loss, a
/// probe optimizer and that optimizer's state.
using TracedStep = std::shared_ptr<void>;

/// Runs `trace` (ops on lazy tensors: one training step at some batch
/// size), plans the step (plan_step) while what `trace` returned is alive,
/// then puts every tensor that was live before back as it was (its value,
/// gradient and pending assignment): nothing `trace` did remains, also when
/// it throws. `overBudget` as plan_step's.
std::optional<uint64_t> plan_traced(const std::function<TracedStep()> &trace,
                                    std::string *overBudget = nullptr);

/// The largest batch in [1, most] whose step, traced by `traceStep(batch)`,
/// plans within options().memoryBudgetBytes (plan_traced) → 0 when batch 1
/// does not fit. The first probe is `first` (clamped to [1, most]): the
/// batch a caller expects to fit (auto_find_batch_size's asked batch: one
/// probe when it does), or 1 to climb by doubling from below, which never
/// plans more than twice the answer. Then a bisection, for a peak that
/// grows with the batch. `report(batch, peak)` sees each probe (nullopt:
/// over the budget). Throws kiln::Error without a budget. Hugging Face's
/// auto_find_batch_size without the out-of-memory errors.
int64_t largest_planned_batch(
    int64_t most, int64_t first,
    const std::function<TracedStep(int64_t)> &traceStep,
    const std::function<void(int64_t, std::optional<uint64_t>)> &report = {});

/// The host memory this process holds that is not tensor data: its
/// resident set less the resident pages of tensor storage and compiled
/// programs' arenas (residentMappedBytes): code, libraries, the compiler's
/// own state, the data set, small allocations. A step's plan counts tensors
/// only, so where device memory is the host's (the cpu backend) a budget
/// for the whole process, which is what a job is measured by, leaves the
/// plan this much less. 0 where the resident set cannot be read (Linux's
/// /proc/self/statm).
uint64_t memory_outside_plans();

/// The memory a step's plan may take on this machine when no budget was
/// given: what the backend's programs may still allocate (the GPU's free
/// memory, within KILN_DEVICE_MEMORY_LIMIT, on cuda; the host's available
/// memory on cpu) less 128 MiB for what runs hold outside their plans (the
/// GEMM and attention workspaces, kept outputs). Throws kiln::Error when it
/// cannot be known (no GPU, no /proc/meminfo). What kiln-train's
/// --auto_find_batch_size plans within, as the Trainer's flag fills the GPU.
uint64_t memory_for_plans();

//===--- Metrics ----------------------------------------------------------===//

namespace metrics {

/// One compilation and why it happened.
struct CompileRecord {
  uint64_t graphHash;
  /// "first sight", or what differs from the nearest cached graph.
  std::string reason;
  double milliseconds;
  int64_t numOps;
  /// cpu and cuda: thunks (kernels, GEMMs, copies) and planned peak bytes.
  int64_t thunks = 0;
  int64_t plannedPeakBytes = 0;
};

struct Counters {
  /// Graphs built by step() or a forced sync (each hit or compiled).
  int64_t graphsTraced = 0;
  int64_t compiles = 0;
  int64_t cacheHits = 0;
  /// Syncs forced by to_host()/item() on a pending tensor before step().
  int64_t forcedSyncs = 0;
  double compileMilliseconds = 0;
  /// step()'s own host work before a run: building the graph from the
  /// pending nodes, its canonical key and hash, and the cache lookup
  /// (compiles excluded). On a GPU it happens before the step's kernels
  /// start, so it adds to the step unless the GPU is still busy.
  double graphMilliseconds = 0;
  double executeMilliseconds = 0;
  /// Bytes of inputs given to programs and outputs taken back. Inputs are
  /// lent (or donated), never copied.
  int64_t bytesIn = 0;
  int64_t bytesOut = 0;
  /// Buffers (and their bytes) that compiled programs allocated while
  /// running: outputs that found neither a donated buffer nor one recycled
  /// from an earlier run's dropped output. A training loop's steady state
  /// allocates none. (A program's arena, allocated once at load, is not
  /// counted.)
  int64_t runtimeAllocations = 0;
  int64_t runtimeAllocatedBytes = 0;
  std::vector<CompileRecord> compileLog;
  /// The persistent cache (KILN_CACHE_DIR): graphs loaded from it without
  /// compiling, and misses by reason ("no entry", "corrupt entry", ...).
  int64_t persistentHits = 0;
  int64_t persistentMisses = 0;
  std::map<std::string, int64_t> persistentMissReasons;
  /// Lowering, key and loading of the graphs that hit (no compile).
  double persistentLoadMilliseconds = 0;
  /// Eager mode: single-op kernels compiled (one per op, attributes and
  /// operand types), kernel-cache hits, and kernels run. Their compile and
  /// run times count in compileMilliseconds and executeMilliseconds.
  int64_t eagerKernelsCompiled = 0;
  int64_t eagerCacheHits = 0;
  int64_t eagerExecutions = 0;
  /// Eager mode: values computed again because their buffer had been
  /// released (no handle held it and no gradient rule was known to read
  /// it; see lazy::savedByGradient). Zero in a training step whose every
  /// saved value is declared.
  int64_t eagerRecomputes = 0;
  /// Device bytes held now by tensors and nodes (parameters, optimizer
  /// state, inputs, results, eager intermediates), in both modes, and the
  /// most since reset(). Not counted: a compiled graph's own arena
  /// (runtime::Program does not expose it) and storage idle in a program's
  /// output pool; so graph mode's peak is its inputs and outputs.
  int64_t liveBytes = 0;
  int64_t peakLiveBytes = 0;
  /// cpu and cuda: the largest planned peak (arena + inputs + fresh
  /// outputs) among the graphs compiled or loaded; the memory a step needs
  /// that liveBytes does not see.
  int64_t plannedPeakBytes = 0;
  /// Device memory that programs hold on a device with memory of its own
  /// (cuda: arenas, input and output buffers, workspaces, kept values;
  /// runtime::DeviceMemoryMeter), now and the most since reset() (as
  /// torch.cuda.max_memory_allocated), and the cap KILN_DEVICE_MEMORY_LIMIT
  /// puts on it (0: none). 0 on cpu, whose tensors are host memory.
  int64_t deviceBytes = 0;
  int64_t peakDeviceBytes = 0;
  int64_t deviceLimitBytes = 0;
};

/// The counters so far.
const Counters &counters();
/// The counters as readable text, one per line, then one line per compile
/// with its reason.
std::string report();
/// Zeroes the counters (the graph cache is kept); liveBytes stays, and
/// peakLiveBytes restarts from it.
void reset();

} // namespace metrics

/// Profiles of the runs since profiling was switched on (Options::
/// profilePath), as Chrome / Perfetto trace JSON.
namespace profile {
/// The trace of the runs so far (the first 64 kept).
std::string trace();
/// Per thunk, over every run but each program's first: share of the run,
/// time, calls, achieved GB/s or GFLOP/s.
std::string summary();
/// Writes trace() to Options::profilePath; a file that cannot be written
/// is a kiln::Error naming it. Runs at exit too, with the summary on
/// stderr, when any run was profiled.
void write();
} // namespace profile

} // namespace kiln

#endif // KILN_FRONTENDS_LAZY_TENSOR_H
