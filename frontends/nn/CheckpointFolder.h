// The checkpoint-N folders of a training run's output directory, kept so
// that a process killed at any moment (SIGKILL, power loss) leaves only
// complete checkpoints under their real names. A folder is written under a
// hidden temporary name (".tmp-checkpoint-N.<pid>"), every file and the
// folder are fsynced, and only then is it renamed whole to checkpoint-N and
// the output directory fsynced. Replacing an existing checkpoint-N moves the
// old one aside (".old-…") first and deletes it once the new one is in
// place; deleting renames to ".del-…" first, so a half-deleted folder never
// carries a checkpoint's name. recoverCheckpointFolders() tidies what a
// killed writer left; newestCompleteCheckpoint() picks the folder to resume
// from, passing over any whose file is missing or damaged; and
// rotateCheckpoints() applies Hugging Face's save_total_limit. Errors are
// absl::Status values naming the path; messages for the user are returned,
// not printed, so the caller decides where they go.
#ifndef KILN_FRONTENDS_NN_CHECKPOINTFOLDER_H
#define KILN_FRONTENDS_NN_CHECKPOINTFOLDER_H

#include "frontends/nn/Safetensors.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::nn {

/// The file that makes a checkpoint folder complete (with kiln's checksum).
inline constexpr const char *kCheckpointFileName = "checkpoint.safetensors";

/// One checkpoint-N folder of an output directory.
struct CheckpointFolder {
  std::string path;
  int64_t step = 0;
};

/// "checkpoint-N" (N decimal digits, no sign) → N; any other name → nullopt.
std::optional<int64_t> checkpointFolderStep(std::string_view name);

/// Whether a folder is kiln's checkpoint: it holds kCheckpointFileName. A
/// writer publishes a folder only with its file, so a checkpoint-N without
/// one is somebody else's (another tool's checkpoint, a user's folder):
/// kiln neither deletes nor replaces it.
bool isKilnCheckpointFolder(const std::string &folder);

/// Whether an output directory's entry is what a killed writer leaves
/// (".tmp-…", ".old-…" or ".del-checkpoint-N.<pid>").
bool isCheckpointLeftover(const std::string &entryName);

/// outputDir → its checkpoint-N folders, highest step first. Temporary and
/// other names are not listed; a missing outputDir has none.
absl::StatusOr<std::vector<CheckpointFolder>>
listCheckpointFolders(const std::string &outputDir);

/// A folder → its checkpoint file's contents, read_checkpoint_file's checks
/// passed (checksum, format); else why not (NotFound: no file).
absl::StatusOr<SafetensorsData> readCheckpointFolder(const std::string &folder);

/// readCheckpointFolder without keeping the contents.
absl::Status verifyCheckpointFolder(const std::string &folder);

/// The folder to resume from, and a message for each newer one passed over.
struct ResumeChoice {
  std::optional<CheckpointFolder> folder;
  std::vector<std::string> skipped;
};

/// outputDir → the newest checkpoint-N folder that `check` accepts (by
/// default verifyCheckpointFolder); each newer folder it refuses gives a
/// message naming the folder and the reason. No folder accepted: none.
absl::StatusOr<ResumeChoice> newestCompleteCheckpoint(
    const std::string &outputDir,
    const std::function<absl::Status(const CheckpointFolder &)> &check =
        [](const CheckpointFolder &f) {
          return verifyCheckpointFolder(f.path);
        });

/// outputDir/checkpoint-N: where step N's checkpoint is saved.
std::string checkpointFolderPath(const std::string &outputDir, int64_t step);

/// Writes one checkpoint folder: files go into path() (a temporary folder);
/// commit() makes them durable and renames the folder to checkpoint-N. A
/// writer destroyed without a successful commit removes its temporary
/// folder, so a failed save leaves the output directory as it was.
class CheckpointFolderWriter {
public:
  /// outputDir, step → a writer with an empty temporary folder
  /// ".tmp-checkpoint-N.<pid>" in outputDir (made if missing).
  static absl::StatusOr<CheckpointFolderWriter>
  begin(const std::string &outputDir, int64_t step);
  CheckpointFolderWriter(CheckpointFolderWriter &&other) noexcept;
  CheckpointFolderWriter &operator=(CheckpointFolderWriter &&) = delete;
  ~CheckpointFolderWriter();

  /// Where the checkpoint's files are to be written.
  const std::string &path() const { return tempPath_; }
  /// outputDir/checkpoint-N, the folder's name once committed.
  const std::string &finalPath() const { return finalPath_; }

  /// Every file and the folder fsynced → renamed to finalPath() (an
  /// existing folder of that name is replaced: moved aside, then deleted
  /// after the rename; one that is not kiln's is refused with
  /// FailedPrecondition and left as it is) → outputDir fsynced.
  absl::Status commit();

private:
  CheckpointFolderWriter(std::string outputDir, std::string tempPath,
                         std::string finalPath, int64_t step);

  std::string outputDir_, tempPath_, finalPath_;
  int64_t step_;
  bool committed_ = false;
};

/// After a save: deletes the lowest-step checkpoint-N folders until at most
/// `limit` of kiln's remain (Hugging Face's save_total_limit; folders that
/// are not kiln's are neither counted nor deleted), never `keep` (the
/// folder just saved), `keepAlso` (the best so far, under
/// load_best_model_at_end; "" for none) nor, with `keepNewest`, the
/// highest-step folder, so the result may exceed `limit` (the Trainer's
/// end of training with a limit of 1 passes false: the best alone stays).
/// limit <= 0: no limit. → the folders deleted.
absl::StatusOr<std::vector<std::string>>
rotateCheckpoints(const std::string &outputDir, int64_t limit,
                  const std::string &keep, const std::string &keepAlso = "",
                  bool keepNewest = true);

/// Deletes a checkpoint folder so that no half-deleted folder keeps its
/// name: renamed to ".del-checkpoint-N.<pid>" first, then removed. A folder
/// that is not kiln's is refused (FailedPrecondition) and left as it is.
absl::Status removeCheckpointFolder(const std::string &folder);

/// At startup, before anything is saved: what a killed writer left in
/// outputDir is tidied. Temporary and half-deleted folders are removed; a
/// replaced checkpoint moved aside but never deleted is deleted, or put back
/// when its replacement never got its name. Folders of a live process (by
/// the pid in the name, this process excepted) are left alone. An atomic
/// write's temporary file ("model.safetensors.tmp-XXXXXX",
/// support/AtomicFile.h) in outputDir or outputDir/merged is removed. → a
/// message per folder or file handled.
absl::StatusOr<std::vector<std::string>>
recoverCheckpointFolders(const std::string &outputDir);

} // namespace kiln::nn

#endif // KILN_FRONTENDS_NN_CHECKPOINTFOLDER_H
