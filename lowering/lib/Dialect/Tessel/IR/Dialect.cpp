// The tessel dialect: registration, types, layouts' verifiers, shared helpers.
#include "tessel/Dialect/Tessel/IR/Dialect.h"
#include "tessel/Dialect/Tessel/IR/LayoutRules.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tessel;

#include "tessel/Dialect/Tessel/IR/TesselDialect.cpp.inc"
#include "tessel/Dialect/Tessel/IR/TesselEnums.cpp.inc"

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
  attachLayoutRules(getContext());
}

namespace {
// Whether `attr`, if it is one of the dialect's discardable attributes
// (TesselDialect.td), has the type its helper reads: passes read a value
// of another type as absent, so written by hand it is an error here. Other
// names under tessel. pass. The checks below name every attribute of the
// .td's discardableAttrs by hand: one added there goes unverified until it
// is added here too.
LogicalResult verifyDiscardable(TesselDialect &d, NamedAttribute attr, function_ref<InFlightDiagnostic()> emitError) {
  std::optional<LogicalResult> verdict;
  auto check = [&](auto helper) {
    using Expected = decltype(helper.getAttr(nullptr));
    if (verdict || attr.getName() != helper.getName())
      return;
    if (isa<Expected>(attr.getValue())) {
      verdict = success();
      return;
    }
    static_assert(std::is_same_v<Expected, UnitAttr> || std::is_same_v<Expected, IntegerAttr> ||
                      std::is_same_v<Expected, StringAttr>,
                  "a discardable attribute of another type needs its own words below");
    const char *what = std::is_same_v<Expected, UnitAttr>      ? "a unit attribute"
                       : std::is_same_v<Expected, IntegerAttr> ? "an integer attribute"
                                                               : "a string attribute";
    verdict = emitError() << "'" << attr.getName().getValue() << "' must be " << what << ", not "
                          << attr.getValue();
  };
  check(d.getTargetAttrHelper());
  check(d.getNumWarpsAttrHelper());
  check(d.getWaveSizeAttrHelper());
  check(d.getLdsLimitAttrHelper());
  check(d.getLdsBytesAttrHelper());
  check(d.getNumStagesAttrHelper());
  check(d.getFastMathAttrHelper());
  check(d.getFpFusionAttrHelper());
  check(d.getDebugAttrHelper());
  check(d.getDirectToLdsAttrHelper());
  check(d.getNoDirectToLdsAttrHelper());
  check(d.getLateStagedLoadsAttrHelper());
  check(d.getLateStagedLoadsApplyAttrHelper());
  check(d.getDivRnAttrHelper());
  check(d.getLdsOffsetAttrHelper());
  check(d.getLdsNoReuseAttrHelper());
  check(d.getAsyncCopiedAttrHelper());
  check(d.getSortPositionsAttrHelper());
  check(d.getEqualToOneAttrHelper());
  check(d.getDivisibilityAttrHelper());
  check(d.getPointerRangeAttrHelper());
  return verdict.value_or(success());
}
} // namespace

LogicalResult TesselDialect::verifyOperationAttribute(Operation *op, NamedAttribute attr) {
  return verifyDiscardable(*this, attr, [&] { return op->emitError(); });
}

LogicalResult TesselDialect::verifyRegionArgAttribute(Operation *op, unsigned, unsigned arg, NamedAttribute attr) {
  return verifyDiscardable(*this, attr, [&] { return op->emitError() << "argument " << arg << ": "; });
}

Operation *TesselDialect::materializeConstant(OpBuilder &builder, Attribute value, Type type, Location loc) {
  auto typed = dyn_cast<TypedAttr>(value);
  if (!typed || typed.getType() != type || !arith::ConstantOp::isBuildableWith(value, type))
    return nullptr;
  return builder.create<arith::ConstantOp>(loc, typed);
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
  if (isa<Float8E4M3FNType>(t)) return DType::F8E4M3FN;
  if (isa<Float8E5M2Type>(t)) return DType::F8E5M2;
  if (isa<Float8E4M3FNUZType>(t)) return DType::F8E4M3FNUZ;
  if (isa<Float8E5M2FNUZType>(t)) return DType::F8E5M2FNUZ;
  return std::nullopt;
}

Type mlir::tessel::pointeeOf(Type t) {
  return cast<PtrType>(elementTypeOf(t)).getPointeeType();
}

bool mlir::tessel::isSmallBufferArgument(Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  auto func = arg ? dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp()) : func::FuncOp();
  if (!func || arg.getOwner() != &func.getBody().front())
    return false;
  StringAttr range = tesselDialect(func.getContext()).getPointerRangeAttrHelper().getName();
  auto bits = func.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(), range);
  return bits && bits.getInt() <= 31;
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
                                     ArrayRef<unsigned> wavesPerBlock, bool transposed) {
  if (instrShape.size() != 2 || wavesPerBlock.size() != 2)
    return emitError() << "mfma layout parameters are [M, N] pairs";
  if (!((instrShape[0] == 32 && instrShape[1] == 32) || (instrShape[0] == 16 && instrShape[1] == 16)))
    return emitError() << "mfma instruction tiles are 32x32 or 16x16";
  if (!isPowerOf2(wavesPerBlock[0]) || !isPowerOf2(wavesPerBlock[1]))
    return emitError() << "mfma layout wave counts must be powers of two";
  return success();
}

