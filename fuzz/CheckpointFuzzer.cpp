// libFuzzer target: bytes → a checkpoint folder as a resuming run finds it
// (frontends/nn/CheckpointFolder.h, CheckpointFile.h). The bytes become
// output_dir/checkpoint-7/checkpoint.safetensors; the newest-complete search
// must accept it only when it passes every check, and an accepted file must
// parse into contents without a model (the scalars range-checked). The
// first byte picks the form: raw bytes, or a safetensors payload given a
// valid checksum so that mutations get past it to the format and metadata.
#include "FuzzInput.h"

#include "frontends/nn/CheckpointFile.h"
#include "frontends/nn/CheckpointFolder.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace {

const std::filesystem::path &outputDir() {
  static const std::filesystem::path dir = [] {
    std::filesystem::path d = std::filesystem::temp_directory_path() /
                              ("kiln-checkpoint-fuzz." +
                               std::to_string(::getpid()));
    std::filesystem::create_directories(d / "checkpoint-7");
    return d;
  }();
  return dir;
}

/// A safetensors file carrying `payload`'s tensors and metadata with a
/// correct checksum, when the payload parses without one; else the payload.
std::string withChecksum(std::string_view payload) {
  using namespace kiln::nn;
  absl::StatusOr<SafetensorsData> parsed = parseSafetensors(payload);
  if (!parsed.ok())
    return std::string(payload);
  parsed->metadata.erase(kChecksumKey);
  absl::StatusOr<std::string> bytes =
      serializeSafetensors(parsed->tensors, parsed->metadata);
  return bytes.ok() ? *bytes : std::string(payload);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace kiln::nn;
  auto [mode, rest] = kiln::fuzz::splitMode(data, size, 2);
  std::filesystem::path file =
      outputDir() / "checkpoint-7" / kCheckpointFileName;
  {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    std::string bytes = mode == 0 ? std::string(rest) : withChecksum(rest);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  absl::StatusOr<ResumeChoice> choice =
      newestCompleteCheckpoint(outputDir().string());
  if (!choice.ok() || !choice->folder)
    return 0;
  absl::StatusOr<SafetensorsData> contents =
      readCheckpointFolder(choice->folder->path);
  if (!contents.ok())
    std::abort(); // the search accepted a folder that does not read
  (void)parseCheckpointContents(std::move(*contents), file.string());
  return 0;
}
