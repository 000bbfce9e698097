// kiln's MPI plugin (libkiln-mpi.so): the communicator of MPI_COMM_WORLD,
// which runtime/World.cpp loads with dlopen when a launcher started several
// processes. Kept out of the runtime library so that programs that run
// alone never need libmpi.
#include "support/Collectives.h"

#include "absl/strings/str_cat.h"

#include <mpi.h>

#include <climits>
#include <cstdio>
#include <cstdlib>

namespace {

class MpiCommunicator final : public kiln::Communicator {
public:
  MpiCommunicator(int rank, int size) : rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  absl::Status allReduceSum(void *data, int64_t count,
                            kiln::DType type) override {
    MPI_Datatype datatype;
    switch (type) {
    case kiln::DType::f32:
      datatype = MPI_FLOAT;
      break;
    case kiln::DType::f64:
      datatype = MPI_DOUBLE;
      break;
    case kiln::DType::i32:
      datatype = MPI_INT32_T;
      break;
    case kiln::DType::i64:
      datatype = MPI_INT64_T;
      break;
    default:
      return absl::InvalidArgumentError(
          "MPI all_reduce of an unsupported type");
    }
    // MPI counts are ints: a larger tensor goes in pieces.
    auto *bytes = static_cast<char *>(data);
    const int64_t width =
        type == kiln::DType::f32 || type == kiln::DType::i32 ? 4 : 8;
    for (int64_t done = 0; done < count;) {
      int piece = static_cast<int>(std::min<int64_t>(count - done, INT_MAX));
      int status = MPI_Allreduce(MPI_IN_PLACE, bytes + done * width, piece,
                                 datatype, MPI_SUM, MPI_COMM_WORLD);
      if (status != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING];
        int length = 0;
        MPI_Error_string(status, text, &length);
        return absl::UnavailableError(
            absl::StrCat("MPI_Allreduce failed: ", std::string(text, length)));
      }
      done += piece;
    }
    return absl::OkStatus();
  }

  absl::Status barrier() override {
    if (MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS)
      return absl::UnavailableError("MPI_Barrier failed");
    return absl::OkStatus();
  }

  void abort(int exitCode) override {
    MPI_Abort(MPI_COMM_WORLD, exitCode);
    std::_Exit(exitCode); // MPI_Abort should not return
  }

private:
  int rank_, size_;
};

void finalize() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized)
    MPI_Finalize();
}

} // namespace

extern "C" __attribute__((visibility("default"))) kiln::Communicator *
kiln_mpi_communicator(char *error, size_t errorBytes) {
  static MpiCommunicator *communicator = nullptr;
  if (communicator)
    return communicator;
  int initialized = 0;
  MPI_Initialized(&initialized);
  // Errors come back as codes (MPI_ERRORS_RETURN) so that kiln names them.
  if (!initialized) {
    int provided = 0;
    // Only the thread that runs the program's thunks calls MPI.
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) !=
        MPI_SUCCESS) {
      std::snprintf(error, errorBytes, "MPI_Init_thread failed");
      return nullptr;
    }
    std::atexit(finalize);
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  communicator = new MpiCommunicator(rank, size);
  return communicator;
}
