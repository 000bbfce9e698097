// Hub names → local folders; see HubFolders.h.
#include "examples/HubFolders.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace kiln::train {

namespace fs = std::filesystem;

namespace {

std::string env(const char *name) {
  const char *value = std::getenv(name);
  return value ? value : "";
}

std::string home() {
  std::string h = env("HOME");
  return h.empty() ? "." : h;
}

bool isDir(const fs::path &path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

bool isFile(const fs::path &path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

/// A name that stays inside snapshots/: one path component.
bool isSnapshotName(const std::string &name) {
  return !name.empty() && name != "." && name != ".." &&
         name.find('/') == std::string::npos;
}

/// The snapshot of the hub cache's `repo` to read at `revision` (a branch
/// or tag that refs/ names, or a commit that snapshots/ holds): "" when
/// neither has it, or refs/ names a commit snapshots/ lacks. The main
/// branch falls back on the only snapshot, as a cache copied without its
/// refs/ holds.
std::string snapshotRevision(const fs::path &repo,
                             const std::string &revision) {
  std::ifstream ref(repo / "refs" / revision);
  std::string commit;
  if (ref)
    return ref >> commit && isSnapshotName(commit) &&
                   isDir(repo / "snapshots" / commit)
               ? commit
               : "";
  if (isSnapshotName(revision) && isDir(repo / "snapshots" / revision))
    return revision;
  if (revision != "main")
    return "";
  std::vector<std::string> snapshots;
  std::error_code ec;
  for (const auto &entry : fs::directory_iterator(repo / "snapshots", ec))
    if (entry.is_directory())
      snapshots.push_back(entry.path().filename().string());
  return snapshots.size() == 1 ? snapshots[0] : "";
}

/// The first of `names` that is a file in `folder`, else "".
std::string firstFile(const fs::path &folder,
                      const std::vector<std::string> &names) {
  for (const std::string &name : names)
    if (isFile(folder / name))
      return (folder / name).string();
  return "";
}

std::vector<std::string> splitFiles(const std::string &stem) {
  return {stem + ".tsv", stem + ".csv", stem + ".jsonl", stem + ".json",
          stem + ".txt"};
}

} // namespace

std::string hubCacheDir(const std::string &override) {
  if (!override.empty())
    return override;
  if (std::string hub = env("HF_HUB_CACHE"); !hub.empty())
    return hub;
  if (std::string hf = env("HF_HOME"); !hf.empty())
    return (fs::path(hf) / "hub").string();
  return (fs::path(home()) / ".cache" / "huggingface" / "hub").string();
}

absl::StatusOr<std::string> resolveModelFolder(const std::string &flag,
                                               const std::string &name,
                                               const std::string &hubCache,
                                               const std::string &revision) {
  if (isDir(name))
    return name;
  fs::path repo = fs::path(hubCacheDir(hubCache)) /
                  ("models--" + absl::StrReplaceAll(name, {{"/", "--"}}));
  if (isDir(repo / "snapshots")) {
    std::string snapshot = snapshotRevision(repo, revision);
    if (!snapshot.empty())
      return (repo / "snapshots" / snapshot).string();
    fs::path ref = repo / "refs" / revision;
    if (fs::is_regular_file(ref))
      return absl::NotFoundError(absl::StrCat(
          "--", flag, " ", name, ": ", ref.string(), " names no folder of ",
          (repo / "snapshots").string(),
          " (a cache copied in part?); pass the snapshot folder itself"));
    if (revision != "main")
      return absl::NotFoundError(
          absl::StrCat("--", flag, " ", name, " at --model_revision ", revision,
                       ": ", repo.string(), " has neither refs/", revision,
                       " nor snapshots/", revision,
                       "; kiln-train does not download: pass the snapshot "
                       "folder itself"));
    return absl::NotFoundError(absl::StrCat(
        "--", flag, " ", name, ": ", (repo / "snapshots").string(),
        " holds several snapshots and refs/main names none of them; pass "
        "the snapshot folder itself"));
  }
  return absl::NotFoundError(absl::StrCat(
      "--", flag, " ", name, ": no such folder, and not in the hub cache "
      "(tried ", (repo / "snapshots").string(),
      "; --cache_dir, HF_HUB_CACHE or HF_HOME name another); kiln-train "
      "does not "
      "download: pass a folder with the model's files (config.json, "
      "*.safetensors, tokenizer.json or vocab.json + merges.txt)"));
}

std::vector<std::string> dataDirs() {
  std::string list = env("KILN_DATA_DIR");
  if (list.empty())
    return {(fs::path(home()) / ".cache" / "kiln" / "data").string()};
  return absl::StrSplit(list, ':', absl::SkipEmpty());
}

absl::StatusOr<DatasetFiles> resolveDataset(const std::string &name,
                                            const std::string &config) {
  std::vector<std::string> relative;
  if (!config.empty()) {
    relative.push_back(name + "/" + config);
    relative.push_back(config);
    for (const char *suffix : {"-raw-v1", "-v1"})
      if (absl::string_view stem = config;
          absl::ConsumeSuffix(&stem, suffix) && !stem.empty()) {
        relative.emplace_back(stem);
        break;
      }
  }
  relative.push_back(name);
  std::vector<std::string> tried;
  for (const std::string &dir : dataDirs())
    for (const std::string &rel : relative) {
      fs::path folder = fs::path(dir) / rel;
      tried.push_back(folder.string());
      if (!isDir(folder))
        continue;
      std::vector<std::string> trainNames = splitFiles("train");
      for (const char *raw : {"wiki.train.tokens", "wiki.train.raw"})
        trainNames.push_back(raw);
      DatasetFiles files{folder.string(), firstFile(folder, trainNames), ""};
      if (files.train.empty())
        return absl::NotFoundError(absl::StrCat(
            "--dataset_name ", name, ": ", folder.string(),
            " has no training split (looked for ",
            absl::StrJoin(trainNames, ", "),
            "); pass the training data with --train_file"));
      std::vector<std::string> validationNames;
      for (const char *stem : {"validation", "valid", "dev"})
        for (const std::string &file : splitFiles(stem))
          validationNames.push_back(file);
      for (const char *raw : {"wiki.valid.tokens", "wiki.valid.raw"})
        validationNames.push_back(raw);
      files.validation = firstFile(folder, validationNames);
      return files;
    }
  return absl::NotFoundError(absl::StrCat(
      "--dataset_name ", name,
      config.empty() ? "" : " --dataset_config_name " + config,
      ": not found in the kiln data directories (tried ",
      absl::StrJoin(tried, ", "),
      "; set KILN_DATA_DIR to the folder that holds it); kiln-train does not "
      "download: pass files with --train_file and --validation_file, or put "
      "train.tsv / train.csv / train.txt / train.jsonl (and validation or "
      "dev files) in "
      "one of those folders"));
}

} // namespace kiln::train
