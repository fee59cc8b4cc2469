// tessel.reduce: combine within each thread, then across the lanes of a wave
// with a butterfly (operand order kept; DPP within a row of 16 lanes,
// v_permlanex16 between two rows on gfx11, ds_bpermute beyond; over a whole
// gfx9 wave, DPP row broadcasts into lane 63 and v_readlane), then across
// waves through LDS between barriers.
// Within a thread and across waves, float sums and products combine as a
// tree (a reduce's combine is associative and commutative; the order is the
// compiler's): independent combines the backend packs (v_pk_add_f32 on
// CDNA) or dual-issues (VOPD on RDNA3), and a chain of log2(n), not n - 1.
// Other combines stay a chain, which the backend folds into three-operand
// instructions (v_max3_f32, v_add3_u32) without canonicalizing each input.
// A float max or min (NaN-propagating) on a target without an instruction
// for it combines NaN-ignoring and carries a NaN flag (NanFlagged below).
#include "CombineUtility.h"
#include "PatternTesselOpToLLVM.h"
#include "Utility.h"

using namespace mlir;
using namespace mlir::tessel;

namespace {

// The combine's one op when it is a single op on its two arguments (either
// order) whose result it yields; else null.
Operation *singleBinaryCombine(Region &combine) {
  Block &body = combine.front();
  if (body.getNumArguments() != 2 || body.getOperations().size() != 2 || body.front().getNumOperands() != 2 ||
      body.front().getNumResults() != 1)
    return nullptr;
  Operation &op = body.front();
  bool operandsAreArguments = (op.getOperand(0) == body.getArgument(0) && op.getOperand(1) == body.getArgument(1)) ||
                              (op.getOperand(0) == body.getArgument(1) && op.getOperand(1) == body.getArgument(0));
  bool yieldsIt = body.back().getNumOperands() == 1 && body.back().getOperand(0) == op.getResult(0);
  return operandsAreArguments && yieldsIt ? &op : nullptr;
}

// All `values` combined, as a tree or (tree = false) in order: for a tree,
// values[i] (+) values[i + h] for the upper half's h, then again, until one
// is left (for 16 values: 8 combines of elements 8 apart, then 4, 2, 1).
FailureOr<SmallVector<Value>> combineAll(
    SmallVector<SmallVector<Value>> values, bool tree,
    function_ref<FailureOr<SmallVector<Value>>(ValueRange, ValueRange)> apply) {
  if (!tree) {
    for (size_t j = 1; j < values.size(); ++j) {
      FailureOr<SmallVector<Value>> c = apply(values.front(), values[j]);
      if (failed(c))
        return failure();
      values.front() = *c;
    }
    return values.front();
  }
  while (values.size() > 1) {
    size_t half = (values.size() + 1) / 2;
    for (size_t i = 0; i + half < values.size(); ++i) {
      FailureOr<SmallVector<Value>> c = apply(values[i], values[i + half]);
      if (failed(c))
        return failure();
      values[i] = *c;
    }
    values.resize(half);
  }
  return values.front();
}

// A reduce whose combine is arith.maximumf / minimumf (a NaN operand gives
// NaN) of f32 or f16, on a target where LLVM spells that as a max, an
// ordered compare and a select of a NaN constant per combine (all but
// gfx950): that is three instructions a step, a DPP step cannot feed the
// max directly, and the constant is copied into a VGPR for every select,
// which LLVM's peephole pass deduplicates in time quadratic in their number
// (a third of the codegen time of a kernel with 8000 max reductions; issue
// 34). Instead every step combines with llvm.maximumnum / minimumnum (a NaN
// loses; -0 < +0 as for maximumf: v_max_f32, v_max3_f32, v_max_f32_dpp) and
// carries an i32 flag, set where a NaN was seen (an unordered compare per
// two registers in the thread, an or across lanes); the NaN goes back in
// once, where the flag is set, before any exchange across waves.
struct NanFlagged {
  Operation *op; // the maximumf / minimumf
  Type type;

