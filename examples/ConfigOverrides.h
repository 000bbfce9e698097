// run_clm.py's --config_overrides ("n_embd=10,resid_pdrop=0.2"): fields of
// the config a model trained from scratch starts from, changed before the
// model is built, as transformers' PretrainedConfig.update_from_string
// changes them.
#ifndef KILN_EXAMPLES_CONFIGOVERRIDES_H
#define KILN_EXAMPLES_CONFIGOVERRIDES_H

#include "examples/TrainArgs.h"

#include <string>

namespace kiln::train {

/// `overrides` on the config the n_* flags (and --dropout) give → `a`'s
/// config (TrainArgs::gpt2Config or llamaConfig) and its shape fields.
/// Each key must be a field of the family's config.json as kiln writes it,
/// its value read as that field's type; the result must be a config kiln
/// builds. The problem, or "".
std::string applyConfigOverrides(const std::string &overrides, TrainArgs &a);

} // namespace kiln::train

#endif // KILN_EXAMPLES_CONFIGOVERRIDES_H
