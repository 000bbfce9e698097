// Optimizers (SGD with momentum, AdamW), gradient clipping by global norm
// and the learning-rate schedules of Hugging Face's get_*_schedule_with_warmup.
// An optimizer step records the update of every parameter into the pending
// graph: the learning rate and the step counter enter as Tensor::scalar
// device inputs and the bias corrections are computed from the step scalar
// on the device, so one compiled graph serves every step. Parameters and
// optimizer state change through assign_, and the state exists as device
// data from construction, so the first training step already has the graph
// of all the others.
#ifndef KILN_FRONTENDS_NN_OPTIMIZER_H
#define KILN_FRONTENDS_NN_OPTIMIZER_H

#include "frontends/nn/Module.h"

#include <functional>
#include <map>
#include <set>
#include <string>

namespace kiln::nn {

/// Where a data-parallel run keeps the optimizer's state.
enum class StateSharding {
  /// Every process holds all of it and updates every parameter (DDP).
  replicated,
  /// ZeRO stage 1, as PyTorch's ZeroRedundancyOptimizer: each parameter has
  /// one owning process (the largest parameters first, each to the process
  /// owning the fewest elements so far), which alone keeps its state and
  /// computes its update, then broadcasts the new value to the others. Each
  /// process holds about 1/N of the state, for a second exchange of the
  /// parameters per step. Alone, a process owns everything.
  by_parameter,
  /// ZeRO stage 2: by_parameter, and the gradients too. Each averaged
  /// gradient is kept only by its parameter's owner (the others drop it as
  /// soon as their share of the sum is sent), so no process holds the
  /// whole averaged gradient; the clipping norm and the fp16 overflow
  /// check gather each process's part (Optimizer::average_gradients,
  /// clip_grad_norm_(Optimizer &, ...), GradScaler::unscale_). The update
  /// is the replicated optimizer's, bit for bit.
  by_parameter_with_gradients,
};

/// The base of the optimizers: named parameters, a learning rate, a step
/// count and named state tensors.
class Optimizer {
public:
  Optimizer(NamedTensors params, double lr,
            StateSharding sharding = StateSharding::replicated);
  virtual ~Optimizer();
  Optimizer(const Optimizer &) = delete;
  Optimizer &operator=(const Optimizer &) = delete;

  /// Records one update of every parameter that has a gradient, with the
  /// current learning rate; advances step_count().
  void step();
  /// The same update, kept only where the 0-d i1 device tensor `skip` is
  /// false: where it is true every parameter and state tensor keeps its
  /// value (GradScaler's skipped step, decided on the device: no host round
  /// trip). `skipped_before` (0-d f64 device tensor) counts the updates
  /// skipped before this one, so the update number the bias corrections
  /// read is step_count() − skipped_before, as PyTorch, whose skipped
  /// optimizer.step() never runs. step_count() still counts this step.
  void step_unless(const Tensor &skip, const Tensor &skipped_before);
  /// Clears every parameter's gradient.
  void zero_grad();

  double lr() const { return lr_; }
  void set_lr(double lr) { lr_ = lr; }
  /// Steps taken so far.
  int64_t step_count() const { return steps_; }