  static std::optional<NanFlagged> of(Operation *single, size_t operands, const TargetInfo &target) {
    if (operands != 1 || !isa_and_nonnull<arith::MaximumFOp, arith::MinimumFOp>(single) ||
        !single->hasTrait<OpTrait::IsCommutative>() || target.hasMinimumMaximum())
      return std::nullopt;
    Type t = single->getResult(0).getType();
    if (!t.isF32() && !t.isF16())
      return std::nullopt;
    return NanFlagged{single, t};
  }

  Value number(OpBuilder &b, Location loc, Value lhs, Value rhs) const {
    const char *name = isa<arith::MaximumFOp>(op) ? "llvm.maximumnum" : "llvm.minimumnum";
    return b.create<LLVM::CallIntrinsicOp>(loc, type, b.getStringAttr(name), ValueRange{lhs, rhs}).getResult(0);
  }
  // The thread's registers of one line: {combined, flag}.
  SmallVector<Value> inThread(OpBuilder &b, Location loc, ArrayRef<Value> values) const {
    Value m = values.front(), seen;
    for (size_t j = 1; j < values.size(); ++j)
      m = number(b, loc, m, values[j]);
    for (size_t j = 0; j < values.size(); j += 2) {
      Value other = j + 1 < values.size() ? values[j + 1] : values[j];
      Value uno = b.create<LLVM::FCmpOp>(loc, LLVM::FCmpPredicate::uno, values[j], other);
      seen = seen ? b.create<LLVM::OrOp>(loc, seen, uno).getResult() : uno;
    }
    return {m, b.create<LLVM::ZExtOp>(loc, b.getI32Type(), seen)};
  }
  SmallVector<Value> combine(OpBuilder &b, Location loc, ValueRange lhs, ValueRange rhs) const {
    return {number(b, loc, lhs[0], rhs[0]), b.create<LLVM::OrOp>(loc, lhs[1], rhs[1])};
  }
  Value finish(OpBuilder &b, Location loc, ValueRange v) const {
    auto floatType = cast<FloatType>(type);
    Value nan = b.create<LLVM::ConstantOp>(
        loc, type, b.getFloatAttr(type, APFloat::getQNaN(floatType.getFloatSemantics())));
    Value seen = b.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::ne, v[1], i32Value(b, loc, 0));
    return b.create<LLVM::SelectOp>(loc, seen, nan, v[0]);
  }
};

// The f32 sum or product (`op`, the combine's one op: a float add or
// multiply, isPackableF32) of each of `lines`, as combineAll's trees, on a target
// that packs f32. Two lines (of one length) go together, each combine of one
// with the same combine of the other in an op on <2 x float>, so every level
// takes the pairs the level before made as they are. A line left alone packs
// two neighbouring combines of a level, which the next level takes as they
// are too; the last combine is scalar.
SmallVector<Value> packedTrees(OpBuilder &b, Location loc, Operation *op,
                               SmallVector<SmallVector<Value>> lines) {
  Block &body = *op->getBlock();
  const bool swapped = op->getOperand(0) == body.getArgument(1);
  auto combine = [&](Value lhs, Value rhs) {
    SmallVector<Value, 2> operands = swapped ? SmallVector<Value, 2>{rhs, lhs} : SmallVector<Value, 2>{lhs, rhs};
    if (isa<VectorType>(lhs.getType()))
      return emitPackedOp(b, op, operands);
    return std::pair(emitScalarOp(b, op, operands, lhs.getType()), Value());
  };
  auto together = [&](SmallVector<Value> &x, SmallVector<Value> &y) {
    for (size_t n = x.size(); n > 1; n = (n + 1) / 2)
      for (size_t i = 0, half = (n + 1) / 2; i + half < n; ++i)
        std::tie(x[i], y[i]) =
            combine(packPair(b, loc, x[i], y[i]), packPair(b, loc, x[i + half], y[i + half]));
  };
  auto alone = [&](SmallVector<Value> &x) {
    for (size_t n = x.size(); n > 1; n = (n + 1) / 2)
      for (size_t i = 0, half = (n + 1) / 2; i + half < n; ++i) {
        if (i + 1 + half == n) {
          x[i] = combine(x[i], x[i + half]).first;
          continue;
        }
        std::tie(x[i], x[i + 1]) =
            combine(packPair(b, loc, x[i], x[i + 1]), packPair(b, loc, x[i + half], x[i + 1 + half]));
        ++i;
      }
  };
  size_t l = 0;
  for (; l + 1 < lines.size(); l += 2) {
    if (lines[l].size() == lines[l + 1].size()) {
      together(lines[l], lines[l + 1]);
      continue;
    }
    alone(lines[l]);
    alone(lines[l + 1]);
  }
  if (l < lines.size())
    alone(lines[l]);
  SmallVector<Value> out;
  for (SmallVector<Value> &values : lines)
    out.push_back(values.front());
  return out;
}

