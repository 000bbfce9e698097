// Call sites of lazy nodes: capture (backtrace() into an interned stack),
// symbolization (LLVM's in-process symbolizer over the loaded objects found
// with dl_iterate_phdr; dladdr and the demangler when it finds nothing) and
// the choice of the frame to report. Built without RTTI, like the LLVM it
// includes; nothing here throws.
#include "frontends/lazy/CallSites.h"

#include "frontends/lazy/Node.h"

#include "llvm/DebugInfo/Symbolize/Symbolize.h"
#include "llvm/Demangle/Demangle.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>

#include <cstring>
#include <memory>
#include <unordered_map>
#include <vector>

namespace kiln::lazy::sites {

namespace {

/// Deep enough for a model's call into the frontend through a few module
/// layers; frames past it are lost (the site then names a deeper frame or
/// none).
constexpr int kMaxFrames = 64;

/// A captured site: a stack, or a gradient (the backward() call's site and
/// the forward node whose rule made the node).
struct SiteRecord {
  std::vector<void *> frames;
  uint32_t backwardSite = 0;
  uint32_t forwardSite = 0;
  Op forwardOp = Op::Data;
  bool gradient = false;
};

struct SiteTable {
  /// Site id i + 1 is records[i]; resolved[i] is filled on first use.
  std::vector<SiteRecord> records;
  std::vector<std::unique_ptr<ResolvedSite>> resolved;
  /// Raw key bytes → site id: equal stacks share one id.
  std::unordered_map<std::string, uint32_t> ids;
  /// The innermost GradientScope's site, or 0.
  uint32_t scope = 0;
  /// Return address → its inline chain, innermost first.
  std::unordered_map<void *, std::vector<Frame>> symbolized;
};

SiteTable &table() {
  // Never destroyed: nodes released during exit may still ask for sites.
  static auto *t = new SiteTable;
  return *t;
}

uint32_t internRecord(std::string key, SiteRecord record) {
  SiteTable &t = table();
  auto [it, inserted] = t.ids.emplace(std::move(key), 0);
  if (inserted) {
    t.records.push_back(std::move(record));
    t.resolved.emplace_back();
    it->second = static_cast<uint32_t>(t.records.size());
  }
  return it->second;
}

uint32_t captureStack() {
  void *buffer[kMaxFrames];
  int n = ::backtrace(buffer, kMaxFrames);
  // The key is the return addresses' bytes: the same code path, step after
  // step, finds the same id.
  std::string key(reinterpret_cast<const char *>(buffer), n * sizeof(void *));
  SiteRecord record;
  record.frames.assign(buffer, buffer + n);
  return internRecord(std::move(key), std::move(record));
}

//===--- Symbolization ----------------------------------------------------===//

llvm::symbolize::LLVMSymbolizer &symbolizer() {
  static auto *s = [] {
    llvm::symbolize::LLVMSymbolizer::Options options;
    options.PrintFunctions =
        llvm::symbolize::FunctionNameKind::LinkageName; // then demangled
    options.Demangle = true;
    return new llvm::symbolize::LLVMSymbolizer(options);
  }();
  return *s;
}

struct ModuleAddress {
  std::string path;
  uint64_t offset = 0;
};

/// The loaded object holding `pc` and pc's address in that object's file
/// (pc less the load bias), as the symbolizer wants it.
std::optional<ModuleAddress> moduleOf(uintptr_t pc) {
  struct Search {
    uintptr_t pc;
    std::optional<ModuleAddress> found;
  } search{pc, std::nullopt};
  ::dl_iterate_phdr(
      [](struct dl_phdr_info *info, size_t, void *data) {
        auto *s = static_cast<Search *>(data);
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr) &phdr = info->dlpi_phdr[i];
          uintptr_t start = info->dlpi_addr + phdr.p_vaddr;
          if (phdr.p_type != PT_LOAD || s->pc < start ||
              s->pc >= start + phdr.p_memsz)
            continue;
          // The main program has no name in the link map.
          const char *name = info->dlpi_name;
          s->found = ModuleAddress{*name ? name : "/proc/self/exe",
                                   s->pc - info->dlpi_addr};
          return 1;
        }
        return 0;
      },
      &search);
  return search.found;
}