  /// "SGD" / "AdamW".
  virtual std::string name() const = 0;
  /// The state tensors, "<param name>.<state name>" → tensor, in parameter
  /// order (checkpoints save these). Sharded state: what consolidate_state
  /// gathered on this process since the last step; kiln::Error otherwise.
  NamedTensors state() const;
  /// Whether the state is sharded over the processes (by_parameter, with
  /// more than one process).
  bool sharded() const { return !owner_.empty(); }
  /// Whether parameter i's state and update are this process's.
  bool owns(size_t i) const { return owner_.empty() || owner_[i] == rank_; }
  /// Whether average_gradients() leaves each averaged gradient on its
  /// parameter's owner alone (by_parameter_with_gradients, more than one
  /// process).
  bool shards_gradients() const { return shardsGradients_; }
  /// Data parallelism: each parameter's gradient becomes its mean over the
  /// processes (nn::average_gradients). With sharded gradients only the
  /// owner keeps the mean; the others drop their gradient, and
  /// has_gradient() still says it exists until the step.
  void average_gradients();
  /// Whether parameter i has a gradient this step: its own, or one that
  /// average_gradients() left on another process.
  bool has_gradient(size_t i) const;
  /// Sharded state: every process calls it at the same point of its run;
  /// the state of every parameter is sent by its owner, and process `to`
  /// keeps it, for state() until the next step (PyTorch's
  /// consolidate_state_dict). It runs now; process `to` holds the whole
  /// state until the next step. Nothing when the state is not sharded.
  void consolidate_state(int to = 0);
  /// Restores state tensors (host values, same names and shapes as state()
  /// gives unsharded; a sharded optimizer takes the entries of the
  /// parameters it owns) and the step count; throws kiln::Error naming a
  /// missing or mismatched entry.
  void load_state(const std::map<std::string, HostTensor> &state,
                  int64_t step_count);
  /// The checks of load_state without loading: throws kiln::Error naming a
  /// missing, unexpected or mismatched entry.
  void check_state(const std::map<std::string, HostTensor> &state) const;
  const NamedTensors &params() const { return params_; }

protected:
  /// Creates a zero state tensor `stateName` for each parameter this
  /// process owns.
  void add_state(const std::string &stateName);
  /// Parameter i's state tensor `stateName`.
  Tensor &state_of(size_t i, const std::string &stateName);
  /// Records parameter i's update from `grad`; `lr` and `step` (the step
  /// being taken, counted from 1) are 0-d device inputs of the param dtype.
  virtual void update(size_t i, const Tensor &grad, const Tensor &lr,
                      const Tensor &step) = 0;
  /// After the step's last update(): drops what update() kept for the
  /// step's other parameters (a tensor held past the step would become one
  /// of its graph's outputs).
  virtual void end_step() {}

private:
  /// Parameter i's update recorded (kept only where `skip` is false, when
  /// it is defined).
  void updateOwned(size_t i, const Tensor &skip, const Tensor &lr,
                   const Tensor &step);
  /// The state this process holds, named as state().
  NamedTensors heldState() const;

  NamedTensors params_;
  /// Per parameter: state name → tensor, in creation order (none for a
  /// parameter another process owns).
  std::vector<NamedTensors> state_;
  /// The names add_state was given, in order.
  std::vector<std::string> stateNames_;
  /// Sharded: each parameter's owning process; empty when replicated.
  std::vector<int> owner_;
  bool shardsGradients_ = false;
  /// Per parameter: its averaged gradient is on its owner, not here
  /// (average_gradients with sharded gradients; cleared by the step).
  std::vector<bool> gradientElsewhere_;
  int rank_ = 0;
  /// consolidate_state's gathering, cleared by the next step.
  NamedTensors consolidated_;
  double lr_;
  int64_t steps_ = 0;
};

/// PyTorch's SGD: g += wd p; buf = momentum buf + (1 - dampening) g (buf = g
/// on the first step); g = nesterov ? g + momentum buf : buf; p -= lr g.
class SGD : public Optimizer {
public:
  struct Options {
    double lr = 1e-3;
    double momentum = 0;
    double dampening = 0;
    double weight_decay = 0;
    bool nesterov = false;
    /// Parameters (by name) that get no weight decay.
    std::set<std::string> no_decay;
    StateSharding sharding = StateSharding::replicated;
  };
  SGD(NamedTensors params, const Options &options);
  std::string name() const override { return "SGD"; }

private:
  void update(size_t i, const Tensor &grad, const Tensor &lr,
              const Tensor &step) override;
  Options options_;
};

/// PyTorch's AdamW: p *= 1 - lr wd; m = β1 m + (1-β1) g; v = β2 v +
/// (1-β2) g²; p -= lr / (1-β1^t) · m / (sqrt(v) / sqrt(1-β2^t) + eps).
class AdamW : public Optimizer {
public:
  struct Options {
    double lr = 1e-3;
    double beta1 = 0.9;
    double beta2 = 0.999;
    double eps = 1e-8;
    double weight_decay = 1e-2;
    /// Parameters (by name) that get no weight decay, e.g.
    /// bias_and_norm_names(model) as Hugging Face's Trainer does.
    std::set<std::string> no_decay;
    StateSharding sharding = StateSharding::replicated;
  };
  AdamW(NamedTensors params, const Options &options);
  std::string name() const override { return "AdamW"; }

private:
  void update(size_t i, const Tensor &grad, const Tensor &lr,
              const Tensor &step) override;
  void end_step() override { stepScalars_.clear(); }

