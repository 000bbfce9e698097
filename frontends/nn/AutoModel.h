// transformers' AutoModelForCausalLM for kiln: a config.json's model_type
// picks the family (GPT-2 when absent, as old GPT-2 files have none), and
// the family's parser reads the rest. For tools that take any model folder
// (kilnc plan); kiln-train also applies its flags (examples/Models.h).
#ifndef KILN_FRONTENDS_NN_AUTOMODEL_H
#define KILN_FRONTENDS_NN_AUTOMODEL_H

#include "frontends/nn/CausalLM.h"

#include "absl/status/statusor.h"

#include <memory>
#include <string_view>

namespace kiln::nn {

/// How causal_lm_from_config builds the model beyond the file's fields.
struct ModelBuild {
  /// The parameters' storage type.
  DType dtype = DType::f32;
  /// false: zero weights, never drawn (a model only planned).
  bool draw_initial_values = true;
};

/// config.json's text → a freshly initialised model of its family and
/// shape; InvalidArgument naming `fileName` on a bad file or a model_type
/// kiln does not implement.
absl::StatusOr<std::unique_ptr<CausalLM>>
causal_lm_from_config(std::string_view text, std::string_view fileName,
                      const ModelBuild &build = {});

} // namespace kiln::nn

#endif // KILN_FRONTENDS_NN_AUTOMODEL_H
