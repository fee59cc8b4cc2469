// Elementwise computation: arith and math ops on tiles become one scalar op
// per register (lowered by the upstream arith/math-to-LLVM patterns), with
// integer division defined for every input and ocml calls where AMDGPU has
// no accurate instruction; constant tiles, pointer arithmetic and assume.
#include "PatternTesselOpToLLVM.h"
#include "Utility.h"

#include "tessel/Analysis/AxisInfo.h"
#include "tessel/Dialect/Tessel/IR/LinearLayout.h"

#include <map>
#include <numeric>

using namespace mlir;
using namespace mlir::tessel;

namespace {

bool isTile(Type t) { return isa<RankedTensorType>(t); }

// Scalar arith/math ops the upstream patterns would lower differently from
// tessel's semantics (division by zero, math through ocml).
bool needsTesselScalarLowering(Operation *op) {
  return isa<arith::DivSIOp, arith::RemSIOp, arith::DivUIOp, arith::RemUIOp>(op) || isHardwareExp(op) ||
         isHardwareRsqrt(op) || !deviceLibraryFunction(op).empty();
}

// For each of the `n` registers of `resultType`, the first register holding
// a value the axis analysis proves equal to it (its constancy groups:
// aligned runs of equal elements per dimension), so that only those are
// computed, as Triton's maybeDeduplicate; itself for anything else. A
// register's element is its static coordinates XOR its lane's and wave's, so
// two registers whose static coordinates fall in one power-of-two group per
// dimension hold elements of one group in every thread. A group of c (c-
// aligned) splits into aligned groups of c's largest power-of-two divisor.
SmallVector<int64_t> equalRegisters(Type resultType, int64_t n, Value result, const AxisInfoAnalysis *axis) {
  SmallVector<int64_t> first(n);
  std::iota(first.begin(), first.end(), 0);
  auto type = dyn_cast<RankedTensorType>(resultType);
  if (!axis || !type || !isa<IntegerType>(type.getElementType()))
    return first;
  AxisInfo info = axis->get(result);
  if (info.rank() != unsigned(type.getRank()) || llvm::all_of(info.constancy, [](int64_t c) { return c <= 1; }))
    return first;
  LinearLayout layout = getLinearLayout(type);
  if (layout.numRegisters() != n)
    return first;
  std::map<SmallVector<int64_t>, int64_t> groups;
  for (int64_t r = 0; r < n; ++r) {
    LinearLayout::Basis key = layout.registerCoords(r);
    for (unsigned d = 0; d < key.size(); ++d)
      key[d] >>= llvm::Log2_64(uint64_t(highestPowerOf2Divisor(std::max<int64_t>(1, info.constancy[d]))));
    first[r] = groups.try_emplace(SmallVector<int64_t>(key.begin(), key.end()), r).first->second;
  }
  return first;
}

struct ElementwiseOpConversion : ConversionPattern {
  ElementwiseOpConversion(const TesselToLLVMTypeConverter &converter, const TargetInfo &target,
                          const AxisInfoAnalysis *axis, PackedPairs &pairs, PatternBenefit benefit)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), benefit, &converter.getContext()),
        converter(converter), target(target), axis(axis), pairs(pairs) {}

  LogicalResult matchAndRewrite(Operation *op, ArrayRef<ValueRange> operands,
                                ConversionPatternRewriter &rewriter) const override {
    // Several results (arith.mului_extended's low and high halves) share one type.
    if (!isa<arith::ArithDialect, math::MathDialect>(op->getDialect()) || op->getNumResults() == 0 ||
        !llvm::all_equal(op->getResultTypes()) || op->getNumRegions() != 0 || isa<arith::ConstantOp>(op))
      return failure();
    Type resultType = op->getResult(0).getType();
    bool onTiles = isTile(resultType) ||
                   llvm::any_of(op->getOperandTypes(), [](Type t) { return isTile(t); });
    if (!onTiles && !needsTesselScalarLowering(op))
      return failure(); // a plain scalar op: the upstream patterns lower it
    Type scalar = converter.scalarType(resultType);
    int64_t n = registersPerThread(resultType);
    // The axis analysis knows nothing of a multi-result op's results.
    SmallVector<int64_t> first =
        equalRegisters(resultType, n, op->getResult(0), op->getNumResults() == 1 ? axis : nullptr);
    SmallVector<SmallVector<Value>> out(op->getNumResults());
    // Registers 2k and 2k + 1 share a packed op (which two share one does
    // not matter: every operand tile has the result's layout).
    const bool packed = target.hasPackedF32() && isPackableF32(op) && n % 2 == 0;
    const bool pairwise = target.hasPackedF32() && carriesPairs(op) && n % 2 == 0;
    for (int64_t r = 0; r < n; ++r) {
      if (pairwise && r % 2 == 0) {
        if (std::optional<std::pair<Value, Value>> both = emitOnPairs(rewriter, op, operands, r)) {
          out[0].append({both->first, both->second});
          ++r;
          continue;
        }
      }
      if (packed) {
        SmallVector<Value> packedOperands;
        for (auto [operand, regs] : llvm::zip(op->getOperands(), operands)) {
          bool tile = isTile(operand.getType());
          packedOperands.push_back(
              packPair(rewriter, op->getLoc(), regs[tile ? r : 0], regs[tile ? r + 1 : 0], &pairs));
        }
        auto [lo, hi] = emitPackedOp(rewriter, op, packedOperands);
        out[0].append({lo, hi});
        ++r;
        continue;
      }
      if (first[r] != r) {
        for (SmallVector<Value> &regs : out)
          regs.push_back(regs[first[r]]);
        continue;
      }
      SmallVector<Value> scalarOperands;
      for (auto [operand, regs] : llvm::zip(op->getOperands(), operands))
        scalarOperands.push_back(regs[isTile(operand.getType()) ? r : 0]);
      for (auto [regs, value] : llvm::zip(out, emitScalarResults(rewriter, op, scalarOperands, scalar)))
        regs.push_back(value);
    }
    replaceWithRegisters(rewriter, op, std::move(out));
    return success();
  }

  // `op` (carriesPairs) on registers r and r + 1 as one op on two-element
  // vectors, when each tile operand's two registers are a pair made already
  // (a scalar condition stays as it is); else nothing.
  std::optional<std::pair<Value, Value>> emitOnPairs(ConversionPatternRewriter &rewriter, Operation *op,
                                                     ArrayRef<ValueRange> operands, int64_t r) const {
    Location loc = op->getLoc();
    SmallVector<Value> vectors;
    for (auto [operand, regs] : llvm::zip(op->getOperands(), operands)) {
      if (!isTile(operand.getType())) {
        if (!operand.getType().isInteger(1))
          return std::nullopt;
        vectors.push_back(regs[0]);
        continue;
      }
      Value pair = existingPair(rewriter, loc, regs[r], regs[r + 1], pairs);
      if (!pair)
        return std::nullopt;
      vectors.push_back(pair);
    }
    Type scalar = converter.scalarType(op->getResult(0).getType());
    Value result = emitScalarOp(rewriter, op, vectors, VectorType::get({2}, scalar));
    return std::pair(rewriter.create<LLVM::ExtractElementOp>(loc, result, i32Value(rewriter, loc, 0)).getResult(),
                     rewriter.create<LLVM::ExtractElementOp>(loc, result, i32Value(rewriter, loc, 1)).getResult());
  }

  const TesselToLLVMTypeConverter &converter;
  const TargetInfo &target;
  const AxisInfoAnalysis *axis;
  PackedPairs &pairs;
};