std::string known(const std::string &value) {
  return value == llvm::DILineInfo::BadString ? std::string() : value;
}

/// "ns::f(int, float) const (.constprop.0)" → "ns::f": messages name the
/// function; the parameters and the compiler's clone suffixes are noise.
std::string shortFunctionName(std::string name) {
  // GCC's clones: " (.constprop.0)", " [clone .isra.0]", ".cold".
  for (const char *suffix : {" (.", " [clone "})
    if (size_t at = name.find(suffix); at != std::string::npos)
      name.erase(at);
  while (!name.empty() && name.back() != ')') {
    // Trailing qualifiers: " const", " &", " &&", " volatile".
    size_t space = name.rfind(' ');
    if (space == std::string::npos)
      return name;
    name.erase(space);
  }
  // Cut at the '(' that opens the last parameter list.
  int depth = 0;
  for (size_t i = name.size(); i-- > 0;) {
    depth += name[i] == ')' ? 1 : name[i] == '(' ? -1 : 0;
    if (depth == 0)
      return name.substr(0, i);
  }
  return name;
}

/// A return address → its frames, innermost (inlined) first.
std::vector<Frame> symbolize(void *returnAddress) {
  // The call instruction is the byte before the return address.
  uintptr_t pc = reinterpret_cast<uintptr_t>(returnAddress) - 1;
  std::vector<Frame> frames;
  if (std::optional<ModuleAddress> module = moduleOf(pc)) {
    auto info = symbolizer().symbolizeInlinedCode(
        module->path,
        {module->offset, llvm::object::SectionedAddress::UndefSection});
    if (info) {
      for (uint32_t i = 0; i < info->getNumberOfFrames(); ++i) {
        const llvm::DILineInfo &line = info->getFrame(i);
        Frame frame{known(line.FileName), line.Line,
                    shortFunctionName(known(line.FunctionName))};
        // Without line tables the symbolizer still names the file from the
        // symbol table ("Layers.cpp", line 0): the function says more.
        if (frame.line == 0 && !frame.function.empty())
          frame.file.clear();
        if (!frame.file.empty() || !frame.function.empty())
          frames.push_back(std::move(frame));
      }
    } else {
      llvm::consumeError(info.takeError());
    }
  }
  // No object file to read (or nothing in it): the dynamic symbol, if any.
  Dl_info dl;
  if (frames.empty() && ::dladdr(reinterpret_cast<void *>(pc), &dl) &&
      dl.dli_sname)
    frames.push_back({"", 0, shortFunctionName(llvm::demangle(dl.dli_sname))});
  return frames;
}

const std::vector<Frame> &symbolizeCached(void *returnAddress) {
  auto &cache = table().symbolized;
  auto it = cache.find(returnAddress);
  if (it == cache.end())
    it = cache.emplace(returnAddress, symbolize(returnAddress)).first;
  return it->second;
}

//===--- Choosing the frame -----------------------------------------------===//

bool startsWith(const std::string &s, const char *prefix) {
  return s.compare(0, std::strlen(prefix), prefix) == 0;
}
bool contains(const std::string &s, const char *part) {
  return s.find(part) != std::string::npos;
}

/// Frames a call site skips: kiln's frontend (by its line tables, or by
/// name where it has none), the C++ library's headers and runtime, and
/// frames nothing is known about.
bool isInternal(const Frame &f) {
  if (!f.file.empty())
    return contains(f.file, "/frontends/lazy/") ||
           startsWith(f.file, "/usr/include/") ||
           startsWith(f.file, "/usr/lib/gcc/");
  const std::string &name = f.function;
  return name.empty() || startsWith(name, "kiln::lazy::") ||
         startsWith(name, "kiln::Tensor::") ||
         startsWith(name, "kiln::operator") || startsWith(name, "std::") ||
         startsWith(name, "_"); // reserved names: the C and C++ runtimes
}

