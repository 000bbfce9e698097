// CheckpointFolder tests: which folder a run resumes from (the newest whose
// file reads back whole; temporary, unfinished, damaged and oddly named
// folders are passed over, each named), the writer publishing a folder only
// on commit and replacing an existing checkpoint-N, save_total_limit
// rotation never deleting the folder just saved nor the newest, and the
// start-up recovery of what a killed writer left (by kind and by whether
// the writing process still lives). The kill test itself is
// tests/reliability/kill_resume.py.
#include "frontends/nn/CheckpointFolder.h"

#include "frontends/nn/Checkpoint.h"
#include "frontends/nn/Layers.h"

#include "FileTestSupport.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace kiln::nn {
namespace {

namespace fs = std::filesystem;

// A pid no process can have (above any pid_max) for a writer that died.
constexpr const char *kDeadPid = "999999999";

/// A fresh output directory, removed with everything in it at the end.
struct OutputDir {
  std::string path = kiln::testing::makeTempDir("kiln-ckptdir");
  ~OutputDir() { fs::remove_all(path); }
  std::string operator/(const std::string &name) const {
    return (fs::path(path) / name).string();
  }
};

/// A real checkpoint file for `step` in `folder` (made if missing).
void writeCheckpoint(const std::string &folder, int64_t step) {
  fs::create_directories(folder);
  InitContext init{uint64_t(step)};
  Linear layer(3, 2, init);
  save_checkpoint((fs::path(folder) / kCheckpointFileName).string(), layer,
                  nullptr, {}, {step, {}});
}

/// The names in a directory, sorted.
std::vector<std::string> names(const std::string &dir) {
  std::vector<std::string> out;
  for (const auto &entry : fs::directory_iterator(dir))
    out.push_back(entry.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

int64_t stepIn(const std::string &folder) {
  absl::StatusOr<SafetensorsData> file = readCheckpointFolder(folder);
  EXPECT_TRUE(file.ok()) << file.status();
  return file.ok() ? std::stoll(file->metadata.at("kiln.step")) : -1;
}

TEST(CheckpointFolder, OnlyCheckpointDashDigitsIsACheckpointName) {
  EXPECT_EQ(checkpointFolderStep("checkpoint-12"), 12);
  EXPECT_EQ(checkpointFolderStep("checkpoint-0"), 0);
  for (const char *name :
       {"checkpoint-", "checkpoint--1", "checkpoint-+1", "checkpoint-1a",
        "checkpoint-1 ", "Checkpoint-1", ".tmp-checkpoint-3.12",
        "checkpoint-9999999999999999999"})
    EXPECT_EQ(checkpointFolderStep(name), std::nullopt) << name;
}

TEST(CheckpointFolder, ResumesFromTheNewestCompleteFolderSkippingTheRest) {
  OutputDir out;
  writeCheckpoint(out / "checkpoint-1", 1);
  writeCheckpoint(out / "checkpoint-2", 2);
  // Half-written: the other files but no checkpoint file.
  fs::create_directories(out / "checkpoint-3");
  kiln::testing::writeWholeFile(out / "checkpoint-3/config.json", "{}");
  // Damaged: its checkpoint file cut short.
  writeCheckpoint(out / "checkpoint-4", 4);
  std::string file = out / "checkpoint-4/checkpoint.safetensors";
  fs::resize_file(file, fs::file_size(file) - 10);
  // Complete files under names that are not checkpoints: never picked.
  writeCheckpoint(out / (".tmp-checkpoint-5." + std::to_string(::getpid())), 5);
  writeCheckpoint(out / "checkpoint-6x", 6);
  kiln::testing::writeWholeFile(out / "checkpoint-7", "a file, not a folder");

  absl::StatusOr<ResumeChoice> choice = newestCompleteCheckpoint(out.path);
  ASSERT_TRUE(choice.ok()) << choice.status();
  ASSERT_TRUE(choice->folder.has_value());
  EXPECT_EQ(choice->folder->step, 2);
  EXPECT_EQ(choice->folder->path, out / "checkpoint-2");
  EXPECT_EQ(stepIn(choice->folder->path), 2);
  // Newest first, each naming its folder and what is wrong.
  ASSERT_EQ(choice->skipped.size(), 2u);
  EXPECT_NE(choice->skipped[0].find("checkpoint-4"), std::string::npos);
  EXPECT_NE(choice->skipped[0].find("truncated"), std::string::npos)
      << choice->skipped[0];
  EXPECT_NE(choice->skipped[1].find("checkpoint-3: no checkpoint.safetensors"),
            std::string::npos)
      << choice->skipped[1];
}

TEST(CheckpointFolder, NoCompleteFolderMeansNoResume) {
  OutputDir out;
  absl::StatusOr<ResumeChoice> empty = newestCompleteCheckpoint(out.path);
  ASSERT_TRUE(empty.ok());
  EXPECT_FALSE(empty->folder.has_value());
  EXPECT_TRUE(empty->skipped.empty());

  absl::StatusOr<ResumeChoice> missing =
      newestCompleteCheckpoint(out / "does-not-exist");
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->folder.has_value());

  // A bit flipped in the only checkpoint: skipped, nothing chosen.
  writeCheckpoint(out / "checkpoint-3", 3);
  std::string file = out / "checkpoint-3/checkpoint.safetensors";
  std::string bytes = kiln::testing::readWholeFile(file);
  bytes[bytes.size() - 5] ^= 0x01;
  kiln::testing::writeWholeFile(file, bytes);
  absl::StatusOr<ResumeChoice> flipped = newestCompleteCheckpoint(out.path);
  ASSERT_TRUE(flipped.ok());
  EXPECT_FALSE(flipped->folder.has_value());
  ASSERT_EQ(flipped->skipped.size(), 1u);
  EXPECT_NE(flipped->skipped[0].find("checksum mismatch"), std::string::npos)
      << flipped->skipped[0];
}

TEST(CheckpointFolder, AFolderGetsItsNameOnlyOnCommit) {
  OutputDir out;
  absl::StatusOr<CheckpointFolderWriter> writer =
      CheckpointFolderWriter::begin(out / "new", 7);
  ASSERT_TRUE(writer.ok()) << writer.status();
  EXPECT_EQ(writer->finalPath(), out / "new/checkpoint-7");
  EXPECT_EQ(writer->path(),
            out / ("new/.tmp-checkpoint-7." + std::to_string(::getpid())));
  writeCheckpoint(writer->path(), 7);
  kiln::testing::writeWholeFile(writer->path() + "/config.json", "{}");
  // Until the commit, nothing is a checkpoint.
  EXPECT_TRUE(listCheckpointFolders(out / "new")->empty());

  ASSERT_TRUE(writer->commit().ok());
  EXPECT_EQ(names(out / "new"), std::vector<std::string>{"checkpoint-7"});
  EXPECT_EQ(
      names(out / "new/checkpoint-7"),
      (std::vector<std::string>{"checkpoint.safetensors", "config.json"}));
  EXPECT_EQ(stepIn(out / "new/checkpoint-7"), 7);
  EXPECT_FALSE(writer->commit().ok()) << "a second commit must be refused";
}

TEST(CheckpointFolder, AnUncommittedWriterLeavesNothing) {
  OutputDir out;
  {
    absl::StatusOr<CheckpointFolderWriter> writer =
        CheckpointFolderWriter::begin(out.path, 3);
    ASSERT_TRUE(writer.ok());
    writeCheckpoint(writer->path(), 3);
  }
  EXPECT_TRUE(names(out.path).empty());
  EXPECT_FALSE(CheckpointFolderWriter::begin(out.path, -1).ok());
}

TEST(CheckpointFolder, CommitReplacesAnExistingCheckpointWhole) {
  OutputDir out;
  writeCheckpoint(out / "checkpoint-3", 100);
  kiln::testing::writeWholeFile(out / "checkpoint-3/stale.txt",
                                "from the old save");

  absl::StatusOr<CheckpointFolderWriter> writer =
      CheckpointFolderWriter::begin(out.path, 3);
  ASSERT_TRUE(writer.ok());
  writeCheckpoint(writer->path(), 3);
  // The old one is intact until the commit.
  EXPECT_EQ(stepIn(out / "checkpoint-3"), 100);
  ASSERT_TRUE(writer->commit().ok());

  EXPECT_EQ(stepIn(out / "checkpoint-3"), 3);
  EXPECT_EQ(names(out / "checkpoint-3"),
            std::vector<std::string>{"checkpoint.safetensors"});
  // Neither the moved-aside old folder nor the temporary one remains.
  EXPECT_EQ(names(out.path), std::vector<std::string>{"checkpoint-3"});
}

TEST(CheckpointFolder, RotationDeletesTheOldestAndKeepsTheNewest) {
  OutputDir out;
  for (int step = 1; step <= 5; ++step)
    writeCheckpoint(out / ("checkpoint-" + std::to_string(step)), step);

  absl::StatusOr<std::vector<std::string>> none =
      rotateCheckpoints(out.path, 0, out / "checkpoint-5");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());

  absl::StatusOr<std::vector<std::string>> removed =
      rotateCheckpoints(out.path, 3, out / "checkpoint-5");
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(*removed, (std::vector<std::string>{out / "checkpoint-1",
                                                out / "checkpoint-2"}));
  EXPECT_EQ(names(out.path),
            (std::vector<std::string>{"checkpoint-3", "checkpoint-4",
                                      "checkpoint-5"}));

  // The folder just saved (step 3, after resuming from an older one) and
  // the newest (5) both stay, even past the limit.
  removed = rotateCheckpoints(out.path, 1, out / "checkpoint-3/");
  ASSERT_TRUE(removed.ok());
  EXPECT_EQ(*removed, std::vector<std::string>{out / "checkpoint-4"});
  EXPECT_EQ(names(out.path),
            (std::vector<std::string>{"checkpoint-3", "checkpoint-5"}));
}

TEST(CheckpointFolder, RotationKeepsTheBestCheckpointToo) {
  OutputDir out;
  for (int step = 1; step <= 4; ++step)
    writeCheckpoint(out / ("checkpoint-" + std::to_string(step)), step);
  // load_best_model_at_end's best (step 1) stays beside the newest, which
  // is also the one just saved; 2 and 3 go, past the limit of 1.
  absl::StatusOr<std::vector<std::string>> removed = rotateCheckpoints(
      out.path, 1, out / "checkpoint-4", out / "checkpoint-1");
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(*removed, (std::vector<std::string>{out / "checkpoint-2",
                                                out / "checkpoint-3"}));
  EXPECT_EQ(names(out.path),
            (std::vector<std::string>{"checkpoint-1", "checkpoint-4"}));

  // The end of training with a limit of 1 (the Trainer's): the best alone,
  // the newest not kept.
  removed = rotateCheckpoints(out.path, 1, out / "checkpoint-1",
                              out / "checkpoint-1", /*keepNewest=*/false);
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(*removed, std::vector<std::string>{out / "checkpoint-4"});
  EXPECT_EQ(names(out.path), std::vector<std::string>{"checkpoint-1"});
}

// A checkpoint-N without kiln's file is somebody else's folder: kiln-train
// with --overwrite_output_dir deleted a user's checkpoint-7 whole. It is
// neither deleted, nor counted or deleted by rotation, nor replaced by a
// save of that step.
TEST(CheckpointFolder, AFolderThatIsNotKilnsIsNeverDeletedOrReplaced) {
  OutputDir out;
  fs::create_directories(out / "checkpoint-1");
  kiln::testing::writeWholeFile(out / "checkpoint-1/model.bin",
                                "a user's own checkpoint");
  for (int step = 2; step <= 4; ++step)
    writeCheckpoint(out / ("checkpoint-" + std::to_string(step)), step);
  EXPECT_FALSE(isKilnCheckpointFolder(out / "checkpoint-1"));
  EXPECT_TRUE(isKilnCheckpointFolder(out / "checkpoint-2"));

  absl::Status removed = removeCheckpointFolder(out / "checkpoint-1");
  EXPECT_EQ(removed.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(std::string(removed.message()).find("not a kiln checkpoint"),
            std::string::npos)
      << removed;

  absl::StatusOr<std::vector<std::string>> rotated =
      rotateCheckpoints(out.path, 2, out / "checkpoint-4");
  ASSERT_TRUE(rotated.ok()) << rotated.status();
  EXPECT_EQ(*rotated, std::vector<std::string>{out / "checkpoint-2"});

  {
    absl::StatusOr<CheckpointFolderWriter> writer =
        CheckpointFolderWriter::begin(out.path, 1);
    ASSERT_TRUE(writer.ok());
    writeCheckpoint(writer->path(), 1);
    EXPECT_EQ(writer->commit().code(), absl::StatusCode::kFailedPrecondition);
  }
  EXPECT_EQ(names(out / "checkpoint-1"), std::vector<std::string>{"model.bin"});
  EXPECT_EQ(names(out.path),
            (std::vector<std::string>{"checkpoint-1", "checkpoint-3",
                                      "checkpoint-4"}));
}

TEST(CheckpointFolder, RemovingAFolderLeavesNoTrace) {
  OutputDir out;
  writeCheckpoint(out / "checkpoint-2", 2);
  ASSERT_TRUE(removeCheckpointFolder(out / "checkpoint-2").ok());
  EXPECT_TRUE(names(out.path).empty());
  EXPECT_FALSE(removeCheckpointFolder(out / "checkpoint-2").ok());
}

TEST(CheckpointFolder, RecoveryTidiesWhatAKilledWriterLeft) {
  OutputDir out;
  std::string dead = kDeadPid, self = std::to_string(::getpid()),
              live = std::to_string(::getppid());
  // Killed while writing step 5 (and, by an earlier process with this
  // process's pid, step 8): unfinished, removed.
  writeCheckpoint(out / (".tmp-checkpoint-5." + dead), 5);
  fs::create_directories(out / (".tmp-checkpoint-8." + self));
  // Killed between moving checkpoint-4 aside and renaming its replacement:
  // the old one is put back.
  writeCheckpoint(out / (".old-checkpoint-4." + dead), 4);
  // Killed after checkpoint-3's replacement got the name: the old one goes.
  writeCheckpoint(out / "checkpoint-3", 3);
  writeCheckpoint(out / (".old-checkpoint-3." + dead), 103);
  // Killed while deleting a rotated-out folder.
  fs::create_directories(out / (".del-checkpoint-1." + dead));
  // Still being written by a live process: left alone.
  fs::create_directories(out / (".tmp-checkpoint-6." + live));
  // Names recovery does not own.
  fs::create_directories(out / ".tmp-notes");
  kiln::testing::writeWholeFile(out / "model.safetensors", "x");

  absl::StatusOr<std::vector<std::string>> notes =
      recoverCheckpointFolders(out.path);
  ASSERT_TRUE(notes.ok()) << notes.status();
  EXPECT_EQ(names(out.path),
            (std::vector<std::string>{".tmp-checkpoint-6." + live, ".tmp-notes",
                                      "checkpoint-3", "checkpoint-4",
                                      "model.safetensors"}));
  EXPECT_EQ(stepIn(out / "checkpoint-4"), 4);
  EXPECT_EQ(stepIn(out / "checkpoint-3"), 3);
  ASSERT_EQ(notes->size(), 6u);
  // Each note names its folder.
  std::string all;
  for (const std::string &note : *notes)
    all += note + "\n";
  EXPECT_NE(all.find("put back " + (out / "checkpoint-4") + " from .old-"),
            std::string::npos)
      << all;
  for (std::string name :
       {".tmp-checkpoint-5." + dead, ".tmp-checkpoint-8." + self,
        ".old-checkpoint-3." + dead, ".del-checkpoint-1." + dead})
    EXPECT_NE(all.find("removed " + (out / name)), std::string::npos) << all;
  EXPECT_NE(all.find("left " + (out / (".tmp-checkpoint-6." + live)) +
                     " alone: process " + live + " is still running"),
            std::string::npos)
      << all;

  // A second pass finds nothing more to do but the live writer's folder.
  notes = recoverCheckpointFolders(out.path);
  ASSERT_TRUE(notes.ok());
  EXPECT_EQ(notes->size(), 1u);
}

TEST(CheckpointFolder, RecoveryRemovesTheFinalSavesUnfinishedFiles) {
  OutputDir out;
  // A final save killed before its renames: the temporary files of
  // support/AtomicFile.h and the safetensors writer, in the folder and in
  // merged/ (--merge_lora).
  kiln::testing::writeWholeFile(out / "model.safetensors", "x");
  kiln::testing::writeWholeFile(out / "model.safetensors.tmp-za0Nri", "xx");
  kiln::testing::writeWholeFile(out / "config.json.tmp-AbC123", "{");
  fs::create_directories(out / "merged");
  kiln::testing::writeWholeFile(out / "merged/config.json.tmp-q1w2e3", "{");
  // Names that are not a temporary file's: kept.
  kiln::testing::writeWholeFile(out / "notes.tmp-ab", "mine");
  kiln::testing::writeWholeFile(out / "notes.tmp-abcdefg", "mine");
  kiln::testing::writeWholeFile(out / ".tmp-abcdef", "mine");
  fs::create_directories(out / "folder.tmp-abcdef");

  absl::StatusOr<std::vector<std::string>> notes =
      recoverCheckpointFolders(out.path);
  ASSERT_TRUE(notes.ok()) << notes.status();
  EXPECT_EQ(names(out.path),
            (std::vector<std::string>{".tmp-abcdef", "folder.tmp-abcdef",
                                      "merged", "model.safetensors",
                                      "notes.tmp-ab", "notes.tmp-abcdefg"}));
  EXPECT_TRUE(names(out / "merged").empty());
  std::vector<std::string> expected;
  for (const char *file :
       {"config.json.tmp-AbC123", "merged/config.json.tmp-q1w2e3",
        "model.safetensors.tmp-za0Nri"})
    expected.push_back("removed " + (out / file) +
                       ", the unfinished file of a killed save");
  EXPECT_EQ(*notes, expected);
}

} // namespace
} // namespace kiln::nn