LogicalResult DotOperandLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError, unsigned opIdx,
                                           DistributedLayoutAttr parent, unsigned kWidth, unsigned kGroup,
                                           bool kLast) {
  if (kLast && (opIdx != 1 || !isa<MfmaLayoutAttr>(parent)))
    return emitError() << "kLast is for an MFMA B operand laid out [N, K]";
  if (kGroup != 0 && (!isa<MfmaLayoutAttr>(parent) || !isPowerOf2(kGroup) || kWidth % kGroup != 0))
    return emitError() << "a dot operand's kGroup is a power of two dividing kWidth (MFMA only)";
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

// The mark a user-facing error carries (diagnostic metadata, never printed).
static constexpr StringLiteral kUserErrorMark = "tessel.user-error";

InFlightDiagnostic mlir::tessel::emitUserError(Location loc) {
  InFlightDiagnostic diag = mlir::emitError(loc);
  if (Diagnostic *d = diag.getUnderlyingDiagnostic())
    d->getMetadata().push_back(DiagnosticArgument(StringRef(kUserErrorMark)));
  return diag;
}

InFlightDiagnostic mlir::tessel::emitUserError(Operation *op) { return emitUserError(op->getLoc()); }

bool mlir::tessel::isUserError(Diagnostic &diagnostic) {
  return llvm::any_of(diagnostic.getMetadata(), [](const DiagnosticArgument &a) {
    return a.getKind() == DiagnosticArgument::DiagnosticArgumentKind::String && a.getAsString() == kUserErrorMark;
  });
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

// !tessel.lds<2x128x64xf16, order [1, 0], pad 8>: slots x the tile shape,
// the element type, then how a tile sits in a slot; optionally
// `, swizzle [unit, perPhase, maxPhase]`.
Type LdsType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape, order, swizzle;
  Type elem;
  int64_t pad = 0;
  llvm::SMLoc loc = parser.getCurrentLocation();
  auto parseDim = [&] { return parser.parseInteger(order.emplace_back()); };
  auto parseSwizzle = [&] { return parser.parseInteger(swizzle.emplace_back()); };
  if (parser.parseLess() || parser.parseDimensionList(shape, /*allowDynamic=*/false) ||
      parser.parseType(elem) || parser.parseComma() || parser.parseKeyword("order") ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseDim) || parser.parseComma() ||
      parser.parseKeyword("pad") || parser.parseInteger(pad))
    return {};
  if (succeeded(parser.parseOptionalComma()) &&
      (parser.parseKeyword("swizzle") ||
       parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseSwizzle)))
    return {};
  if (parser.parseGreater())
    return {};
  SmallVector<unsigned> dims;
  for (int64_t d : order) {
    if (d < 0) {
      parser.emitError(loc, "an LDS buffer's order lists dimensions (>= 0)");
      return {};
    }
    dims.push_back(unsigned(d));
  }
  return parser.getChecked<LdsType>(loc, parser.getContext(), shape, elem, dims, pad, swizzle);
}

void LdsType::print(AsmPrinter &printer) const {
  printer << '<';
  for (int64_t d : getShape())
    printer << d << 'x';
  printer << getElementType() << ", order [";
  llvm::interleaveComma(getOrder(), printer);
  printer << "], pad " << getPad();
  if (!getSwizzle().empty()) {
    printer << ", swizzle [";
    llvm::interleaveComma(getSwizzle(), printer);
    printer << ']';
  }
  printer << '>';
}

LogicalResult LdsType::verify(function_ref<InFlightDiagnostic()> emitError, ArrayRef<int64_t> shape, Type elem,
                              ArrayRef<unsigned> order, int64_t pad, ArrayRef<int64_t> swizzle) {
  if (shape.size() < 2 || llvm::any_of(shape, [](int64_t d) { return d <= 0; }))
    return emitError() << "an LDS buffer's shape is a slot count and a tile shape, all positive";
  if (!elem.isIntOrFloat())
    return emitError() << "an LDS buffer holds integers or floats";
  size_t rank = shape.size() - 1;
  SmallVector<bool> seen(rank, false);
  if (order.size() != rank)
    return emitError() << "an LDS buffer's order has one entry per tile dimension (" << rank << ")";
  for (unsigned d : order) {
    if (d >= rank || seen[d])
      return emitError() << "an LDS buffer's order must be a permutation of 0.." << rank - 1;
    seen[d] = true;
  }
  if (pad < 0)
    return emitError() << "an LDS buffer's pad must not be negative";
  if (!swizzle.empty()) {
    auto power = [](int64_t v) { return v > 0 && llvm::isPowerOf2_64(uint64_t(v)); };
    if (swizzle.size() != 3 || !llvm::all_of(swizzle, power))
      return emitError() << "an LDS buffer's swizzle is [unit, perPhase, maxPhase], powers of two";
    if (rank < 2 || swizzle[0] * swizzle[2] > shape[1 + order[0]])
      return emitError() << "an LDS buffer's swizzle permutes chunks within a row: unit * maxPhase ("
                         << swizzle[0] * swizzle[2] << ") must fit in a row of " << (rank < 2 ? 0 : shape[1 + order[0]]);
  }
  return success();
}

LdsStaging LdsType::staging() const {
  LdsStaging plan;
  plan.order.assign(getOrder().begin(), getOrder().end());
  plan.pad = getPad();
  if (!getSwizzle().empty()) {
    plan.unit = getSwizzle()[0];
    plan.perPhase = getSwizzle()[1];
    plan.maxPhase = getSwizzle()[2];
  }
  return plan;
}

int64_t LdsType::slotBytes() const {
  int64_t elemBytes = std::max<int64_t>(1, getElementType().getIntOrFloatBitWidth() / 8);
  return (staging().slots(getTileShape()) * elemBytes + 15) / 16 * 16;
}