/// kiln's model library (frontends/nn): a real call site, but one the
/// user's own caller of the module explains better.
bool isModelLibrary(const Frame &f) {
  return contains(f.file, "/frontends/nn/") ||
         (f.file.empty() && startsWith(f.function, "kiln::nn::"));
}

ResolvedSite resolveStack(const std::vector<void *> &stack) {
  ResolvedSite site;
  for (void *returnAddress : stack) {
    const std::vector<Frame> &chain = symbolizeCached(returnAddress);
    // Code inlined into kiln's frontend is kiln's; kiln's inline functions
    // (Tensor.h) inlined into model code are skipped down to that code.
    if (chain.empty() || isInternal(chain.back()))
      continue;
    size_t i = 0;
    while (isInternal(chain[i]))
      ++i;
    for (; i < chain.size(); ++i) {
      if (!site.frame) {
        site.frame = chain[i];
        if (!isModelLibrary(chain[i]))
          return site;
      } else if (!isModelLibrary(chain[i]) && !isInternal(chain[i])) {
        site.caller = chain[i];
        return site;
      }
    }
  }
  return site;
}

std::string where(const ResolvedSite &site) {
  if (!site.frame)
    return "in kiln's frontend (no frame outside it was captured)";
  std::string text = "at " + describeFrame(*site.frame);
  if (site.caller)
    text += ", called from " + describeFrame(*site.caller);
  return text;
}

} // namespace

uint32_t current() {
  if (!options().checkNumerics)
    return 0;
  if (uint32_t scope = table().scope)
    return scope;
  return captureStack();
}

GradientScope::GradientScope(const Node &forward, uint32_t backwardSite) {
  if (!options().checkNumerics)
    return;
  SiteRecord record;
  record.gradient = true;
  record.backwardSite = backwardSite;
  record.forwardSite = forward.site;
  record.forwardOp = forward.op;
  std::string key = "g";
  for (uint32_t v : {backwardSite, forward.site,
                     static_cast<uint32_t>(forward.op)})
    key.append(reinterpret_cast<const char *>(&v), sizeof v);
  active_ = true;
  previous_ = table().scope;
  table().scope = internRecord(std::move(key), std::move(record));
}

GradientScope::~GradientScope() {
  if (active_)
    table().scope = previous_;
}

const ResolvedSite &resolve(uint32_t site) {
  SiteTable &t = table();
  std::unique_ptr<ResolvedSite> &slot = t.resolved.at(site - 1);
  if (!slot) {
    const SiteRecord &record = t.records[site - 1];
    if (record.gradient) {
      ResolvedSite backward =
          record.backwardSite ? resolve(record.backwardSite) : ResolvedSite();
      backward.forwardSite = record.forwardSite;
      backward.forwardOp = opName(record.forwardOp);
      slot = std::make_unique<ResolvedSite>(std::move(backward));
    } else {
      slot = std::make_unique<ResolvedSite>(resolveStack(record.frames));
    }
  }
  return *slot;
}

std::string describeFrame(const Frame &frame) {
  std::string text;
  if (!frame.file.empty()) {
    text = frame.file;
    if (frame.line > 0)
      text += ":" + std::to_string(frame.line);
    if (!frame.function.empty())
      text += " in ";
  }
  return text + frame.function;
}

std::string describe(uint32_t site) {
  if (site == 0)
    return "built while KILN_CHECK_NUMERICS was off (no call site recorded)";
  const ResolvedSite &resolved = resolve(site);
  if (!resolved.forwardOp)
    return "built " + where(resolved);
  return std::string("in the gradient of ") + resolved.forwardOp + " " +
         describe(resolved.forwardSite) + " (backward() called " +
         where(resolved) + ")";
}

} // namespace kiln::lazy::sites
