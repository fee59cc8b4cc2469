// The tessel dialect: registration, types, layouts' verifiers, shared helpers.
#include "tessel/Dialect/Tessel/IR/Dialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tessel;

#include "tessel/Dialect/Tessel/IR/TesselDialect.cpp.inc"

#include "tessel/Dialect/Tessel/IR/TesselAttrInterfaces.cpp.inc"
#include "tessel/Dialect/Tessel/IR/TesselOpInterfaces.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "tessel/Dialect/Tessel/IR/TesselTypes.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "tessel/Dialect/Tessel/IR/TesselAttrs.cpp.inc"

#define GET_OP_CLASSES
#include "tessel/Dialect/Tessel/IR/TesselOps.cpp.inc"

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
    if (isa<MfmaLayoutAttr>(attr)) {
      os << "mfma";
      return AliasResult::FinalAlias;
    }
    if (isa<WmmaLayoutAttr>(attr)) {
      os << "wmma";
      return AliasResult::FinalAlias;
    }
    if (isa<DotOperandLayoutAttr>(attr)) {
      os << "dot_op";
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
#include "tessel/Dialect/Tessel/IR/TesselTypes.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tessel/Dialect/Tessel/IR/TesselAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "tessel/Dialect/Tessel/IR/TesselOps.cpp.inc"
      >();
}

Type mlir::tessel::elementTypeOf(Type t) {
  if (auto tensor = dyn_cast<RankedTensorType>(t))
    return tensor.getElementType();
  return t;
}

std::optional<::tessel::DType> mlir::tessel::dtypeOf(Type t) {
  using ::tessel::DType;
  if (t.isF16()) return DType::F16;
  if (t.isBF16()) return DType::BF16;
  if (t.isF32()) return DType::F32;
  if (t.isInteger(8)) return DType::I8;
  if (t.isInteger(32)) return DType::I32;
  return std::nullopt;
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

LogicalResult MfmaLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError, ArrayRef<unsigned> instrShape,
                                     ArrayRef<unsigned> wavesPerBlock) {
  if (instrShape.size() != 2 || wavesPerBlock.size() != 2)
    return emitError() << "mfma layout parameters are [M, N] pairs";
  if (!((instrShape[0] == 32 && instrShape[1] == 32) || (instrShape[0] == 16 && instrShape[1] == 16)))
    return emitError() << "mfma instruction tiles are 32x32 or 16x16";
  if (!isPowerOf2(wavesPerBlock[0]) || !isPowerOf2(wavesPerBlock[1]))
    return emitError() << "mfma layout wave counts must be powers of two";
  return success();
}

LogicalResult DotOperandLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError, unsigned opIdx,
                                           DistributedLayoutAttr parent, unsigned kWidth) {
  if (opIdx > 1)
    return emitError() << "dot operand index must be 0 (A) or 1 (B)";
  if (!isa<MfmaLayoutAttr, WmmaLayoutAttr, BlockedLayoutAttr>(parent))
    return emitError() << "a dot operand's parent is an mfma, wmma or (FMA) blocked layout";
  if (isa<WmmaLayoutAttr>(parent) && kWidth != 16)
    return emitError() << "a WMMA operand holds 16 K elements per lane (kWidth = 16)";
  if (!isPowerOf2(kWidth) || (kWidth > 16 && !isa<BlockedLayoutAttr>(parent)))
    return emitError() << "dot operand kWidth must be a power of two (up to 16 for the matrix cores)";
  return success();
}

TesselDialect &mlir::tessel::tesselDialect(MLIRContext *ctx) {
  return *ctx->getOrLoadDialect<TesselDialect>();
}

FailureOr<KernelConfig> mlir::tessel::getKernelConfig(ModuleOp module, StringRef pass) {
  TesselDialect &dialect = tesselDialect(module.getContext());
  IntegerAttr warps = dialect.getNumWarpsAttrHelper().getAttr(module);
  IntegerAttr wave = dialect.getWaveSizeAttrHelper().getAttr(module);
  if (!warps || !wave)
    return module.emitError() << pass << " needs "
                              << dialect.getNumWarpsAttrHelper().getName().getValue() << " and "
                              << dialect.getWaveSizeAttrHelper().getName().getValue()
                              << " on the module";
  return KernelConfig{unsigned(warps.getInt()), unsigned(wave.getInt())};
}
