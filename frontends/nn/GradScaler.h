// Dynamic loss scaling for f16 mixed precision, as PyTorch's
// torch.amp.GradScaler: the loss is multiplied by a scale before backward so
// that small gradients survive f16's range (products rounded to f16 flush
// below 6e-8), the gradients are divided by it again before clipping and the
// update, and a step whose gradients hold an Inf or a NaN (an f16 product
// overflowed past 65504) is skipped and halves the scale; 2000 clean steps
// in a row double it. DeepSpeed's variant (a floor under the scale, and
// hysteresis: the first overflows of a stretch skip the step without
// halving) is the same state machine with two more options. The scale, the
// clean-step count and the skipped-step count are device state, and the skip is
// decided on the device (Optimizer::step_unless), so a step records the same
// graph whatever happens: no recompile and no host round trip. The host reads
// the counts only when it asks (state(), skipped_steps()).
#ifndef KILN_FRONTENDS_NN_GRADSCALER_H
#define KILN_FRONTENDS_NN_GRADSCALER_H

#include "frontends/nn/Optimizer.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace kiln::nn {

class GradScaler {
public:
  /// PyTorch's defaults.
  struct Options {
    double init_scale = 65536.0;
    double growth_factor = 2.0;
    double backoff_factor = 0.5;
    int64_t growth_interval = 2000;
    /// DeepSpeed's min_loss_scale: a back-off never takes the scale below
    /// it (0: no floor, as PyTorch).
    double min_scale = 0;
    /// DeepSpeed's hysteresis: overflows that skip a step without backing
    /// the scale off, counted down until one does back it off (1: every
    /// overflow backs off, as PyTorch). The count is restored when the
    /// scale grows, or after every clean step with consecutive_hysteresis.
    int64_t hysteresis = 1;
    bool consecutive_hysteresis = false;
  };
  /// The scaler's state as the host sees it (checkpoints save it).
  struct HostState {
    double scale = 65536.0;
    /// Clean steps since the scale last changed.
    int64_t growth_tracker = 0;
    /// Steps skipped since training began.
    int64_t skipped_steps = 0;
    /// Overflows left before one backs the scale off (a scaler with
    /// hysteresis > 1; absent: the full count).
    std::optional<int64_t> hysteresis_left;

    /// As strings for a checkpoint's metadata ("grad_scaler.scale", ...;
    /// the Trainer saves scaler.pt beside the optimizer), exact.
    std::map<std::string, std::string> metadata() const;
    /// The state `metadata()` wrote, read back from a checkpoint's
    /// metadata; throws kiln::Error naming `source` when it is absent
    /// (the checkpoint was not trained with --fp16) or malformed.
    static HostState from_metadata(
        const std::map<std::string, std::string> &metadata,
        const std::string &source);
  };

  GradScaler();
  explicit GradScaler(const Options &options);

  /// loss · scale, to call backward() on.
  Tensor scale(const Tensor &loss) const;
  /// Divides the gradient of every parameter of `optimizer` by the scale
  /// and records whether any holds an Inf or a NaN (call once per step,
  /// after backward, before clipping).
  void unscale_(Optimizer &optimizer);
  /// optimizer.step(), kept only if the unscaled gradients were finite
  /// (unscale_ runs first if it has not this step); then update().
  void step(Optimizer &optimizer);
  /// The scale's update (step() calls it): an overflow multiplies it by
  /// backoff_factor (not below min_scale; once hysteresis overflows have
  /// been counted down) and restarts the count of clean steps;
  /// growth_interval clean steps multiply it by growth_factor.
  void update();

  /// 0-d i1 of the last unscale_: true when the step is skipped (pending
  /// until kiln::step()).
  const Tensor &found_inf() const { return foundInf_; }
  /// 0-d f64 device tensor: the steps skipped so far.
  const Tensor &skipped_steps() const { return skipped_; }

  /// Reads the device state (a sync when it is pending).
  HostState state() const;
  /// Restores a saved state; throws kiln::Error on a scale that is not a
  /// positive finite number or a negative count.
  void load_state(const HostState &state);

private:
  Options options_;
  /// 0-d f32: the loss scale.
  Tensor scale_;
  /// 0-d f32: clean steps since the scale last changed (exact in f32 far
  /// beyond any growth interval).
  Tensor growthTracker_;
  /// 0-d f64: steps skipped so far (Optimizer::step_unless's skipped_before).
  Tensor skipped_;
  /// 0-d f32: overflows left before a back-off (only with hysteresis > 1,
  /// so that PyTorch's scaler records the graph it always has).
  Tensor hysteresisLeft_;
  Tensor foundInf_;
  bool unscaled_ = false;
};

/// The update half of a training step as the Hugging Face Trainer records
/// it: loss.backward() (of scaler->scale(loss) under a scaler), the
/// gradients averaged over a data-parallel run's processes
/// (Optimizer::average_gradients), unscaled, clipped to `max_grad_norm` when it
/// is > 0, the optimizer's step (skipped on an overflow under a scaler) and
/// zero_grad. → the gradients' total norm before clipping (the Trainer's
/// grad_norm, measured without clipping too), a 0-d tensor.
Tensor backward_and_step(const Tensor &loss, Optimizer &optimizer,
                         double max_grad_norm, GradScaler *scaler);

} // namespace kiln::nn

#endif // KILN_FRONTENDS_NN_GRADSCALER_H
