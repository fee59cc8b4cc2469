// The user's C++ line of an op (SourceLine.h).
#include "tessel/Dialect/Tessel/IR/SourceLine.h"

#include "mlir/IR/BuiltinAttributes.h"

namespace mlir::tessel {

FileLineColLoc fileLineOf(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return file;
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (auto file = fileLineOf(inner))
        return file;
  if (auto name = dyn_cast<NameLoc>(loc))
    return fileLineOf(name.getChildLoc());
  if (auto call = dyn_cast<CallSiteLoc>(loc))
    return fileLineOf(call.getCallee());
  return {};
}

std::string sourceLineText(Location loc) {
  FileLineColLoc file = fileLineOf(loc);
  return file ? file.getFilename().str() + ":" + std::to_string(file.getLine()) : std::string();
}

} // namespace mlir::tessel
