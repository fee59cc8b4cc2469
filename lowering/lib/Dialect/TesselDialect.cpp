#include "tessel/Dialect/TesselDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tessel;

#include "tessel/Dialect/TesselDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "tessel/Dialect/TesselTypes.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "tessel/Dialect/TesselAttrs.cpp.inc"

#define GET_OP_CLASSES
#include "tessel/Dialect/TesselOps.cpp.inc"

namespace {
// Prints layouts as #blocked, #blocked1, ... aliases, as Triton does.
struct TesselOpAsmInterface : public OpAsmDialectInterface {
  using OpAsmDialectInterface::OpAsmDialectInterface;
  AliasResult getAlias(Attribute attr, raw_ostream &os) const override {
    if (isa<BlockedLayoutAttr>(attr)) {
      os << "blocked";
      return AliasResult::FinalAlias;
    }
    if (isa<SliceLayoutAttr>(attr)) {
      os << "slice";
      return AliasResult::FinalAlias;
    }
    return AliasResult::NoAlias;
  }
};
} // namespace

void TesselDialect::initialize() {
  addInterfaces<TesselOpAsmInterface>();
  addTypes<
#define GET_TYPEDEF_LIST
#include "tessel/Dialect/TesselTypes.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tessel/Dialect/TesselAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "tessel/Dialect/TesselOps.cpp.inc"
      >();
}

Type mlir::tessel::elementTypeOf(Type t) {
  if (auto tensor = dyn_cast<RankedTensorType>(t))
    return tensor.getElementType();
  return t;
}

Type mlir::tessel::pointeeOf(Type t) {
  return cast<PtrType>(elementTypeOf(t)).getPointeeType();
}

static bool isPowerOf2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

LogicalResult BlockedLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                        ArrayRef<unsigned> sizePerThread,
                                        ArrayRef<unsigned> threadsPerWave,
                                        ArrayRef<unsigned> wavesPerBlock,
                                        ArrayRef<unsigned> order) {
  size_t rank = sizePerThread.size();
  if (threadsPerWave.size() != rank || wavesPerBlock.size() != rank || order.size() != rank)
    return emitError() << "blocked layout parameters must all have rank " << rank;
  for (size_t d = 0; d < rank; ++d) {
    if (!isPowerOf2(sizePerThread[d]) || !isPowerOf2(threadsPerWave[d]) ||
        !isPowerOf2(wavesPerBlock[d]))
      return emitError() << "blocked layout sizes must be powers of two";
  }
  llvm::SmallVector<bool> seen(rank, false);
  for (unsigned d : order) {
    if (d >= rank || seen[d])
      return emitError() << "blocked layout order must be a permutation of 0.." << rank - 1;
    seen[d] = true;
  }
  return success();
}

LogicalResult MakeRangeOp::verify() {
  auto type = getType();
  if (type.getRank() != 1)
    return emitOpError("result must be a 1-D tile");
  int64_t n = int64_t(getEnd()) - int64_t(getStart());
  if (n <= 0 || type.getDimSize(0) != n)
    return emitOpError("result has ") << type.getDimSize(0) << " elements but the range ["
                                      << getStart() << ", " << getEnd() << ") has " << n;
  return success();
}

LogicalResult BroadcastOp::verify() {
  auto src = cast<RankedTensorType>(getSrc().getType());
  auto dst = getType();
  if (src.getRank() != dst.getRank())
    return emitOpError("operand and result must have the same rank");
  for (int64_t d = 0; d < src.getRank(); ++d)
    if (src.getDimSize(d) != dst.getDimSize(d) && src.getDimSize(d) != 1)
      return emitOpError("dimension ") << d << " of size " << src.getDimSize(d)
                                       << " cannot be broadcast to " << dst.getDimSize(d);
  return success();
}

LogicalResult ExpandDimsOp::verify() {
  auto src = cast<RankedTensorType>(getSrc().getType());
  auto dst = getType();
  int64_t axis = getAxis();
  if (axis < 0 || axis > src.getRank())
    return emitOpError("axis ") << axis << " is out of range for a rank-" << src.getRank()
                                << " tile";
  SmallVector<int64_t> expected(src.getShape());
  expected.insert(expected.begin() + axis, 1);
  if (dst.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result shape must be the operand's with a 1 inserted at axis ") << axis;
  return success();
}

static LogicalResult verifySameShape(Operation *op, Type a, Type b, StringRef what) {
  auto ta = dyn_cast<RankedTensorType>(a);
  auto tb = dyn_cast<RankedTensorType>(b);
  if (!ta && !tb)
    return success();
  if (!ta || !tb || ta.getShape() != tb.getShape())
    return op->emitOpError() << what << " must have the pointer operand's shape";
  return success();
}

LogicalResult AddPtrOp::verify() { return verifySameShape(*this, getPtr().getType(), getOffset().getType(), "offset"); }

LogicalResult LoadOp::verify() {
  Type pointee = pointeeOf(getPtr().getType());
  if (elementTypeOf(getType()) != pointee)
    return emitOpError("result element type must be the pointee type ") << pointee;
  if (failed(verifySameShape(*this, getPtr().getType(), getType(), "result")))
    return failure();
  if (getMask() && failed(verifySameShape(*this, getPtr().getType(), getMask().getType(), "mask")))
    return failure();
  if (getOther() && getOther().getType() != getType())
    return emitOpError("other must have the result's type");
  return success();
}

LogicalResult StoreOp::verify() {
  Type pointee = pointeeOf(getPtr().getType());
  if (elementTypeOf(getValue().getType()) != pointee)
    return emitOpError("value element type must be the pointee type ") << pointee;
  if (failed(verifySameShape(*this, getPtr().getType(), getValue().getType(), "value")))
    return failure();
  if (getMask() && failed(verifySameShape(*this, getPtr().getType(), getMask().getType(), "mask")))
    return failure();
  return success();
}