struct ReduceOpConversion : TesselOpToLLVMPattern<ReduceOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;

  LogicalResult matchAndRewrite(ReduceOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getSrcs()[0].getType());
    unsigned axis = op.getAxis();
    size_t n = op.getSrcs().size();
    LinearLayout layout = getLinearLayout(type);
    SmallVector<SmallVector<int64_t>> lines = layout.linesAlong(axis);
    Region &combine = op.getCombine();
    auto apply = [&](ValueRange lhs, ValueRange rhs) { return applyCombine(rewriter, combine, lhs, rhs); };
    Operation *single = singleBinaryCombine(combine);
    // One float add or multiply of the two arguments: combined as a tree.
    const bool tree = isa_and_nonnull<arith::AddFOp, arith::MulFOp>(single);
    const bool commutative = single && single->hasTrait<OpTrait::IsCommutative>();
    Operation *packed = tree && target.hasPackedF32() && isPackableF32(single) ? single : nullptr;
    // Each line's values (each the n sources' values) combined into one:
    // packedTrees where the target packs the combine (one source), else
    // combineAll's tree or chain per line.
    using Values = SmallVector<Value>;
    auto combineLines = [&](SmallVector<SmallVector<Values>> perLine) -> FailureOr<SmallVector<Values>> {
      SmallVector<Values> out;
      if (packed) {
        SmallVector<Values> single(perLine.size());
        for (auto [values, one] : llvm::zip(perLine, single))
          for (Values &v : values)
            one.push_back(v[0]);
        for (Value v : packedTrees(rewriter, loc, packed, std::move(single)))
          out.push_back({v});
        return out;
      }
      for (SmallVector<Values> &values : perLine) {
        FailureOr<Values> a = combineAll(std::move(values), tree, apply);
        if (failed(a))
          return failure();
        out.push_back(*a);
      }
      return out;
    };

    SmallVector<unsigned> laneBits = layout.laneBitsAlong(axis);
    // Across lanes, the combines of a NaN-propagating max or min go flagged.
    std::optional<NanFlagged> flagged =
        laneBits.empty() ? std::nullopt : NanFlagged::of(single, n, target);

    // 1. Within each thread.
    SmallVector<Values> acc;
    if (flagged) {
      for (const SmallVector<int64_t> &line : lines) {
        Values values;
        for (int64_t reg : line)
          values.push_back(adaptor.getSrcs()[0][reg]);
        acc.push_back(flagged->inThread(rewriter, loc, values));
      }
    } else {
      SmallVector<SmallVector<Values>> registers;
      for (const SmallVector<int64_t> &line : lines) {
        SmallVector<Values> &values = registers.emplace_back();
        for (int64_t reg : line) {
          Values &v = values.emplace_back();
          for (size_t i = 0; i < n; ++i)
            v.push_back(adaptor.getSrcs()[i][reg]);
        }
      }
      FailureOr<SmallVector<Values>> inThread = combineLines(std::move(registers));
      if (failed(inThread))
        return failure();
      acc = std::move(*inThread);
    }
    auto applyAcross = [&](ValueRange lhs, ValueRange rhs) -> FailureOr<Values> {
      if (flagged)
        return flagged->combine(rewriter, loc, lhs, rhs);
      return apply(lhs, rhs);
    };

    // 2. Across the lanes of a wave: a butterfly over the lane bits along
    // the axis; the lower lane's value stays the left operand. When the axis
    // spans all 64 lanes of a gfx9 wave, the rows of 16 instead combine
    // into lane 63 by DPP row broadcasts (the lower rows' value on the
    // left), and v_readlane gives every lane lane 63's: no ds_bpermute.
    const bool rowBroadcastTail = target.hasRowBroadcast() &&
                                  laneBits.size() == target.laneIdBits() &&
                                  llvm::all_of(llvm::enumerate(laneBits), [](auto bit) {
                                    return bit.value() == bit.index();
                                  });
    const size_t butterflySteps = rowBroadcastTail ? 4 : laneBits.size();
    Value lane = commutative || butterflySteps == 0 ? Value() : target.laneId(rewriter, loc);
    for (size_t k = 0; k < butterflySteps; ++k) {
      int64_t distance = int64_t(1) << laneBits[k];
      bool lowerBitsReduced = laneBits[k] == k; // every lower lane bit was reduced already
      // A commutative op (sum, max, and, ...) gives both lanes one result
      // in either order: no selects. LLVM removed them anyway, but proving
      // it walked every user of the shared lane predicate, per select:
      // quadratic in the number of reductions in a kernel (issue 34).
      Value upper = commutative ? Value() : rewriter.create<LLVM::ICmpOp>(
          loc, LLVM::ICmpPredicate::ne,
          rewriter.create<LLVM::AndOp>(loc, lane, i32Value(rewriter, loc, distance)),
          i32Value(rewriter, loc, 0));
      for (SmallVector<Value> &a : acc) {
        SmallVector<Value> other;
        for (Value v : a)
          other.push_back(target.butterflyPartner(rewriter, loc, v, distance, lowerBitsReduced));
        FailureOr<SmallVector<Value>> c = commutative ? applyAcross(a, other)
                                                      : apply(selectEach(rewriter, loc, upper, other, a),
                                                              selectEach(rewriter, loc, upper, a, other));
        if (failed(c))
          return failure();
        a = *c;
      }
    }

    if (rowBroadcastTail) {
      for (SmallVector<Value> &a : acc) {
        // Row 1 combines row 0 into it and row 3 row 2; then row 3 combines
        // lane 31 (rows 0 and 1) into it. What the other rows compute on
        // the way (with 0 where they have no source) is never read.
        for (int lastLane : {15, 31}) {
          SmallVector<Value> lower;
          for (Value v : a)
            lower.push_back(target.rowBroadcast(rewriter, loc, v, lastLane));
          FailureOr<SmallVector<Value>> c = applyAcross(lower, a);
          if (failed(c))
            return failure();
          a = *c;
        }
        for (Value &v : a)
          v = target.readLane(rewriter, loc, v, 63);
      }
    }
    if (flagged)
      for (Values &a : acc)
        a = {flagged->finish(rewriter, loc, a)};

    // 3. Across waves, through LDS.
    if (layout.distinctWaves(axis) > 1) {
      WaveExchange x(rewriter, loc, target, op, op.getSrcs(), axis, lines);
      onlyOwners(rewriter, loc, target, type, [&] {
        for (size_t l = 0; l < lines.size(); ++l)
          for (size_t i = 0; i < n; ++i)
            x.store(rewriter, loc, i, x.waveCoord(), l, acc[l][i]);
      });
      target.ldsBarrier(rewriter, loc);
      SmallVector<SmallVector<Values>> waves(lines.size());
      for (size_t l = 0; l < lines.size(); ++l)
        for (int64_t w = 0; w < x.waves(); ++w) {
          Values &v = waves[l].emplace_back();
          for (size_t i = 0; i < n; ++i)
            v.push_back(x.load(rewriter, loc, i, w, l, acc[l][i].getType()));
        }
      FailureOr<SmallVector<Values>> acrossWaves = combineLines(std::move(waves));
      if (failed(acrossWaves))
        return failure();
      acc = std::move(*acrossWaves);
      target.endLdsScratch(rewriter, loc, op);
    }

    SmallVector<SmallVector<Value>> results(n);
    for (size_t i = 0; i < n; ++i)
      for (SmallVector<Value> &a : acc)
        results[i].push_back(a[i]);
    replaceWithRegisters(rewriter, op, std::move(results));
    return success();
  }
};

} // namespace

void mlir::tessel::populateReduceOpToLLVMPatterns(const TesselToLLVMTypeConverter &converter,
                                                  const TargetInfo &target,
                                                  RewritePatternSet &patterns) {
  patterns.add<ReduceOpConversion>(converter, target);
}