  /// What every parameter of one dtype shares in a step: lr over the
  /// first bias correction, the square root of the second, and the weight
  /// decay's factor. Made once a step per dtype, not per parameter: the
  /// structural sharing made them one node anyway, but recording them for
  /// each of GPT-2's 148 parameters was a quarter of the update's host
  /// time.
  struct StepScalars {
    DType dtype;
    Tensor stepSize, bc2Sqrt, decayFactor;
  };
  const StepScalars &stepScalars(DType dtype, const Tensor &lr,
                                 const Tensor &step);
  Options options_;
  std::vector<StepScalars> stepScalars_;
};

/// model → the names of its biases and LayerNorm / RMSNorm weights: the
/// parameters Hugging Face's Trainer exempts from weight decay.
std::set<std::string> bias_and_norm_names(Module &model);

/// Data parallelism (DistributedDataParallel's averaging): each gradient of
/// `params` becomes its mean over the run's processes, all_reduce(grad) /
/// world_size(), summed in f32 (or f64) whatever its type. Nothing when the
/// process runs alone. Every process calls it at the same point of its step.
void average_gradients(const NamedTensors &params);

/// Scales the gradients of `params` in place so that their global L2 norm is
/// at most `max_norm` (PyTorch's clip_grad_norm_: coefficient
/// max_norm / (norm + 1e-6), clamped to 1) → the norm before clipping, a
/// 0-d pending tensor (reading it forces no sync until step()). An infinite
/// `max_norm` measures the norm and leaves the gradients as they are (the
/// Trainer's clip_grad_norm_(..., inf) for its grad_norm without clipping).
Tensor clip_grad_norm_(const std::vector<Tensor> &params, double max_norm);
/// The same over the parameters of `optimizer`. With sharded gradients each
/// process squares the gradients it holds and one sum over the processes
/// gathers every parameter's share, added in parameter order: the norm and
/// the clipped gradients equal the replicated run's bit for bit.
Tensor clip_grad_norm_(Optimizer &optimizer, double max_norm);

//===--- Learning-rate schedules ------------------------------------------===//

/// step → multiplier of the base learning rate.
using LRLambda = std::function<double(int64_t)>;

/// 1 at every step.
LRLambda constant_schedule();
/// step / warmup during warmup, then 1.
LRLambda constant_schedule_with_warmup(int64_t warmup_steps);
/// Linear warmup, then linear decay to 0 at `total_steps`.
LRLambda linear_schedule_with_warmup(int64_t warmup_steps, int64_t total_steps);
/// Linear warmup, then cosine decay (`num_cycles` half-waves: 0.5 decays
/// once to 0 at `total_steps`).
LRLambda cosine_schedule_with_warmup(int64_t warmup_steps, int64_t total_steps,
                                     double num_cycles = 0.5);
/// Linear warmup, then cosine decay to `min_lr_rate` of the base learning
/// rate instead of 0 (transformers' cosine_with_min_lr).
LRLambda cosine_with_min_lr_schedule_with_warmup(int64_t warmup_steps,
                                                 int64_t total_steps,
                                                 double num_cycles,
                                                 double min_lr_rate);
/// Linear warmup, then `num_cycles` cosine decays to 0, each restarting at
/// the base learning rate; 0 from `total_steps` on (transformers'
/// cosine_with_restarts).
LRLambda cosine_with_hard_restarts_schedule_with_warmup(int64_t warmup_steps,
                                                        int64_t total_steps,
                                                        double num_cycles = 1);
/// Linear warmup, then (base - lr_end) · remaining^power + lr_end, over the
/// base `base_lr`, reaching lr_end at `total_steps` and staying there
/// (transformers' polynomial; it needs base_lr > lr_end).
LRLambda polynomial_decay_schedule_with_warmup(int64_t warmup_steps,
                                               int64_t total_steps,
                                               double base_lr,
                                               double lr_end = 1e-7,
                                               double power = 1);
/// Linear warmup, then 1 / sqrt((step + timescale - warmup) / timescale)
/// (transformers' inverse_sqrt; its default timescale is the warmup, else
/// 10,000).
LRLambda inverse_sqrt_schedule(int64_t warmup_steps, double timescale);

/// PyTorch's LambdaLR: sets the optimizer's learning rate to base ·
/// lambda(step), base being the learning rate at construction. Construction
/// applies step 0; each step() (called after optimizer.step()) advances.
class LambdaLR {
public:
  LambdaLR(Optimizer &optimizer, LRLambda lambda);
  /// Advances one step and updates the optimizer's learning rate.
  void step();
  /// Jumps to `step` (resuming from a checkpoint).
  void set_step(int64_t step);
  int64_t last_step() const { return step_; }
  double last_lr() const { return optimizer_.lr(); }
  double base_lr() const { return base_; }

private:
  Optimizer &optimizer_;
  LRLambda lambda_;
  double base_;
  int64_t step_ = 0;
};

} // namespace kiln::nn

#endif // KILN_FRONTENDS_NN_OPTIMIZER_H
