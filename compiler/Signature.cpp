// Entry-function lookup and signatures; see Signature.h.
#include "compiler/Signature.h"

#include "ir/KilnDialect.h"
#include "ir/TensorConversion.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace kiln::compiler {

absl::StatusOr<mlir::func::FuncOp> findEntryFunction(mlir::ModuleOp module,
                                                     const std::string &name) {
  std::vector<std::string> names;
  std::vector<mlir::func::FuncOp> publicFunctions;
  for (auto function : module.getOps<mlir::func::FuncOp>()) {
    if (function.isDeclaration())
      continue;
    names.push_back("@" + function.getSymName().str());
    if (function.isPublic())
      publicFunctions.push_back(function);
  }
  std::string available = names.empty() ? "none" : absl::StrJoin(names, ", ");
  if (!name.empty()) {
    auto function = module.lookupSymbol<mlir::func::FuncOp>(name);
    if (!function || function.isDeclaration())
      return absl::NotFoundError(absl::StrCat(
          "no function @", name, " with a body; available: ", available));
    return function;
  }
  if (auto main = module.lookupSymbol<mlir::func::FuncOp>("main"))
    if (!main.isDeclaration())
      return main;
  if (publicFunctions.size() == 1)
    return publicFunctions.front();
  if (publicFunctions.empty())
    return absl::NotFoundError(absl::StrCat(
        "no @main and no public function to run; available: ", available));
  return absl::InvalidArgumentError(
      absl::StrCat("no @main and several public functions (", available,
                   "); choose one with --function"));
}

absl::StatusOr<runtime::ProgramSignature>
signatureOf(mlir::func::FuncOp function) {
  runtime::ProgramSignature signature;
  auto describe = [&](mlir::Type type, std::string_view what,
                      unsigned index) -> absl::StatusOr<runtime::ProgramValue> {
    auto described = describeTensorType(type);
    if (!described.ok())
      return absl::InvalidArgumentError(
          absl::StrCat("function '", function.getSymName().str(), "' ",
                       std::string(what), " #", index, ": ",
                       described.status().message()));
    return runtime::ProgramValue{described->first, described->second, false};
  };
  mlir::FunctionType type = function.getFunctionType();
  for (unsigned i = 0; i < type.getNumInputs(); ++i) {
    auto value = describe(type.getInput(i), "argument", i);
    if (!value.ok())
      return value.status();
    value->donated = static_cast<bool>(
        function.getArgAttr(i, KilnDialect::kDonateAttrName));
    signature.inputs.push_back(*std::move(value));
  }
  for (unsigned i = 0; i < type.getNumResults(); ++i) {
    auto value = describe(type.getResult(i), "result", i);
    if (!value.ok())
      return value.status();
    signature.outputs.push_back(*std::move(value));
  }
  return signature;
}

} // namespace kiln::compiler
