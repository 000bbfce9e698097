// Crash-safe checkpoint folders; see CheckpointFolder.h. What makes it safe
// is the order of operations: a folder gets its checkpoint-N name by one
// rename, after everything in it is on disk, and a name is only ever taken
// away by a rename too. So at every moment each checkpoint-N folder is
// complete, and a hidden name (".tmp-", ".old-", ".del-" + name + ".<pid>")
// says what a killed writer was doing, for recoverCheckpointFolders().
#include "frontends/nn/CheckpointFolder.h"

#include "frontends/nn/CheckpointFile.h"

#include "absl/strings/str_cat.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <unistd.h>

namespace kiln::nn {
namespace {

namespace fs = std::filesystem;

// std::string, not string_view: this Abseil's StrCat takes no
// std::string_view.
const std::string kFolderPrefix = "checkpoint-";
// A temporary folder being written; a replaced checkpoint moved aside; a
// folder being deleted.
const std::string kTempPrefix = ".tmp-", kOldPrefix = ".old-",
                  kDeletePrefix = ".del-";

std::string pidSuffix() { return "." + std::to_string(::getpid()); }

absl::Status errnoStatus(const std::string &what) {
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(errno)));
}

// fsync of a file or a folder: a rename is durable only once the folder
// holding the new entry is synced, and the data only once the file is.
absl::Status fsyncPath(const std::string &path, bool directory) {
  int fd = ::open(path.c_str(),
                  O_RDONLY | O_CLOEXEC | (directory ? O_DIRECTORY : 0));
  if (fd < 0)
    return errnoStatus("cannot open '" + path + "' to sync it");
  int rc = ::fsync(fd);
  int savedErrno = errno;
  ::close(fd);
  errno = savedErrno;
  return rc == 0 ? absl::OkStatus() : errnoStatus("fsync of '" + path + "'");
}

absl::Status renamePath(const std::string &from, const std::string &to) {
  if (::rename(from.c_str(), to.c_str()) != 0)
    return errnoStatus("cannot rename '" + from + "' to '" + to + "'");
  return absl::OkStatus();
}

absl::Status removeTree(const std::string &path) {
  std::error_code ec;
  fs::remove_all(path, ec);
  if (ec)
    return absl::InternalError(
        absl::StrCat("cannot remove '", path, "': ", ec.message()));
  return absl::OkStatus();
}

// A folder's last path component, ignoring trailing slashes.
std::string baseName(const std::string &path) {
  fs::path p(path);
  while (!p.empty() && p.filename().empty())
    p = p.parent_path();
  return p.filename().string();
}

std::string parentOf(const std::string &path) {
  fs::path p(path);
  while (!p.empty() && p.filename().empty())
    p = p.parent_path();
  fs::path parent = p.parent_path();
  return parent.empty() ? "." : parent.string();
}

// A hidden folder a writer made: which kind, the name it stands for
// ("checkpoint-N") and the writer's pid.
struct Leftover {
  std::string kind;
  std::string name;
  pid_t pid;
};

std::optional<Leftover> parseLeftover(const std::string &entry) {
  for (const std::string &kind : {kTempPrefix, kOldPrefix, kDeletePrefix}) {
    if (entry.rfind(kind, 0) != 0)
      continue;
    size_t dot = entry.rfind('.');
    std::string pid = entry.substr(dot + 1);
    if (dot <= kind.size() || pid.empty() || pid.size() > 9 ||
        !std::all_of(pid.begin(), pid.end(),
                     [](char c) { return c >= '0' && c <= '9'; }))
      return std::nullopt;
    return Leftover{kind, entry.substr(kind.size(), dot - kind.size()),
                    pid_t(std::stol(pid))};
  }
  return std::nullopt;
}

// The refusal to delete or replace a folder that is not kiln's checkpoint.
absl::Status notKilns(const std::string &folder, const char *verb) {
  return absl::FailedPreconditionError(
      absl::StrCat("'", folder, "' holds no ", kCheckpointFileName,
                   ": not a kiln checkpoint, so it is not ", verb,
                   "; move it out of the output directory"));
}

// Whether a pid belongs to another running process (which may still be
// writing its folder). This process's own pid is a leftover of an earlier
// process that had the same pid (pids repeat, in containers especially).
bool otherProcessAlive(pid_t pid) {
  if (pid == ::getpid())
    return false;
  return ::kill(pid, 0) == 0 || errno == EPERM;
}

} // namespace

