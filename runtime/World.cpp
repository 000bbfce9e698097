#include "runtime/World.h"

#include "support/CollectiveTimeout.h"
#include "support/Collectives.h"

#include "absl/strings/str_cat.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace kiln::runtime {

namespace {

/// The plugin's one entry point (runtime/mpi/MpiCommunicator.cpp): the
/// communicator of MPI_COMM_WORLD after MPI_Init, or null with `error`
/// filled.
using CreateCommunicator = Communicator *(*)(char *error, size_t errorBytes);
constexpr const char *kEntryPoint = "kiln_mpi_communicator";

/// bin/program → lib/libkiln-mpi.so, as the build and an install lay them.
std::string defaultPluginPath() {
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0)
    return "libkiln-mpi.so";
  std::string path(exe, n);
  path = path.substr(0, path.find_last_of('/'));     // bin
  path = path.substr(0, path.find_last_of('/') + 1); // its parent, with '/'
  return path + "lib/libkiln-mpi.so";
}

absl::Status join() {
  absl::StatusOr<WorldPlacement> placement = launcherPlacement();
  if (!placement.ok())
    return placement.status();
  if (placement->size == 1)
    return absl::OkStatus();
  // Read before MPI starts, so that a malformed value stops no one midway.
  if (const char *text = std::getenv("KILN_COLLECTIVE_TIMEOUT");
      text && *text) {
    absl::StatusOr<absl::Duration> limit =
        parseTimeoutSeconds(text, "KILN_COLLECTIVE_TIMEOUT");
    if (!limit.ok())
      return limit.status();
    setCollectiveTimeout(
        {*limit, absl::StrCat("KILN_COLLECTIVE_TIMEOUT=", text)});
  }
  const char *named = std::getenv("KILN_MPI_PLUGIN");
  std::string path = named && *named ? named : defaultPluginPath();
  std::string where =
      absl::StrCat("rank ", placement->rank, " of ", placement->size, " (",
                   placement->source, ")");
  // RTLD_GLOBAL: Open MPI's own components find libmpi's symbols.
  void *plugin = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!plugin)
    return absl::FailedPreconditionError(absl::StrCat(
        where, ": cannot load kiln's MPI plugin ", path, " (", dlerror(),
        "); it is built when CMake finds Open MPI (libopenmpi-dev), and "
        "KILN_MPI_PLUGIN names another"));
  auto create =
      reinterpret_cast<CreateCommunicator>(dlsym(plugin, kEntryPoint));
  if (!create)
    return absl::FailedPreconditionError(
        absl::StrCat(path, " has no ", kEntryPoint));
  char error[512] = "";
  Communicator *communicator = create(error, sizeof error);
  if (!communicator)
    return absl::UnavailableError(absl::StrCat(where, ": ", error));
  if (communicator->size() != placement->size ||
      communicator->rank() != placement->rank)
    return absl::FailedPreconditionError(
        absl::StrCat(where, ": MPI placed this process as rank ",
                     communicator->rank(), " of ", communicator->size()));
  // Each collective under the deadline (support/CollectiveTimeout.h).
  // Never freed, as the plugin's own: collectives may run until exit.
  setWorldCommunicator(withCollectiveTimeout(*communicator).release());
  return absl::OkStatus();
}

} // namespace

absl::Status joinWorld() {
  static const absl::Status joined = join();
  return joined;
}

} // namespace kiln::runtime
