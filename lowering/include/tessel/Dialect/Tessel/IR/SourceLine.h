// The user's C++ line an op came from: the trace importer gives every op a
// FileLineColLoc, which later passes may wrap (fusions, names, call sites).
#pragma once

#include "mlir/IR/Location.h"

#include <string>

namespace mlir::tessel {

// The first file:line `loc` names (through names, fusions, call sites), or
// null.
FileLineColLoc fileLineOf(Location loc);

// "file:line" of fileLineOf(loc), or "" when it names none.
std::string sourceLineText(Location loc);

} // namespace mlir::tessel
