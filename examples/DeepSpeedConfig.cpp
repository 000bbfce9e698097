// Reads a DeepSpeed config's ZeRO stage, and the Trainer's --fsdp options
// as one; see DeepSpeedConfig.h.
#include "examples/DeepSpeedConfig.h"

#include "support/JsonNesting.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <optional>

namespace kiln::train {
namespace {

/// The first entry under `value` (named `where`) that is not "auto", or
/// nothing: objects are looked into, "auto" strings pass.
std::optional<std::string> firstSetting(const llvm::json::Value &value,
                                        const std::string &where) {
  if (const llvm::json::Object *object = value.getAsObject()) {
    for (const auto &[key, member] : *object)
      if (auto found = firstSetting(member, where + "." + key.str()))
        return found;
    return std::nullopt;
  }
  if (std::optional<llvm::StringRef> text = value.getAsString();
      text && *text == "auto")
    return std::nullopt;
  std::string shown;
  llvm::raw_string_ostream(shown) << value;
  return where.substr(1) + " = " + shown;
}

} // namespace

absl::StatusOr<int> readZeroStage(const std::string &path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!file)
    return absl::InvalidArgumentError(absl::StrCat(
        "--deepspeed ", path, ": cannot read it: ", file.getError().message()));
  const llvm::StringRef text = (*file)->getBuffer();
  return parseZeroStage(std::string_view(text.data(), text.size()), path);
}

absl::StatusOr<int> parseZeroStage(std::string_view text,
                                   std::string_view what) {
  auto fail = [&](const std::string &message) {
    return absl::InvalidArgumentError("--deepspeed " + std::string(what) +
                                      ": " + message);
  };
  if (std::optional<std::string> deep = jsonNestedTooDeeply(text))
    return fail("not JSON: " + *deep);
  llvm::Expected<llvm::json::Value> config =
      llvm::json::parse(llvm::StringRef(text.data(), text.size()));
  if (!config)
    return fail("not JSON: " + llvm::toString(config.takeError()));
  llvm::json::Object *top = config->getAsObject();
  if (!top)
    return fail("a DeepSpeed config is a JSON object");

  int stage = 0;
  if (llvm::json::Value *zero = top->get("zero_optimization")) {
    llvm::json::Object *settings = zero->getAsObject();
    if (!settings)
      return fail("zero_optimization must be an object");
    if (llvm::json::Value *given = settings->get("stage")) {
      std::optional<int64_t> number = given->getAsInteger();
      if (!number || *number < 0 || *number > 3)
        return fail("zero_optimization.stage must be 0, 1, 2 or 3");
      if (*number == 3)
        return fail("ZeRO stage 3 (sharded parameters) is not built; stage "
                    "2 shards the optimizer's state and the gradients, "
                    "stage 1 the state alone, stage 0 nothing");
      stage = int(*number);
      settings->erase("stage");
    }
  }
  if (std::optional<std::string> setting =
          firstSetting(llvm::json::Value(std::move(*top)), "")) {
    return fail("kiln-train reads zero_optimization.stage alone; \"" +
                *setting +
                "\" is the Trainer flags' to set (make it \"auto\", as the "
                "Trainer's example configs do, and pass the flag)");
  }
  return stage;
}

absl::StatusOr<std::optional<int>>
fsdpZeroStage(const std::string &options, std::vector<std::string> &notes) {
  if (options.empty() || options == "False" || options == "false")
    return std::nullopt;
  auto fail = [&](const std::string &message) {
    return absl::InvalidArgumentError("--fsdp " + options + ": " + message);
  };
  std::optional<int> stage;
  std::string strategy;
  for (absl::string_view option :
       absl::StrSplit(options, absl::ByAnyChar(" ,"), absl::SkipEmpty())) {
    std::optional<int> asked;
    if (option == "shard_grad_op")
      asked = 2;
    else if (option == "no_shard")
      asked = 0;
    else if (option == "auto_wrap")
      notes.push_back("--fsdp auto_wrap: kiln shards whole parameters, "
                      "so there are no modules to wrap");
    else if (option == "full_shard" || option == "True" || option == "true" ||
             option == "hybrid_shard" || option == "hybrid_shard_zero2")
      return fail(absl::StrCat(
          option, " is not built (sharded parameters, ZeRO stage 3, or "
                  "groups of processes); shard_grad_op shards the "
                  "optimizer's state and the gradients"));
    else if (option == "offload")
      return fail("offload is not built: the optimizer's state stays in "
                  "the device's memory");
    else
      return fail(absl::StrCat("unknown option '", option,
                               "' (shard_grad_op, no_shard, auto_wrap)"));
    if (asked && stage && *stage != *asked)
      return fail(absl::StrCat("one sharding strategy at a time (", strategy,
                               " and ", option, ")"));
    if (asked)
      stage = asked, strategy = std::string(option);
  }
  if (!stage)
    return fail("no sharding strategy (shard_grad_op or no_shard)");
  return stage;
}

} // namespace kiln::train
