// Parameter registration, dotted names, the state dict and train/eval mode;
// see Module.h.
#include "frontends/nn/Module.h"

#include <algorithm>

#include <set>
#include <sstream>

namespace kiln::nn {
namespace {

std::string shapeString(const Shape &shape) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < shape.size(); ++i)
    os << (i ? ", " : "") << shape[i];
  os << "]";
  return os.str();
}

std::string joinNames(const std::vector<std::string> &names) {
  std::string out;
  for (const std::string &n : names)
    out += (out.empty() ? "" : ", ") + n;
  return out;
}

/// `value` converted on the host to `dtype` (a copy only when it differs).
HostTensor converted(const HostTensor &value, DType dtype) {
  if (value.dtype() == dtype)
    return value;
  HostTensor out(dtype, value.shape());
  for (int64_t i = 0; i < value.numElements(); ++i)
    out.setDouble(i, value.getDouble(i));
  return out;
}

} // namespace

Module::~Module() = default;

Tensor make_parameter(const HostTensor &value, DType dtype) {
  return Tensor::from_host(converted(value, dtype), /*requires_grad=*/true);
}

DType compute_type(DType storage) {
  return storage == DType::bf16 || storage == DType::f16 ? DType::f32
                                                         : storage;
}

Tensor compute_value(const Tensor &param) {
  return as_type(param, compute_type(param.dtype()));
}

Tensor as_type(const Tensor &t, DType dtype) {
  return t.dtype() == dtype ? t : t.to(dtype);
}

int64_t Module::store_frozen_as(DType dtype) {
  if (!isFloat(dtype))
    throw Error("store_frozen_as: expected a float dtype, got " +
                std::string(dtypeName(dtype)));
  int64_t saved = 0;
  for (auto &[name, param] : named_parameters()) {
    if (param.requires_grad() || !isFloat(param.dtype()) ||
        param.dtype() == dtype)
      continue;
    saved += int64_t(param.numel()) *
             (int64_t(byteWidth(param.dtype())) - int64_t(byteWidth(dtype)));
    param.set_data_(Tensor::from_host(converted(param.to_host(), dtype)));
  }
  return saved;
}

Tensor Module::register_parameter(const std::string &name, Tensor value) {
  if (!value.defined())
    throw Error("register_parameter: '" + name + "' is undefined");
  for (const auto &p : params_)
    if (p.first == name)
      throw Error("register_parameter: '" + name + "' is already registered");
  if (!value.requires_grad())
    value.requires_grad_(true);
  params_.emplace_back(name, value);
  return value;
}

void Module::register_alias(const std::string &alias,
                            const std::string &target) {
  aliases_.emplace_back(alias, target);
}

void Module::collect(const std::string &prefix, NamedTensors &out) const {
  for (const auto &[name, tensor] : params_)
    out.emplace_back(prefix + name, tensor);
  for (const auto &[name, child] : children_)
    child->collect(prefix + name + ".", out);
}

void Module::collectAliases(const std::string &prefix,
                            std::map<std::string, std::string> &out) const {
  for (const auto &[alias, target] : aliases_)
    out[prefix + alias] = prefix + target;
  for (const auto &[name, child] : children_)
    child->collectAliases(prefix + name + ".", out);
}

NamedTensors Module::named_parameters() const {
  NamedTensors all, unique;
  collect("", all);
  // Tied tensors appear once, under their first name (as in PyTorch).
  for (auto &entry : all) {
    bool seen = false;
    for (const auto &u : unique)
      seen = seen || u.second.is_same(entry.second);
    if (!seen)
      unique.push_back(std::move(entry));
  }
  return unique;
}

std::vector<Tensor> Module::parameters() const {
  std::vector<Tensor> out;
  for (auto &entry : named_parameters())
    out.push_back(entry.second);
  return out;
}

int64_t Module::num_parameters(bool exclude_embeddings) const {
  std::vector<Tensor> tables;
  if (exclude_embeddings)
    collectLookupTables(tables);
  int64_t n = 0;
  for (const Tensor &p : parameters())
    if (std::none_of(tables.begin(), tables.end(),
                     [&](const Tensor &table) { return table.is_same(p); }))
      n += p.numel();
  return n;
}

void Module::collectLookupTables(std::vector<Tensor> &out) const {
  for (Tensor &table : lookup_tables())
    out.push_back(std::move(table));
  for (const auto &entry : children_)
    entry.second->collectLookupTables(out);
}

std::vector<std::pair<std::string, Module *>> Module::named_modules() {
  std::vector<std::pair<std::string, Module *>> out;
  for (auto &[name, child] : children_) {
    out.emplace_back(name, child.get());
    for (auto &[sub, m] : child->named_modules())
      out.emplace_back(name + "." + sub, m);
  }
  return out;
}

void Module::train(bool on) {
  training_ = on;
  for (auto &entry : children_)
    entry.second->train(on);
}

void Module::zero_grad() {
  for (Tensor &p : parameters())
    p.zero_grad();
}

LoadResult Module::plan(
    const std::map<std::string, HostTensor> &state,
    std::vector<std::pair<Tensor, const HostTensor *>> &updates) const {
  NamedTensors params = named_parameters();
  std::map<std::string, Tensor> byName(params.begin(), params.end());
  std::map<std::string, std::string> aliases;
  collectAliases("", aliases);

  LoadResult result;
  std::set<std::string> loaded;
  for (const auto &[key, value] : state) {
    std::string name = key;
    if (auto alias = aliases.find(key); alias != aliases.end())
      name = alias->second;
    auto it = byName.find(name);
    if (it == byName.end()) {
      result.unexpectedKeys.push_back(key);
      continue;
    }
    if (value.shape() != it->second.shape())
      throw Error("load_state_dict: '" + key + "' has shape " +
                  shapeString(value.shape()) + " in the state dict but " +
                  shapeString(it->second.shape()) + " in the model");
    updates.emplace_back(it->second, &value);
    loaded.insert(name);
  }
  for (const auto &[name, tensor] : params)
    if (!loaded.count(name))
      result.missingKeys.push_back(name);
  return result;
}

LoadResult
Module::check_state_dict(const std::map<std::string, HostTensor> &state) const {
  std::vector<std::pair<Tensor, const HostTensor *>> updates;
  return plan(state, updates);
}

LoadResult
Module::load_state_dict(const std::map<std::string, HostTensor> &state,
                        bool strict) {
  // Every key is checked before any is assigned, so a bad state dict leaves
  // the model as it was.
  std::vector<std::pair<Tensor, const HostTensor *>> updates;
  LoadResult result = plan(state, updates);
  if (strict && (!result.missingKeys.empty() || !result.unexpectedKeys.empty()))
    throw Error("load_state_dict: missing keys [" +
                joinNames(result.missingKeys) + "], unexpected keys [" +
                joinNames(result.unexpectedKeys) + "]");
  NoGradGuard noGrad;
  for (auto &[param, value] : updates)
    param.assign_(Tensor::from_host(converted(*value, param.dtype())));
  return result;
}

} // namespace kiln::nn
