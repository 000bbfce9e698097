// The interface a trainer sees of a causal language model (GPT-2, Llama):
// ids → logits, ids + labels → the shifted next-token loss, and the dropout
// generator whose state checkpoints carry. The loss helpers here are the one
// place the label shift is written (position i predicts token i + 1, labels
// of -100 ignored, as Hugging Face's ForCausalLMLoss).
#ifndef KILN_FRONTENDS_NN_CAUSALLM_H
#define KILN_FRONTENDS_NN_CAUSALLM_H

#include "frontends/nn/Layers.h"
#include "frontends/nn/Module.h"

#include <functional>
#include <optional>
#include <string>

namespace kiln::nn {

class CausalLM : public Module {
public:
  ~CausalLM() override;
  /// input ids [B, T] (i32 or i64) → logits [B, T, vocab].
  virtual Tensor forward(const Tensor &input_ids) const = 0;
  Tensor operator()(const Tensor &input_ids) const {
    return forward(input_ids);
  }
  /// The mean next-token cross-entropy over labels [B, T] → a 0-d tensor,
  /// without storing the [B, T, vocab] logits where the model can avoid it.
  virtual Tensor loss(const Tensor &input_ids, const Tensor &labels) const = 0;
  /// The dropout generator (its state belongs in checkpoints).
  virtual Generator &generator() = 0;
  /// transformers' label_smoothing_factor: loss() mixes `eps` of the
  /// uniform distribution over the vocabulary into each label (0: none).
  void set_label_smoothing(double eps);
  double label_smoothing() const { return labelSmoothing_; }
  /// The token embedding (transformers' get_input_embeddings()).
  virtual Embedding &input_embeddings() = 0;
  /// NEFTune (the Trainer's neftune_noise_alpha): noise on the token
  /// embeddings in training, drawn from generator(); 0: none.
  void set_neftune_noise_alpha(double alpha) {
    input_embeddings().set_noise(alpha, &generator());
  }
  /// Hugging Face's model_type ("gpt2", "llama").
  virtual std::string model_type() const = 0;
  virtual int64_t vocab_size() const = 0;
  /// The longest sequence the model was configured for.
  virtual int64_t max_positions() const = 0;
  /// Whether max_positions bounds the sequence: learned position
  /// embeddings (GPT-2) have no row past it; rotary ones (Llama) take any
  /// length, as transformers lets them.
  virtual bool positions_bounded() const = 0;
  /// "n_layer 12, n_embd 768, ...": the shape, for banners.
  virtual std::string describe() const = 0;

private:
  double labelSmoothing_ = 0;
};

/// The shifted loss from hidden states [B, T, C] and the head's weight
/// [V, C]: one fused linear_cross_entropy over rows 0..T-2 against labels
/// 1..T-1, so the logits are never stored. With label_smoothing eps, the
/// Trainer's LabelSmoother: (1 - eps) · that loss + eps · the mean over
/// the labelled rows of -(1/V) Σ_j log p_j. `softcap` > 0 caps the logits
/// at softcap · tanh(z / softcap) inside the fused op (Gemma 2's); label
/// smoothing then needs the logits (causal_lm_loss_from_logits).
Tensor causal_lm_loss(const Tensor &hidden, const Tensor &head_weight,
                      const Tensor &labels, double label_smoothing = 0,
                      double softcap = 0);
/// The same from logits [B, T, V] already computed.
Tensor causal_lm_loss_from_logits(const Tensor &logits, const Tensor &labels,
                                  double label_smoothing = 0);

/// Renames a Hugging Face tensor name to the model's parameter name, or
/// returns nullopt to skip the tensor (buffers HF once saved).
using HfNameMap = std::function<std::optional<std::string>(const std::string &)>;

/// Loads one Hugging Face safetensors file into `model` by parameter name
/// (after `rename`). Throws kiln::Error on a corrupt file or a shape
/// mismatch; with `strict`, also on missing or unexpected keys, else
/// returns them.
LoadResult load_hf_safetensors(Module &model, const std::string &path,
                               bool strict, const HfNameMap &rename);

/// The weights of a Hugging Face model folder → `model`: `dir`/
/// model.safetensors, or the shards model.safetensors.index.json's
/// weight_map names. Throws kiln::Error naming the file on a malformed
/// index, a shard the index names that is absent, or a parameter no file
/// holds (or a name no parameter takes).
void load_hf_folder(Module &model, const std::string &dir,
                    const HfNameMap &rename);

} // namespace kiln::nn

#endif // KILN_FRONTENDS_NN_CAUSALLM_H