struct ConstantTileConversion : TesselOpToLLVMPattern<arith::ConstantOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;
  LogicalResult matchAndRewrite(arith::ConstantOp op, OneToNOpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto tile = dyn_cast<RankedTensorType>(op.getType());
    if (!tile)
      return failure();
    auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
    if (!dense || !dense.isSplat())
      return op.emitError("only constant tiles with one value are supported");
    Value v = constantValue(rewriter, op.getLoc(), tile.getElementType(),
                            dense.getSplatValue<TypedAttr>());
    replaceWithRegisters(rewriter, op, {SmallVector<Value>(registersPerThread(tile), v)});
    return success();
  }
};

struct AddPtrOpConversion : TesselOpToLLVMPattern<AddPtrOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;
  LogicalResult matchAndRewrite(AddPtrOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Type elem = pointeeOf(op.getType());
    auto ptrType = LLVM::LLVMPointerType::get(rewriter.getContext(), kGlobalAddressSpace);
    SmallVector<Value> out;
    for (auto [ptr, offset] : llvm::zip(adaptor.getPtr(), adaptor.getOffset()))
      out.push_back(rewriter.create<LLVM::GEPOp>(op.getLoc(), ptrType, elem, ptr, ValueRange{offset}));
    replaceWithRegisters(rewriter, op, {out});
    return success();
  }
};

struct AssumeOpConversion : TesselOpToLLVMPattern<AssumeOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;
  LogicalResult matchAndRewrite(AssumeOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.create<LLVM::AssumeOp>(op.getLoc(), adaptor.getCond().front());
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::tessel::populateElementwiseOpToLLVMPatterns(const TesselToLLVMTypeConverter &converter,
                                                       const TargetInfo &target,
                                                       RewritePatternSet &patterns,
                                                       const AxisInfoAnalysis *axis,
                                                       PackedPairs &pairs) {
  // Before the upstream arith/math patterns, which only see scalars.
  patterns.add<ElementwiseOpConversion>(converter, target, axis, pairs, /*benefit=*/2);
  patterns.add<ConstantTileConversion, AddPtrOpConversion, AssumeOpConversion>(converter, target,
                                                                               /*benefit=*/2);
}
