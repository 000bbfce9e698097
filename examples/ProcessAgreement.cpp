// The processes' command lines and data compared; see ProcessAgreement.h.
#include "examples/ProcessAgreement.h"

#include "examples/TrainArgs.h"
#include "examples/TrainData.h"
#include "frontends/lazy/Tensor.h"
#include "support/Collectives.h"
#include "support/EnvironmentSwitch.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"

#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <unistd.h>

namespace kiln::train {
namespace {

/// The flags of one command line and their values, in the order given,
/// but those in `mayDiffer`.
std::vector<std::pair<std::string, std::string>>
flagsOf(const std::vector<std::string> &arguments,
        const std::vector<std::string> &mayDiffer) {
  std::vector<std::pair<std::string, std::string>> flags;
  for (const std::string &argument : arguments) {
    // "-1" and "-.5" are values (--max_steps -1), not flags.
    bool flag = argument.size() > 1 && argument[0] == '-' &&
                !std::isdigit(static_cast<unsigned char>(argument[1])) &&
                argument[1] != '.';
    if (flag || flags.empty()) {
      size_t equals = argument.find('=');
      flags.emplace_back(
          argument.substr(0, equals),
          equals == std::string::npos ? "" : argument.substr(equals + 1));
      continue;
    }
    std::string &value = flags.back().second;
    value += (value.empty() ? "" : " ") + argument;
  }
  flags.erase(std::remove_if(flags.begin(), flags.end(),
                             [&](const auto &flag) {
                               size_t start = flag.first.find_first_not_of('-');
                               std::string name =
                                   start == std::string::npos
                                       ? std::string()
                                       : flag.first.substr(start);
                               return std::count(mayDiffer.begin(),
                                                 mayDiffer.end(), name) > 0;
                             }),
              flags.end());
  return flags;
}

/// `values[key]`, or `missing` when it has none: how a difference names
/// what a process lacks.
std::string valueOr(const std::map<std::string, std::string> &values,
                    const std::string &key, const char *missing) {
  auto it = values.find(key);
  return it == values.end() ? std::string(missing) : it->second;
}

/// Two spellings of one value: "0" and "0.0", a bare switch and "True";
/// "absent" and a false switch value ("False"), as a flag not given is off.
bool sameValue(const std::string &a, const std::string &b) {
  if (a == b)
    return true;
  double x = 0, y = 0;
  if (absl::SimpleAtod(a, &x) && absl::SimpleAtod(b, &y))
    return x == y;
  auto asSwitch = [](const std::string &value) -> std::optional<bool> {
    if (value == "(given)")
      return true;
    if (value == "absent")
      return false;
    // Numbers are not switches here: "0" is a value, not "off".
    if (!value.empty() && std::isdigit(static_cast<unsigned char>(value[0])))
      return std::nullopt;
    return switchValue(value);
  };
  std::optional<bool> p = asSwitch(a), q = asSwitch(b);
  return p && q && *p == *q;
}

/// The process's KILN_* variables as NAME=value, sorted, but those that
/// may differ between processes: paths and diagnostics (a cache or dump
/// folder per machine, a trace per process, the check of numerics).
std::vector<std::string> kilnEnvironment() {
  static const std::set<std::string> mayDiffer = {"KILN_PROFILE",
                                                  "KILN_DUMP_DIR",
                                                  "KILN_DUMP_GRAPHS",
                                                  "KILN_CACHE_DIR",
                                                  "KILN_MPI_PLUGIN",
                                                  "KILN_DATA_DIR",
                                                  "KILN_CHECK_NUMERICS",
                                                  "KILN_COLLECTIVE_TIMEOUT",
                                                  "KILN_FLASH_PRINT_ERRORS",
                                                  "KILN_PTXAS",
                                                  "KILN_LIBDEVICE",
                                                  "KILN_CUDNN_LIBRARY"};
  std::vector<std::string> variables;
  for (char **entry = environ; entry && *entry; ++entry) {
    std::string text = *entry;
    size_t equals = text.find('=');
    if (text.rfind("KILN_", 0) != 0 || equals == std::string::npos ||
        mayDiffer.count(text.substr(0, equals)))
      continue;
    variables.push_back(text);
  }
  std::sort(variables.begin(), variables.end());
  return variables;
}

/// What the processes' KILN_* variables differ in ("KILN_FP16: unset on
/// process 0, 1 on process 1"), empty when nothing.
std::vector<std::string>
environmentDifferences(const std::vector<std::vector<std::string>> &all) {
  auto valuesOf = [](const std::vector<std::string> &variables) {
    std::map<std::string, std::string> values;
    for (const std::string &variable : variables) {
      size_t equals = variable.find('=');
      values[variable.substr(0, equals)] = variable.substr(equals + 1);
    }
    return values;
  };
  std::vector<std::string> differences;
  const std::map<std::string, std::string> mine = valuesOf(all.front());
  for (size_t rank = 1; rank < all.size(); ++rank) {
    std::map<std::string, std::string> theirs = valuesOf(all[rank]), names;
    names.insert(mine.begin(), mine.end());
    names.insert(theirs.begin(), theirs.end());
    auto shown = [](const std::map<std::string, std::string> &values,
                    const std::string &name) {
      return valueOr(values, name, "unset");
    };
    for (const auto &[name, unused] : names)
      if (shown(mine, name) != shown(theirs, name))
        differences.push_back(name + ": " + shown(mine, name) +
                              " on process 0, " + shown(theirs, name) +
                              " on process " + std::to_string(rank));
  }
  return differences;
}

/// Sums `values` over the world in place.
absl::Status sumOverWorld(std::vector<int64_t> &values) {
  return allReduceSumInPlace(values.data(), int64_t(values.size()), DType::i64);
}

} // namespace

std::optional<std::string> commandLineDifferences(
    const std::vector<std::vector<std::string>> &commandLines,
    const std::vector<std::string> &mayDiffer) {
  std::vector<std::string> differences;
  const auto first = flagsOf(commandLines.front(), mayDiffer);
  for (size_t rank = 1; rank < commandLines.size(); ++rank) {
    const auto other = flagsOf(commandLines[rank], mayDiffer);
    // Each flag's values joined, so a repeated flag compares whole.
    auto valuesOf = [](const auto &flags) {
      std::map<std::string, std::string> values;
      for (const auto &[flag, value] : flags)
        values[flag] += (values.count(flag) ? " " : "") +
                        (value.empty() ? "(given)" : value);
      return values;
    };
    std::map<std::string, std::string> mine = valuesOf(first),
                                       theirs = valuesOf(other);
    // Each flag once, in the order process 0 gives them, then the others'.
    std::vector<std::string> names;
    for (const auto *flags : {&first, &other})
      for (const auto &[flag, value] : *flags)
        if (std::find(names.begin(), names.end(), flag) == names.end())
          names.push_back(flag);
    auto shown = [](const std::map<std::string, std::string> &values,
                    const std::string &flag) {
      return valueOr(values, flag, "absent");
    };
    // Flags given in another order, or values spelled otherwise, are
    // the same run.
    for (const std::string &flag : names)
      if (!sameValue(shown(mine, flag), shown(theirs, flag)))
        differences.push_back(flag + ": " + shown(mine, flag) +
                              " on process 0, " + shown(theirs, flag) +
                              " on process " + std::to_string(rank));
  }
  if (differences.empty())
    return std::nullopt;
  return absl::StrJoin(differences, "; ");
}

absl::StatusOr<std::vector<std::vector<std::string>>>
gatherCommandLines(const std::vector<std::string> &arguments, int worldRank,
                   int worldSize) {
  if (worldSize == 1)
    return std::vector<std::vector<std::string>>{arguments};
  // The arguments as one text, each ended by a NUL; the texts' lengths
  // first, then each text's bytes in its process's slot of one sum.
  std::string text;
  for (const std::string &argument : arguments)
    text += argument + '\0';
  absl::StatusOr<std::vector<std::vector<int64_t>>> lengths =
      gatherWords({int64_t(text.size())}, worldRank, worldSize);
  if (!lengths.ok())
    return lengths.status();
  std::vector<int64_t> offsets(size_t(worldSize) + 1, 0);
  for (int rank = 0; rank < worldSize; ++rank)
    offsets[size_t(rank) + 1] =
        offsets[size_t(rank)] + (*lengths)[size_t(rank)][0];
  std::vector<int64_t> bytes(size_t(offsets.back()), 0);
  for (size_t k = 0; k < text.size(); ++k)
    bytes[size_t(offsets[size_t(worldRank)]) + k] = (unsigned char)text[k];
  if (absl::Status status = sumOverWorld(bytes); !status.ok())
    return status;
  std::vector<std::vector<std::string>> commandLines(
      static_cast<size_t>(worldSize));
  for (int rank = 0; rank < worldSize; ++rank) {
    std::string argument;
    for (int64_t k = offsets[size_t(rank)]; k < offsets[size_t(rank) + 1];
         ++k) {
      if (bytes[size_t(k)] == 0) {
        commandLines[size_t(rank)].push_back(argument);
        argument.clear();
      } else {
        argument += char(bytes[size_t(k)]);
      }
    }
  }
  return commandLines;
}

absl::StatusOr<std::vector<std::vector<int64_t>>>
gatherWords(const std::vector<int64_t> &words, int worldRank, int worldSize) {
  const size_t count = words.size();
  std::vector<int64_t> all(count * size_t(worldSize), 0);
  std::copy(words.begin(), words.end(), all.begin() + count * worldRank);
  if (worldSize > 1)
    if (absl::Status status = sumOverWorld(all); !status.ok())
      return status;
  std::vector<std::vector<int64_t>> gathered;
  for (int rank = 0; rank < worldSize; ++rank)
    gathered.emplace_back(all.begin() + count * rank,
                          all.begin() + count * (rank + 1));
  return gathered;
}

void requireOneCommand(const TrainArgs &args) {
  if (args.worldSize == 1)
    return;
  absl::StatusOr<std::vector<std::vector<std::string>>> commandLines =
      gatherCommandLines(args.commandLine, args.worldRank, args.worldSize);
  if (!commandLines.ok())
    throw Failure{"comparing the processes' arguments: " +
                      std::string(commandLines.status().message()),
                  1};
  std::vector<std::string> mayDiffer;
  if (args.autoFindBatchSize)
    mayDiffer.push_back("per_device_train_batch_size");
  std::optional<std::string> differences =
      commandLineDifferences(*commandLines, mayDiffer);
  // kiln's variables choose the precision, the mode and the backend as
  // flags do (KILN_FP16=1 on one process summed scaled gradients with
  // unscaled ones).
  absl::StatusOr<std::vector<std::vector<std::string>>> environments =
      gatherCommandLines(kilnEnvironment(), args.worldRank, args.worldSize);
  if (!environments.ok())
    throw Failure{"comparing the processes' KILN_* variables: " +
                      std::string(environments.status().message()),
                  1};
  std::vector<std::string> variables = environmentDifferences(*environments);
  if (!differences && variables.empty())
    return;
  if (args.worldRank == 0)
    throw Failure{
        "the " + std::to_string(args.worldSize) + " processes were started " +
            (!differences ? "with different KILN_* variables"
             : variables.empty()
                 ? "with different arguments"
                 : "with different arguments and KILN_* variables") +
            ", and would train different models or wait for each other "
            "forever (every process of a data-parallel run runs one "
            "command: mpirun -np N kiln-train ..." +
            (variables.empty()
                 ? std::string()
                 : "; mpirun -x NAME passes a variable to every process") +
            "): " +
            absl::StrJoin(
                [&] {
                  std::vector<std::string> all;
                  if (differences)
                    all.push_back(*differences);
                  all.insert(all.end(), variables.begin(), variables.end());
                  return all;
                }(),
                "; "),
        2};
  barrier();
}

namespace {

/// Blocks and a hash of their ids and labels: what two processes compare
/// of a data set. The hash is xxh3, the same in every process (a seeded
/// hash such as absl::Hash is not).
std::pair<int64_t, int64_t> fingerprintOf(const data::LmBlocks &blocks) {
  auto bytesOf = [](const std::vector<int32_t> &values) {
    return llvm::ArrayRef<uint8_t>(
        reinterpret_cast<const uint8_t *>(values.data()),
        values.size() * sizeof(int32_t));
  };
  uint64_t hash = llvm::xxh3_64bits(bytesOf(blocks.ids)) ^
                  (llvm::xxh3_64bits(bytesOf(blocks.labels)) * 31);
  return {blocks.numBlocks(), int64_t(hash)};
}

/// "37 blocks on process 0, 148 on process 1" for the data sets that
/// differ from process 0's at word `at` (blocks, then hash).
std::string blockCounts(const std::vector<std::vector<int64_t>> &words,
                        size_t at) {
  std::vector<std::string> counts;
  for (size_t rank = 0; rank < words.size(); ++rank) {
    if (rank > 0 && words[rank][at] == words[0][at] &&
        words[rank][at + 1] == words[0][at + 1])
      continue;
    std::string count = std::to_string(words[rank][at]);
    if (rank == 0)
      count += words[0][at] == 1 ? " block" : " blocks";
    else if (words[rank][at] == words[0][at])
      count += " other ones";
    counts.push_back(count + " on process " + std::to_string(rank));
  }
  return absl::StrJoin(counts, ", ");
}

} // namespace

void requireOneDataSet(const TrainArgs &args, const PreparedData &data) {
  if (args.worldSize == 1)
    return;
  auto [trainBlocks, trainHash] = fingerprintOf(data.train);
  auto [evalBlocks, evalHash] =
      data.eval ? fingerprintOf(*data.eval) : std::pair<int64_t, int64_t>{};
  absl::StatusOr<std::vector<std::vector<int64_t>>> words =
      gatherWords({trainBlocks, trainHash, evalBlocks, evalHash},
                  args.worldRank, args.worldSize);
  if (!words.ok())
    throw Failure{"comparing the processes' data: " +
                      std::string(words.status().message()),
                  1};
  std::vector<std::string> differences;
  for (auto [at, which] : {std::pair<size_t, const char *>{0, "training"},
                           std::pair<size_t, const char *>{2, "evaluation"}})
    for (size_t rank = 1; rank < words->size(); ++rank)
      if ((*words)[rank][at] != (*words)[0][at] ||
          (*words)[rank][at + 1] != (*words)[0][at + 1]) {
        differences.push_back(std::string(which) + " data (blocks of " +
                              std::to_string(args.blockSize) +
                              " tokens): " + blockCounts(*words, at));
        break;
      }
  if (differences.empty())
    return;
  if (args.worldRank == 0)
    throw Failure{"the " + std::to_string(args.worldSize) +
                      " processes read different data, and would train on "
                      "rows the others never see or wait for each other "
                      "forever (each process reads the whole data set and "
                      "takes its share of every batch: every process must "
                      "read the same files; a relative path is read from "
                      "each process's working directory): " +
                      absl::StrJoin(differences, "; "),
                  2};
  barrier();
}

} // namespace kiln::train
