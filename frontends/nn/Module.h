// The base of every neural-network layer: a Module owns named parameters and
// named child modules, both in registration order, which is the canonical
// order of named_parameters(), of the state dict and hence of the graph's
// inputs. Names are dotted paths ("transformer.h.0.attn.c_attn.weight"), as
// in PyTorch. A parameter registered twice (tied weights) is listed once,
// under its first name; its other names are aliases that load_state_dict
// accepts. train()/eval() switch the mode of the whole tree (dropout).
#ifndef KILN_FRONTENDS_NN_MODULE_H
#define KILN_FRONTENDS_NN_MODULE_H

#include "frontends/lazy/Tensor.h"

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace kiln::nn {

/// name → tensor pairs in canonical order.
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

/// What load_state_dict found besides the tensors it loaded.
struct LoadResult {
  std::vector<std::string> missingKeys;
  std::vector<std::string> unexpectedKeys;
};

/// A layer or model: parameters and child modules with dotted names.
class Module {
public:
  virtual ~Module();
  Module() = default;
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;

  /// Every parameter of the tree → (dotted name, tensor), each tensor once
  /// (a tied parameter under the name it was first registered with).
  NamedTensors named_parameters() const;
  /// The tensors of named_parameters().
  std::vector<Tensor> parameters() const;
  /// Total elements over parameters(); without the embeddings' tables
  /// (whose rows are looked up, not multiplied) when `exclude_embeddings`,
  /// as transformers' num_parameters(exclude_embeddings=True).
  int64_t num_parameters(bool exclude_embeddings = false) const;
  /// The parameters this module looks rows up in (an embedding's table):
  /// none but where a layer says so.
  virtual std::vector<Tensor> lookup_tables() const { return {}; }
  /// Children → (dotted name, module), depth first, in registration order.
  std::vector<std::pair<std::string, Module *>> named_modules();

  /// The state dict: named_parameters() (tied tensors saved once, as
  /// Hugging Face saves them).
  NamedTensors state_dict() const { return named_parameters(); }
  /// Assigns each tensor of `state` (host values) to the parameter of that
  /// name (or of a tied alias). Shapes must match (kiln::Error naming the
  /// key otherwise); dtypes convert to the parameter's. With `strict`,
  /// missing or unexpected keys throw kiln::Error listing them; otherwise
  /// they are returned. The new values are pending assignments until the
  /// next kiln::step().
  LoadResult load_state_dict(const std::map<std::string, HostTensor> &state,
                             bool strict = true);
  /// The checks of load_state_dict without loading: throws kiln::Error on a
  /// shape mismatch, returns the missing and unexpected keys.
  LoadResult
  check_state_dict(const std::map<std::string, HostTensor> &state) const;

  /// Sets training mode on this module and every descendant.
  void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }

  /// Clears the gradient of every parameter.
  void zero_grad();

  /// Stores every floating-point parameter that does not require grad in
  /// `dtype`, converted on the host (rounded to nearest even): the frozen
  /// base of a LoRA fine-tune in bf16, as transformers' torch_dtype loads
  /// it, at half the bytes; the layers then compute in bf16 (below).
  /// Trainable parameters keep their dtype (f32 master weights). → the
  /// bytes saved (negative when `dtype` is wider).
  int64_t store_frozen_as(DType dtype);

protected:
  /// Registers `value` (made a leaf that requires grad) as parameter `name`
  /// of this module; returns the stored handle.
  Tensor register_parameter(const std::string &name, Tensor value);
  /// Registers `child` under `name`; returns it.
  template <typename M>
  std::shared_ptr<M> register_module(const std::string &name,
                                     std::shared_ptr<M> child) {
    children_.emplace_back(name, child);
    return child;
  }
  /// Makes `alias` (a dotted name relative to this module) another name of
  /// the parameter whose canonical dotted name is `target`.
  void register_alias(const std::string &alias, const std::string &target);

private:
  /// Every module's lookup_tables() in the tree, this one's included.
  void collectLookupTables(std::vector<Tensor> &out) const;
  /// Walks the tree: (prefix + name, tensor) for every registration, with
  /// duplicates.
  void collect(const std::string &prefix, NamedTensors &out) const;
  void collectAliases(const std::string &prefix,
                      std::map<std::string, std::string> &out) const;
  /// Matches `state` to parameters: (parameter, value) pairs to assign.
  LoadResult
  plan(const std::map<std::string, HostTensor> &state,
       std::vector<std::pair<Tensor, const HostTensor *>> &updates) const;

  NamedTensors params_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  std::vector<std::pair<std::string, std::string>> aliases_;
  bool training_ = true;
};

/// host tensor → a parameter leaf of `dtype` that requires grad.
Tensor make_parameter(const HostTensor &value, DType dtype);

/// The type a value stored as `storage` is widened to where f32 is wanted
/// (normalisation statistics, the loss, merging adapters): f32 for the
/// 16-bit types, else the storage type itself.
DType compute_type(DType storage);

/// `param` widened to compute_type (itself when already there): the loss's
/// head weight and adapter merging read it so.
Tensor compute_value(const Tensor &param);

/// `t` converted to `dtype` (t itself when it has that type already).
Tensor as_type(const Tensor &t, DType dtype);

// Layers compute in the type their weights are stored in, as a
// transformers model computes in its torch_dtype: a base stored in bf16
// (store_frozen_as) runs its activations, and their gradients, in bf16;
// normalisations take their statistics in f32 and round their result back,
// the loss widens the logits, and LoRA's f32 adapters read their input
// widened, as PEFT's do.

} // namespace kiln::nn

#endif // KILN_FRONTENDS_NN_MODULE_H
