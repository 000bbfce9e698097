#include "support/Collectives.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

#include <atomic>
#include <cstdlib>
#include <optional>

namespace kiln {

namespace {
std::atomic<Communicator *> &world() {
  static std::atomic<Communicator *> communicator{nullptr};
  return communicator;
}
} // namespace

Communicator *worldCommunicator() { return world().load(); }

void setWorldCommunicator(Communicator *communicator) {
  world().store(communicator);
}

bool isAllReduceType(DType type) {
  return type == DType::f32 || type == DType::f64 || type == DType::i32 ||
         type == DType::i64;
}

namespace {
/// A launcher's variable as a count: nullopt when unset; -1 when malformed.
std::optional<int> launcherNumber(const char *name) {
  const char *text = std::getenv(name);
  if (!text)
    return std::nullopt;
  int value;
  if (!absl::SimpleAtoi(text, &value) || value < 0)
    return -1;
  return value;
}
} // namespace

absl::StatusOr<WorldPlacement> launcherPlacement() {
  static const char *const kPairs[][3] = {
      {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK",
       "OMPI_COMM_WORLD_SIZE/RANK"},
      {"PMI_SIZE", "PMI_RANK", "PMI_SIZE/RANK"}};
  for (const auto &pair : kPairs) {
    std::optional<int> size = launcherNumber(pair[0]);
    if (!size)
      continue;
    std::optional<int> rank = launcherNumber(pair[1]);
    if (*size < 1 || !rank || *rank < 0 || *rank >= *size)
      return absl::InvalidArgumentError(absl::StrCat(
          "the launcher's ", pair[0], "=", std::getenv(pair[0]), " and ",
          pair[1], "=", std::getenv(pair[1]) ? std::getenv(pair[1]) : "(unset)",
          " do not place this process: a size of at least 1 and a rank "
          "below it"));
    int local = *size;
    for (const char *name : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"})
      if (std::optional<int> given = launcherNumber(name);
          given && *given >= 1 && *given <= *size) {
        local = *given;
        break;
      }
    return WorldPlacement{*size, *rank, local, pair[2]};
  }
  if (std::optional<int> torchrun = launcherNumber("WORLD_SIZE");
      torchrun && *torchrun != 1)
    return absl::InvalidArgumentError(absl::StrCat(
        "WORLD_SIZE=", std::getenv("WORLD_SIZE"),
        " (torchrun's) without an MPI launcher: kiln's processes find each "
        "other through MPI; start them with mpirun -np N instead"));
  return WorldPlacement{};
}

absl::Status allReduceSumInPlace(void *data, int64_t count, DType type) {
  if (!isAllReduceType(type))
    return absl::InvalidArgumentError(
        "all_reduce sums f32, f64, i32 or i64 elements, not " +
        std::string(dtypeName(type)));
  if (Communicator *communicator = worldCommunicator())
    return count == 0 ? absl::OkStatus()
                      : communicator->allReduceSum(data, count, type);
  absl::StatusOr<WorldPlacement> placement = launcherPlacement();
  if (!placement.ok())
    return placement.status();
  if (placement->size > 1)
    return absl::FailedPreconditionError(absl::StrCat(
        "this process is rank ", placement->rank, " of ", placement->size, " (",
        placement->source,
        ") but has not joined the others (kiln::world_size() joins them)"));
  return absl::OkStatus();
}

} // namespace kiln
