// Names of Hugging Face hub models and data sets, resolved on this machine
// only: kiln-train never downloads. A model or tokenizer name (`gpt2`,
// `meta-llama/Llama-3.2-1B`) is a folder, or a snapshot in the hub cache that
// transformers fills (`$HF_HUB_CACHE`, else `$HF_HOME/hub`, else
// `~/.cache/huggingface/hub`: models--org--name/snapshots/REV/). A data set
// name with its configuration (`glue` + `sst2`, `wikitext` +
// `wikitext-2-raw-v1`) is a folder of plain files under a kiln data
// directory (`$KILN_DATA_DIR`, colon-separated, else `~/.cache/kiln/data`),
// since the datasets library's Arrow cache is not a format kiln reads. Where
// nothing is found the error lists every path tried and how to pass files
// instead.
#ifndef KILN_EXAMPLES_HUBFOLDERS_H
#define KILN_EXAMPLES_HUBFOLDERS_H

#include "absl/status/statusor.h"

#include <string>
#include <vector>

namespace kiln::train {

/// The hub cache's folder: `override` when given (run_clm's --cache_dir),
/// else $HF_HUB_CACHE, $HF_HOME/hub, ~/.cache/huggingface/hub.
std::string hubCacheDir(const std::string &override = "");

/// `name` (a folder, or a hub id) → the folder holding the model's or
/// tokenizer's files: the folder itself, else the hub cache's snapshot
/// of hubCacheDir(hubCache) at `revision` (run_clm's --model_revision: the
/// commit refs/REVISION names, or a commit snapshots/ holds; for main,
/// else the only snapshot). NotFound naming `flag`, the paths tried and
/// how to pass a folder instead.
absl::StatusOr<std::string>
resolveModelFolder(const std::string &flag, const std::string &name,
                   const std::string &hubCache,
                   const std::string &revision = "main");

/// The kiln data directories searched for data sets ($KILN_DATA_DIR split
/// at ':', else ~/.cache/kiln/data).
std::vector<std::string> dataDirs();

/// A data set's files: the training split and, when the folder has one, the
/// validation split ("" otherwise).
struct DatasetFiles {
  std::string folder, train, validation;
};

/// `name` + `config` (config may be "") → the files of the first folder
/// that exists among, in each data directory: name/config, config, the
/// config without its "-raw-v1" / "-v1" suffix (wikitext-2-raw-v1 →
/// wikitext-2), and name. Training files are train.{tsv,jsonl,json,txt} or
/// wiki.train.{tokens,raw}; validation files validation.*, valid.*, dev.*
/// or wiki.valid.*. NotFound naming what was tried and the flags that pass
/// files instead.
absl::StatusOr<DatasetFiles> resolveDataset(const std::string &name,
                                            const std::string &config);

} // namespace kiln::train

#endif // KILN_EXAMPLES_HUBFOLDERS_H
