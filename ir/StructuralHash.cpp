// The structural hash (see StructuralHash.h). The walk emits a stream of
// tagged, length-prefixed records into SHA-256, so no two different IRs can
// produce the same byte stream by shifting text between fields. Values are
// numbered in walk order (on entering a region: each block's arguments, then
// its ops' results, block by block) and operands are written as those numbers, which makes
// the digest independent of SSA names and of where the IR lives in memory.
#include "ir/StructuralHash.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>

using namespace mlir;

namespace kiln {
namespace {

/// Bumped whenever the serialisation changes, so old cache keys stop matching.
constexpr llvm::StringLiteral kHashDomain = "kiln-structural-hash-v1";

class StructuralHasher {
public:
  explicit StructuralHasher(MLIRContext *context)
      : printState(context, printFlags()) {}

  StructuralDigest hash(Operation *root) {
    writeString('D', kHashDomain);
    writeOp(root);
    return sha.final();
  }

private:
  /// Printer options fixed here, so that flags a tool's command line sets
  /// (elision, hex) cannot change a digest.
  static OpPrintingFlags printFlags() {
    OpPrintingFlags flags;
    flags.elideLargeElementsAttrs(std::numeric_limits<int64_t>::max())
        .printLargeElementsAttrWithHex(-1)
        .enableDebugInfo(false);
    return flags;
  }

  // Every record is a tag byte and a little-endian 64-bit payload; strings
  // carry their length as the payload, then their bytes.
  void writeInt(char tag, uint64_t value) {
    uint8_t bytes[9];
    bytes[0] = static_cast<uint8_t>(tag);
    for (int i = 0; i < 8; ++i)
      bytes[i + 1] = static_cast<uint8_t>(value >> (8 * i));
    sha.update(llvm::ArrayRef<uint8_t>(bytes));
  }
  void writeString(char tag, llvm::StringRef text) {
    writeInt(tag, text.size());
    sha.update(text);
  }
  void writeBytes(char tag, llvm::ArrayRef<char> data) {
    writeString(tag, llvm::StringRef(data.data(), data.size()));
  }

  void writeType(Type type) {
    std::string text;
    llvm::raw_string_ostream os(text);
    type.print(os, printState);
    writeString('T', text);
  }

  // Dense data is hashed from its bytes rather than its printed form: faster
  // for large constants, and immune to the printer's elision and hex options
  // that a tool's command line can change. Arrays and dictionaries recurse so
  // constants nested in them get the same treatment.
  void writeAttribute(Attribute attr) {
    if (auto dense = dyn_cast<DenseIntOrFPElementsAttr>(attr)) {
      writeInt('E', dense.isSplat());
      writeType(dense.getType());
      writeBytes('B', dense.getRawData());
      return;
    }
    if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
      writeType(resource.getType());
      if (AsmResourceBlob *blob = resource.getRawHandle().getBlob()) {
        writeBytes('R', blob->getData());
        return;
      }
      // A blob that is not loaded is known only by its key.
      writeString('K', resource.getRawHandle().getKey());
      return;
    }
    if (auto array = dyn_cast<ArrayAttr>(attr)) {
      writeInt('[', array.size());
      for (Attribute element : array)
        writeAttribute(element);
      return;
    }
    if (auto dict = dyn_cast<DictionaryAttr>(attr)) {
      writeInt('{', dict.size());
      for (NamedAttribute named : dict) {
        writeString('N', named.getName().getValue());
        writeAttribute(named.getValue());
      }
      return;
    }
    // Printing a standalone attribute uses no aliases and no locations.
    std::string text;
    llvm::raw_string_ostream os(text);
    attr.print(os, printState);
    writeString('A', text);
  }

  void defineValue(Value value) {
    valueNumbers.try_emplace(value, valueNumbers.size());
    writeType(value.getType());
  }

  void writeOperand(Value value) {
    auto it = valueNumbers.find(value);
    if (it != valueNumbers.end()) {
      writeInt('V', it->second);
      return;
    }
    // Defined outside the hashed op: numbered by first use, typed.
    auto [ext, inserted] =
        externalNumbers.try_emplace(value, externalNumbers.size());
    writeInt('X', ext->second);
    if (inserted)
      writeType(value.getType());
  }

  void writeOp(Operation *op) {
    writeString('O', op->getName().getStringRef());
    // The dictionary holds inherent (property) and discardable attributes,
    // sorted by name.
    writeAttribute(op->getAttrDictionary());
    writeInt('o', op->getNumOperands());
    for (Value operand : op->getOperands())
      writeOperand(operand);
    writeInt('s', op->getNumSuccessors());
    for (Block *successor : op->getSuccessors())
      writeInt('S', blockNumbers.lookup(successor));
    writeInt('r', op->getNumResults());
    for (Value result : op->getResults())
      defineValue(result);
    writeInt('g', op->getNumRegions());
    for (Region &region : op->getRegions())
      writeRegion(region);
  }

  void writeRegion(Region &region) {
    // Every block and every value the region's blocks define is numbered
    // before anything is written, so a branch to a later block, or a use
    // before the definition (graph regions, blocks listed out of dominance
    // order), still refers to its definition by position.
    uint64_t index = 0;
    for (Block &block : region) {
      blockNumbers[&block] = index++;
      for (BlockArgument argument : block.getArguments())
        valueNumbers.try_emplace(argument, valueNumbers.size());
      for (Operation &op : block)
        for (Value result : op.getResults())
          valueNumbers.try_emplace(result, valueNumbers.size());
    }
    writeInt('b', index);
    for (Block &block : region) {
      writeInt('a', block.getNumArguments());
      for (BlockArgument argument : block.getArguments())
        defineValue(argument);
      writeInt('n', block.getOperations().size());
      for (Operation &op : block)
        writeOp(&op);
    }
  }

  AsmState printState;
  llvm::SHA256 sha;
  llvm::DenseMap<Value, uint64_t> valueNumbers;
  llvm::DenseMap<Value, uint64_t> externalNumbers;
  llvm::DenseMap<Block *, uint64_t> blockNumbers;
};

} // namespace

StructuralDigest structuralHash(Operation *op) {
  return StructuralHasher(op->getContext()).hash(op);
}

StructuralDigest structuralHash(ModuleOp module) {
  return structuralHash(module.getOperation());
}

StructuralDigest structuralHash(func::FuncOp function) {
  return structuralHash(function.getOperation());
}

std::string toHex(const StructuralDigest &digest) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * digest.size());
  for (uint8_t byte : digest) {
    hex.push_back(kDigits[byte >> 4]);
    hex.push_back(kDigits[byte & 0xf]);
  }
  return hex;
}

} // namespace kiln
