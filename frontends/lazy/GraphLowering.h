// The lowering of a lazy graph to a kiln-dialect module, for the frontend's
// files that use MLIR (Lower.cpp, which compiles the module, and
// Localize.cpp, which re-runs it op by op to find the first NaN). Internal
// to frontends/lazy; the rest of the frontend sees only Lower.h.
#ifndef KILN_FRONTENDS_LAZY_GRAPHLOWERING_H
#define KILN_FRONTENDS_LAZY_GRAPHLOWERING_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/DenseMap.h"

namespace kiln::lazy {

struct Graph;
struct Node;

/// The frontend's one MLIRContext (kiln and func loaded, no threads).
mlir::MLIRContext &lazyContext();

/// Each lowered op → the node it was lowered from.
using OpOrigins = llvm::DenseMap<mlir::Operation *, const Node *>;

/// graph → a module holding `func.func @main(inputs...) -> outputs...`,
/// donated inputs marked `kiln.donate` (and `kiln.output_alias`). With
/// `locations`, each op (and each argument) carries its node's call site
/// (CallSites.h) as its location: `loc("model.cpp":42:0)`, a callsite()
/// from kiln's nn modules to their caller, `loc("gradient of log"(...))`
/// for a gradient, `loc("node 17")` for a node built without a site; else
/// every location is unknown. Locations never reach a hash or a cache key.
/// `origins`, when given, receives the node of every op.
mlir::OwningOpRef<mlir::ModuleOp> lowerGraph(const Graph &graph,
                                             bool locations,
                                             OpOrigins *origins = nullptr);

} // namespace kiln::lazy

#endif // KILN_FRONTENDS_LAZY_GRAPHLOWERING_H