std::optional<int64_t> checkpointFolderStep(std::string_view name) {
  if (name.substr(0, kFolderPrefix.size()) != kFolderPrefix)
    return std::nullopt;
  std::string_view digits = name.substr(kFolderPrefix.size());
  // 18 digits cannot overflow int64_t.
  if (digits.empty() || digits.size() > 18 ||
      !std::all_of(digits.begin(), digits.end(),
                   [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  return std::stoll(std::string(digits));
}

bool isKilnCheckpointFolder(const std::string &folder) {
  std::error_code ec;
  return fs::is_regular_file(fs::path(folder) / kCheckpointFileName, ec);
}

// Whether `entry` is the temporary file of an atomic write
// (support/AtomicFile.h, mkstemp's "<name>.tmp-XXXXXX": six letters or
// digits) that a killed writer left.
bool isAbandonedTempFile(const std::string &entry) {
  size_t at = entry.rfind(".tmp-");
  return at != std::string::npos && at > 0 && entry.size() == at + 11 &&
         std::all_of(entry.begin() + at + 5, entry.end(),
                     [](char c) { return std::isalnum((unsigned char)c); });
}

bool isCheckpointLeftover(const std::string &entryName) {
  return parseLeftover(entryName).has_value();
}

absl::StatusOr<std::vector<CheckpointFolder>>
listCheckpointFolders(const std::string &outputDir) {
  std::vector<CheckpointFolder> folders;
  std::error_code ec;
  if (!fs::exists(outputDir, ec))
    return folders;
  for (fs::directory_iterator it(outputDir, ec), end; !ec && it != end;
       it.increment(ec)) {
    std::optional<int64_t> step =
        checkpointFolderStep(it->path().filename().string());
    std::error_code typeEc;
    if (step && it->is_directory(typeEc))
      folders.push_back({it->path().string(), *step});
  }
  if (ec)
    return absl::InternalError(
        absl::StrCat("cannot list '", outputDir, "': ", ec.message()));
  std::sort(folders.begin(), folders.end(),
            [](const CheckpointFolder &a, const CheckpointFolder &b) {
              return a.step > b.step;
            });
  return folders;
}

absl::StatusOr<SafetensorsData>
readCheckpointFolder(const std::string &folder) {
  std::string file = (fs::path(folder) / kCheckpointFileName).string();
  std::error_code ec;
  if (!fs::is_regular_file(file, ec))
    return absl::NotFoundError(
        absl::StrCat("no ", kCheckpointFileName,
                     " (a save that never finished, or files removed)"));
  return read_checkpoint_file(file);
}

absl::Status verifyCheckpointFolder(const std::string &folder) {
  return readCheckpointFolder(folder).status();
}

absl::StatusOr<ResumeChoice> newestCompleteCheckpoint(
    const std::string &outputDir,
    const std::function<absl::Status(const CheckpointFolder &)> &check) {
  absl::StatusOr<std::vector<CheckpointFolder>> folders =
      listCheckpointFolders(outputDir);
  if (!folders.ok())
    return folders.status();
  ResumeChoice choice;
  for (const CheckpointFolder &folder : *folders) {
    absl::Status status = check(folder);
    if (status.ok()) {
      choice.folder = folder;
      break;
    }
    choice.skipped.push_back(absl::StrCat(folder.path, ": ", status.message()));
  }
  return choice;
}

// ---- Writing -------------------------------------------------------------

CheckpointFolderWriter::CheckpointFolderWriter(std::string outputDir,
                                               std::string tempPath,
                                               std::string finalPath,
                                               int64_t step)
    : outputDir_(std::move(outputDir)), tempPath_(std::move(tempPath)),
      finalPath_(std::move(finalPath)), step_(step) {}

CheckpointFolderWriter::CheckpointFolderWriter(
    CheckpointFolderWriter &&other) noexcept
    : outputDir_(std::move(other.outputDir_)),
      tempPath_(std::move(other.tempPath_)),
      finalPath_(std::move(other.finalPath_)), step_(other.step_),
      committed_(other.committed_) {
  // The moved-from writer must not remove the folder in its destructor.
  other.committed_ = true;
}

CheckpointFolderWriter::~CheckpointFolderWriter() {
  if (!committed_ && !tempPath_.empty()) {
    std::error_code ec;
    fs::remove_all(tempPath_, ec);
  }
}

absl::StatusOr<CheckpointFolderWriter>
CheckpointFolderWriter::begin(const std::string &outputDir, int64_t step) {
  if (step < 0)
    return absl::InvalidArgumentError(
        absl::StrCat("checkpoint step must not be negative, got ", step));
  std::error_code ec;
  fs::create_directories(outputDir, ec);
  if (ec)
    return absl::InternalError(
        absl::StrCat("cannot create '", outputDir, "': ", ec.message()));
  std::string name = absl::StrCat(kFolderPrefix, step);
  std::string temp =
      (fs::path(outputDir) / absl::StrCat(kTempPrefix, name, pidSuffix()))
          .string();
  // Only a failed earlier save with this pid can have left it.
  if (absl::Status s = removeTree(temp); !s.ok())
    return s;
  if (!fs::create_directory(temp, ec) || ec)
    return absl::InternalError(absl::StrCat(
        "cannot create '", temp, "': ", ec ? ec.message() : "it exists"));
  return CheckpointFolderWriter(outputDir, temp,
                                checkpointFolderPath(outputDir, step), step);
}

std::string checkpointFolderPath(const std::string &outputDir, int64_t step) {
  return (fs::path(outputDir) / absl::StrCat(kFolderPrefix, step)).string();
}

absl::Status CheckpointFolderWriter::commit() {
  if (committed_)
    return absl::FailedPreconditionError(
        absl::StrCat("'", finalPath_, "' was already committed"));
  // 1. Everything inside on disk, then the folder's own entries.
  std::error_code ec;
  for (fs::recursive_directory_iterator it(tempPath_, ec), end;
       !ec && it != end; it.increment(ec)) {
    std::error_code typeEc;
    bool directory = it->is_directory(typeEc);
    if (absl::Status s = fsyncPath(it->path().string(), directory); !s.ok())
      return s;
  }
  if (ec)
    return absl::InternalError(
        absl::StrCat("cannot list '", tempPath_, "': ", ec.message()));
  if (absl::Status s = fsyncPath(tempPath_, true); !s.ok())
    return s;

  // 2. An existing checkpoint-N (this step saved again after a resume from
  //    an earlier one) is moved aside, never deleted before the new folder
  //    has the name: a kill in between leaves it for recovery to put back.
  std::string old;
  if (fs::exists(finalPath_, ec)) {
    if (!isKilnCheckpointFolder(finalPath_))
      return notKilns(finalPath_, "replaced");
    old = (fs::path(outputDir_) /
           absl::StrCat(kOldPrefix, baseName(finalPath_), pidSuffix()))
              .string();
    if (absl::Status s = removeTree(old); !s.ok())
      return s;
    if (absl::Status s = renamePath(finalPath_, old); !s.ok())
      return s;
  }

  // 3. The one step that publishes the checkpoint.
  if (absl::Status s = renamePath(tempPath_, finalPath_); !s.ok()) {
    if (!old.empty())
      (void)renamePath(old, finalPath_); // best effort: the old one back
    return s;
  }
  committed_ = true;
  if (absl::Status s = fsyncPath(outputDir_, true); !s.ok())
    return s;

  // 4. Only now is the replaced folder expendable.
  if (!old.empty())
    if (absl::Status s = removeTree(old); !s.ok())
      return absl::InternalError(
          absl::StrCat("'", finalPath_,
                       "' was saved, but the folder it replaced could not be "
                       "deleted: ",
                       s.message()));
  return absl::OkStatus();
}

// ---- Deleting ------------------------------------------------------------

absl::Status removeCheckpointFolder(const std::string &folder) {
  if (!isKilnCheckpointFolder(folder))
    return notKilns(folder, "deleted");
  std::string parent = parentOf(folder);
  std::string doomed =
      (fs::path(parent) /
       absl::StrCat(kDeletePrefix, baseName(folder), pidSuffix()))
          .string();
  if (absl::Status s = removeTree(doomed); !s.ok())
    return s;
  if (absl::Status s = renamePath(folder, doomed); !s.ok())
    return s;
  // The name is gone for good before any file inside is.
  if (absl::Status s = fsyncPath(parent, true); !s.ok())
    return s;
  return removeTree(doomed);
}

absl::StatusOr<std::vector<std::string>>
rotateCheckpoints(const std::string &outputDir, int64_t limit,
                  const std::string &keep, const std::string &keepAlso,
                  bool keepNewest) {
  std::vector<std::string> removed;
  if (limit <= 0)
    return removed;
  absl::StatusOr<std::vector<CheckpointFolder>> folders =
      listCheckpointFolders(outputDir);
  if (!folders.ok())
    return folders.status();
  folders->erase(std::remove_if(folders->begin(), folders->end(),
                                [](const CheckpointFolder &folder) {
                                  return !isKilnCheckpointFolder(folder.path);
                                }),
                 folders->end());
  std::string keepName = baseName(keep);
  std::string keepAlsoName = keepAlso.empty() ? "" : baseName(keepAlso);
  size_t remaining = folders->size();
  // Oldest first; index 0, the highest step, only when not kept.
  const size_t last = keepNewest ? 1 : 0;
  for (size_t i = folders->size(); i-- > last && remaining > size_t(limit);) {
    const CheckpointFolder &folder = (*folders)[i];
    std::string name = baseName(folder.path);
    if (name == keepName || name == keepAlsoName)
      continue;
    if (absl::Status s = removeCheckpointFolder(folder.path); !s.ok())
      return s;
    removed.push_back(folder.path);
    --remaining;
  }
  return removed;
}

absl::StatusOr<std::vector<std::string>>
recoverCheckpointFolders(const std::string &outputDir) {
  std::vector<std::string> notes;
  std::error_code ec;
  if (!fs::exists(outputDir, ec))
    return notes;
  std::vector<std::pair<std::string, Leftover>> leftovers;
  std::vector<std::string> tempFiles;
  // The final save's files are in the folder and, with --merge_lora, in
  // merged/ (a checkpoint's own are inside its temporary folder).
  for (const fs::path &dir :
       {fs::path(outputDir), fs::path(outputDir) / "merged"}) {
    if (!fs::is_directory(dir, ec))
      continue;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end;
         it.increment(ec)) {
      std::string entry = it->path().filename().string();
      if (std::optional<Leftover> leftover = parseLeftover(entry);
          leftover && dir == fs::path(outputDir))
        leftovers.push_back({it->path().string(), *leftover});
      else if (isAbandonedTempFile(entry) &&
               it->symlink_status(ec).type() == fs::file_type::regular)
        tempFiles.push_back(it->path().string());
    }
    if (ec)
      return absl::InternalError(
          absl::StrCat("cannot list '", dir.string(), "': ", ec.message()));
  }
  // mkstemp's names carry no pid: this runs before the run saves anything,
  // and another run saving into the same folder would clash anyway.
  std::sort(tempFiles.begin(), tempFiles.end());
  for (const std::string &path : tempFiles) {
    if (!fs::remove(path, ec) && ec)
      return absl::InternalError(
          absl::StrCat("cannot remove '", path, "': ", ec.message()));
    notes.push_back(absl::StrCat("removed ", path,
                                 ", the unfinished file of a killed save"));
  }
  // Replaced checkpoints first: one may have to get its name back, which
  // must not wait on deleting anything else.
  std::stable_partition(leftovers.begin(), leftovers.end(),
                        [](auto &l) { return l.second.kind == kOldPrefix; });
  for (const auto &[path, leftover] : leftovers) {
    std::string name = baseName(path);
    if (otherProcessAlive(leftover.pid)) {
      notes.push_back(absl::StrCat("left ", path, " alone: process ",
                                   leftover.pid, " is still running"));
      continue;
    }
    std::string target = (fs::path(outputDir) / leftover.name).string();
    if (leftover.kind == kOldPrefix && checkpointFolderStep(leftover.name) &&
        !fs::exists(target, ec)) {
      if (absl::Status s = renamePath(path, target); !s.ok())
        return s;
      if (absl::Status s = fsyncPath(outputDir, true); !s.ok())
        return s;
      notes.push_back(absl::StrCat("put back ", target, " from ", name,
                                   ": a killed save had moved it aside "
                                   "before its replacement got the name"));
      continue;
    }
    if (absl::Status s = removeTree(path); !s.ok())
      return s;
    notes.push_back(
        leftover.kind == kTempPrefix
            ? absl::StrCat("removed ", path,
                           ", the unfinished checkpoint of a killed save")
        : leftover.kind == kOldPrefix
            ? absl::StrCat("removed ", path, ", the old ", leftover.name,
                           " that a killed save had already replaced")
            : absl::StrCat("removed ", path,
                           ", a folder a killed run was deleting"));
  }
  return notes;
}

} // namespace kiln::nn
