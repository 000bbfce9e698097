// Where user code built each lazy node, for KILN_CHECK_NUMERICS (internal to
// frontends/lazy). While the option is on, creating a node captures the
// stack's return addresses (execinfo's backtrace()) and interns them as a
// site id, so a training loop that builds the same graph every step adds no
// new sites. Nothing is symbolized until a location is needed (lowering with
// locations, an error message): then LLVM's symbolizer reads the line tables
// of the binaries (file:line where the model code was built with -g1 or
// more, else the symbol table's function name) and picks the first frame
// outside kiln's own frontend code. With the option off, current() returns
// 0 after one branch and nothing else runs.
#ifndef KILN_FRONTENDS_LAZY_CALLSITES_H
#define KILN_FRONTENDS_LAZY_CALLSITES_H

#include <cstdint>
#include <optional>
#include <string>

namespace kiln::lazy {
struct Node;
} // namespace kiln::lazy

namespace kiln::lazy::sites {

/// The site of a node created now: 0 when options().checkNumerics is off;
/// inside a GradientScope, that scope's site; else the current stack.
uint32_t current();

/// While alive, the nodes created are attributed to the gradient of
/// `forward` (autograd runs each rule inside one), with `backwardSite` (the
/// backward() call's site, taken once per backward): a NaN made by a
/// gradient rule names the forward op the user wrote, as PyTorch's
/// detect_anomaly does. Nests; a no-op when the option is off.
class GradientScope {
public:
  GradientScope(const Node &forward, uint32_t backwardSite);
  ~GradientScope();
  GradientScope(const GradientScope &) = delete;
  GradientScope &operator=(const GradientScope &) = delete;

private:
  bool active_ = false;
  uint32_t previous_ = 0;
};

/// One source frame: file empty when the binary has no line table there,
/// function empty when not even a symbol is known.
struct Frame {
  std::string file;
  int64_t line = 0;
  std::string function;
};

struct ResolvedSite {
  /// The first frame outside kiln's frontend (frontends/lazy) and the C++
  /// library; none when the stack holds no such frame.
  std::optional<Frame> frame;
  /// When `frame` is model code inside kiln (frontends/nn), the first frame
  /// outside that too: the user's code that called the module.
  std::optional<Frame> caller;
  /// A gradient's site: the forward node's site and op ("sqrt"); `frame`
  /// and `caller` are then those of the backward() call.
  uint32_t forwardSite = 0;
  const char *forwardOp = nullptr;
};

/// site id (not 0) → its frames, symbolized on first use and kept.
const ResolvedSite &resolve(uint32_t site);

/// "file.cpp:57 in f()" (or "f()" without a line table); empty without one.
std::string describeFrame(const Frame &frame);

/// A node's site for messages: "built at model.cpp:57 in buildModel(...)",
/// "in the gradient of sqrt built at ... (backward() at ...)", or "built
/// while KILN_CHECK_NUMERICS was off (no call site recorded)" for 0.
std::string describe(uint32_t site);

} // namespace kiln::lazy::sites

#endif // KILN_FRONTENDS_LAZY_CALLSITES_H
