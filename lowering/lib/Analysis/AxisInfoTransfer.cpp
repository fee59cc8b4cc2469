// Transfer functions of the axis analysis, by op kind: constants and tile
// construction, shape changes, integer arithmetic, comparisons, hints, and
// the elementwise default.
#include "AxisInfoTransfer.h"
#include "tessel/Dialect/Tessel/IR/Dialect.h"

#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

#include <numeric>

using namespace mlir;
using namespace mlir::tessel;

int64_t mlir::tessel::elementBytes(Type pointee) {
  return std::max<int64_t>(1, pointee.getIntOrFloatBitWidth() / 8);
}

namespace {

int64_t gcd(int64_t a, int64_t b) { return std::gcd(a, b); }

// What every transfer function sees: the op, its result's shape (empty for
// scalars) and its operands' facts.
struct OpFacts {
  Operation *op;
  ArrayRef<const AxisInfo *> operands;
  SmallVector<int64_t> shape;
  unsigned rank; // at least 1

  const AxisInfo &in(unsigned i) const { return *operands[i]; }
  int64_t extent(unsigned d) const { return shape.empty() ? 1 : shape[d]; }
  AxisInfo unknown() const { return AxisInfo::unknown(rank); }
};

SmallVector<int64_t> shapeOf(Value v) {
  if (auto t = dyn_cast<RankedTensorType>(v.getType()))
    return SmallVector<int64_t>(t.getShape());
  return {};
}

//===----------------------------------------------------------------------===//
// Constants and tile construction
//===----------------------------------------------------------------------===//

AxisInfo visitConstant(const OpFacts &f, arith::ConstantOp c) {
  int64_t div = 1;
  std::optional<int64_t> value;
  if (auto i = dyn_cast<IntegerAttr>(c.getValue()); i && i.getType().isInteger())
    value = i.getValue().getSExtValue();
  else if (auto d = dyn_cast<DenseIntElementsAttr>(c.getValue()); d && d.isSplat())
    value = d.getSplatValue<APInt>().getSExtValue();
  if (value)
    div = highestPowerOf2Divisor(*value);
  AxisInfo out = AxisInfo::uniform(f.shape, div);
  out.nonNegative = value && *value >= 0 && !c.getType().isInteger(1) &&
                    !(isa<ShapedType>(c.getType()) && cast<ShapedType>(c.getType()).getElementType().isInteger(1));
  return out;
}

AxisInfo visitMakeRange(const OpFacts &f, MakeRangeOp r) {
  AxisInfo out = f.unknown();
  out.contiguity[0] = f.shape[0];
  out.divisibility[0] = highestPowerOf2Divisor(r.getStart());
  out.nonNegative = r.getStart() >= 0;
  return out;
}

// The value of an integer constant, looking through splats and broadcasts.
std::optional<int64_t> constantIntOf(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (isa<SplatOp, BroadcastOp, ExpandDimsOp>(def)) {
      v = def->getOperand(0);
      continue;
    }
    APInt value;
    if (matchPattern(v, m_ConstantInt(&value)))
      return value.getSExtValue();
    return std::nullopt;
  }
  return std::nullopt;
}

AxisInfo visitSplat(const OpFacts &f) {
  AxisInfo out = AxisInfo::uniform(f.shape, f.in(0).divisibility[0]);
  out.nonNegative = f.in(0).nonNegative;
  return out;
}

//===----------------------------------------------------------------------===//
// Shape changes
//===----------------------------------------------------------------------===//

AxisInfo visitBroadcast(const OpFacts &f, BroadcastOp b) {
  SmallVector<int64_t> srcShape = shapeOf(b.getSrc());
  const AxisInfo &src = f.in(0);
  AxisInfo out = f.unknown();
  for (unsigned d = 0; d < f.rank; ++d) {
    bool grown = srcShape[d] == 1 && f.shape[d] != 1;
    out.contiguity[d] = grown ? 1 : src.contiguity[d];
    out.divisibility[d] = src.divisibility[d];
    out.constancy[d] = grown ? f.shape[d] : src.constancy[d];
  }
  out.nonNegative = src.nonNegative;
  return out;
}

AxisInfo visitExpandDims(const OpFacts &f, ExpandDimsOp e) {
  AxisInfo out = f.in(0);
  // Along the new dim every element is its own run: only what divides
  // every element of the operand holds.
  int64_t minDiv = AxisInfo::kMaxDivisibility;
  for (unsigned d = 0; d < out.rank(); ++d)
    minDiv = std::min(minDiv, out.contiguity[d] > 1 ? 1 : out.divisibility[d]);
  unsigned axis = e.getAxis();
  out.contiguity.insert(out.contiguity.begin() + axis, 1);
  out.divisibility.insert(out.divisibility.begin() + axis, minDiv);
  out.constancy.insert(out.constancy.begin() + axis, 1);
  return out;
}

AxisInfo visitPermute(const OpFacts &f, PermuteOp p) {
  const AxisInfo &src = f.in(0);
  AxisInfo out = f.unknown();
  for (unsigned d = 0; d < f.rank; ++d) {
    unsigned from = p.getOrder()[d];
    out.contiguity[d] = src.contiguity[from];
    out.divisibility[d] = src.divisibility[from];
    out.constancy[d] = src.constancy[from];
  }
  out.nonNegative = src.nonNegative;
  return out;
}

//===----------------------------------------------------------------------===//
// Integer and pointer arithmetic
//===----------------------------------------------------------------------===//

// addi, and addptr (whose offset counts elements, divisibility counts bytes).
AxisInfo visitAdd(const OpFacts &f, int64_t scale) {
  const AxisInfo &a = f.in(0), &b = f.in(1);
  AxisInfo out = f.unknown();
  for (unsigned d = 0; d < f.rank; ++d) {
    out.contiguity[d] =
        std::max(gcd(a.contiguity[d], b.constancy[d]), gcd(a.constancy[d], b.contiguity[d]));
    out.divisibility[d] = gcd(a.divisibility[d],
                              std::min(b.divisibility[d] * scale, AxisInfo::kMaxDivisibility));
    out.constancy[d] = gcd(a.constancy[d], b.constancy[d]);
  }
  out.nonNegative = scale == 1 && a.nonNegative && b.nonNegative; // pointers: not a number
  return out;
}

AxisInfo visitSub(const OpFacts &f) {
  const AxisInfo &a = f.in(0), &b = f.in(1);
  AxisInfo out = f.unknown();
  for (unsigned d = 0; d < f.rank; ++d) {
    out.contiguity[d] = gcd(a.contiguity[d], b.constancy[d]);
    out.divisibility[d] = gcd(a.divisibility[d], b.divisibility[d]);
    out.constancy[d] = gcd(a.constancy[d], b.constancy[d]);
  }
  return out;
}

// muli, and shli (whose shift amount's value is not tracked).
AxisInfo visitMul(const OpFacts &f, bool shift) {
  const AxisInfo &a = f.in(0), &b = f.in(1);
  // x * 1 and x << 0 are x (a literal, or an argument specialized to 1,
  // before the canonicalizer folds them).
  const int64_t identity = shift ? 0 : 1;
  if (constantIntOf(f.op->getOperand(1)) == identity)
    return a;
  if (!shift && constantIntOf(f.op->getOperand(0)) == identity)
    return b;
  AxisInfo out = f.unknown();
  for (unsigned d = 0; d < f.rank; ++d) {
    // Only constant factors are tracked: a contiguous run times a
    // constant is no longer contiguous, but stays divisible.
    // Divisibility describes the first element of each contiguous run;
    // once the product breaks runs up, a run's later elements count.
    int64_t da = a.contiguity[d] > 1 ? 1 : a.divisibility[d];
    int64_t db = b.contiguity[d] > 1 || shift ? 1 : b.divisibility[d];
    out.divisibility[d] = std::min(da * db, AxisInfo::kMaxDivisibility);
    out.constancy[d] = gcd(a.constancy[d], b.constancy[d]);
  }
  out.nonNegative = !shift && a.nonNegative && b.nonNegative;
  return out;
}

// x / C and x % C for a constant C > 0, or a C the same for every element
// (a splatted scalar: a stride, a size), signed (x known >= 0) or unsigned.
// Split x's contiguous runs into pieces of L = gcd(contiguity, divisibility,
// D) elements, D = C or, for a C known only at run time, the power of two
// dividing it: each piece starts at a multiple of L, and multiples of C are
// multiples of L, so no piece crosses one. Over a piece x / C is constant and
// x % C is contiguous, starting at a multiple of L. (Signed division of
// negative x truncates toward zero: pieces would cross its steps.)
AxisInfo visitDivRem(const OpFacts &f, bool isSigned, bool remainder) {
  const AxisInfo &a = f.in(0), &b = f.in(1);
  std::optional<int64_t> divisor = constantIntOf(f.op->getOperand(1));
  AxisInfo out = f.unknown();
  bool uniform = b.rank() == f.rank;
  for (unsigned d = 0; uniform && d < f.rank; ++d)
    uniform = b.constancy[d] >= f.extent(d);
  if ((divisor && *divisor <= 0) || (!divisor && !uniform) || (isSigned && !a.nonNegative))
    return out;
  // x >= 0: the remainder has x's sign; the quotient C's as well.
  out.nonNegative = isSigned && (remainder || divisor || b.nonNegative);
  for (unsigned d = 0; d < f.rank; ++d) {
    const int64_t c = divisor ? *divisor : b.divisibility[d];
    const int64_t piece = gcd(gcd(a.contiguity[d], a.divisibility[d]), c);
    if (remainder) {
      out.contiguity[d] = piece;
      out.divisibility[d] = piece > 1 ? piece : highestPowerOf2Divisor(gcd(a.divisibility[d], c));
      out.constancy[d] = a.constancy[d];
    } else {
      out.constancy[d] = std::max(a.constancy[d], piece);
      // A constant run divided by a power of two it is divisible by.
      if (divisor && a.contiguity[d] == 1 && (c & (c - 1)) == 0 && a.divisibility[d] % c == 0)
        out.divisibility[d] = std::max<int64_t>(1, a.divisibility[d] / c);
    }
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Comparisons
//===----------------------------------------------------------------------===//

AxisInfo visitCmp(const OpFacts &f, arith::CmpIOp c) {
  const AxisInfo &a = f.in(0), &b = f.in(1);
  bool ordering = c.getPredicate() != arith::CmpIPredicate::eq &&
                  c.getPredicate() != arith::CmpIPredicate::ne;
  AxisInfo out = f.unknown();
  for (unsigned d = 0; d < f.rank; ++d) {
    int64_t full = f.extent(d);
    int64_t k = gcd(a.constancy[d], b.constancy[d]);
    // A contiguous run starting at a multiple of D, compared with a
    // value that is also a multiple of D, changes outcome only at
    // multiples of D.
    if (ordering && b.constancy[d] == full)
      k = std::max(k, gcd(a.contiguity[d], gcd(a.divisibility[d], b.divisibility[d])));
    if (ordering && a.constancy[d] == full)
      k = std::max(k, gcd(b.contiguity[d], gcd(a.divisibility[d], b.divisibility[d])));
    out.constancy[d] = k;
  }
  return out;
}

AxisInfo visitElementwise(const OpFacts &f);

// select(c, a, b), max and min: each element is one of the two operands'
// elements, so the result is divisible by what both are; a select on a
// condition constant along d keeps the runs both operands have there.
AxisInfo visitChoice(const OpFacts &f, Value cond) {
  const AxisInfo &a = f.in(f.operands.size() - 2), &b = f.in(f.operands.size() - 1);
  AxisInfo out = visitElementwise(f);
  for (unsigned d = 0; d < f.rank; ++d) {
    bool uniformChoice = cond && f.in(0).rank() == f.rank && f.in(0).constancy[d] == f.extent(d);
    if (uniformChoice)
      out.contiguity[d] = gcd(a.contiguity[d], b.contiguity[d]);
    // An operand's divisibility is its runs' first elements'; where the
    // result's runs are shorter, they start inside those runs, at multiples
    // of the result's contiguity (1: anywhere).
    auto startsOf = [&](const AxisInfo &x) {
      return x.contiguity[d] > out.contiguity[d] ? gcd(x.divisibility[d], out.contiguity[d]) : x.divisibility[d];
    };
    out.divisibility[d] = gcd(startsOf(a), startsOf(b));
  }
  if (isa<arith::MaxSIOp, arith::MinUIOp>(f.op)) // either operand's bound is the result's
    out.nonNegative = a.nonNegative || b.nonNegative;
  else
    out.nonNegative = a.nonNegative && b.nonNegative;
  return out;
}

//===----------------------------------------------------------------------===//
// Hints
//===----------------------------------------------------------------------===//

AxisInfo visitMultipleOf(const OpFacts &f, MultipleOfOp m) {
  AxisInfo out = f.in(0);
  for (int64_t &d : out.divisibility)
    d = std::max(d, std::min<int64_t>(m.getDivisor(), AxisInfo::kMaxDivisibility));
  return out;
}

AxisInfo visitMaxContiguous(const OpFacts &f, MaxContiguousOp m) {
  AxisInfo out = f.in(0);
  out.contiguity.back() = std::max<int64_t>(out.contiguity.back(), m.getCount());
  return out;
}

//===----------------------------------------------------------------------===//
// Everything else
//===----------------------------------------------------------------------===//

// Ops that apply one function to each element: the result's constancy is
// what all operands share.
bool isElementwise(Operation *op) {
  if (op->getNumOperands() == 0 || op->getNumResults() != 1 ||
      !isa<arith::ArithDialect, math::MathDialect>(op->getDialect()))
    return false;
  auto result = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  for (Value v : op->getOperands()) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (bool(t) != bool(result) || (t && t.getShape() != result.getShape()))
      return false;
  }
  return true;
}

AxisInfo visitElementwise(const OpFacts &f) {
  AxisInfo out = f.unknown();
  for (unsigned d = 0; d < f.rank; ++d) {
    int64_t c = f.extent(d);
    for (const AxisInfo *operand : f.operands)
      if (operand->rank() == f.rank)
        c = gcd(c, operand->constancy[d]);
    out.constancy[d] = c;
  }
  return out;
}

} // namespace

AxisInfo mlir::tessel::transferAxisInfo(Operation *op, ArrayRef<const AxisInfo *> operands) {
  OpFacts f{op, operands, shapeOf(op->getResult(0)), 1};
  f.rank = std::max<unsigned>(f.shape.size(), 1);
  return llvm::TypeSwitch<Operation *, AxisInfo>(op)
      .Case([&](arith::ConstantOp c) { return visitConstant(f, c); })
      .Case([&](MakeRangeOp r) { return visitMakeRange(f, r); })
      .Case([&](SplatOp) { return visitSplat(f); })
      .Case([&](BroadcastOp b) { return visitBroadcast(f, b); })
      .Case([&](ExpandDimsOp e) { return visitExpandDims(f, e); })
      .Case([&](PermuteOp p) { return visitPermute(f, p); })
      .Case([&](arith::AddIOp) { return visitAdd(f, 1); })
      .Case([&](AddPtrOp p) { return visitAdd(f, elementBytes(pointeeOf(p.getType()))); })
      .Case([&](arith::SubIOp) { return visitSub(f); })
      .Case([&](arith::MulIOp) { return visitMul(f, /*shift=*/false); })
      .Case([&](arith::ShLIOp) { return visitMul(f, /*shift=*/true); })
      .Case([&](arith::DivSIOp) { return visitDivRem(f, /*isSigned=*/true, /*remainder=*/false); })
      .Case([&](arith::DivUIOp) { return visitDivRem(f, /*isSigned=*/false, /*remainder=*/false); })
      .Case([&](arith::RemSIOp) { return visitDivRem(f, /*isSigned=*/true, /*remainder=*/true); })
      .Case([&](arith::RemUIOp) { return visitDivRem(f, /*isSigned=*/false, /*remainder=*/true); })
      .Case([&](arith::CmpIOp c) { return visitCmp(f, c); })
      .Case([&](arith::SelectOp sel) { return visitChoice(f, sel.getCondition()); })
      .Case<arith::MaxSIOp, arith::MinSIOp, arith::MaxUIOp, arith::MinUIOp>(
          [&](Operation *) { return visitChoice(f, Value()); })
      .Case<arith::ExtSIOp, ConvertLayoutOp>([&](Operation *) { return f.in(0); })
      .Case<arith::ExtUIOp, arith::TruncIOp>([&](Operation *) {
        AxisInfo out = f.in(0);
        out.nonNegative = out.nonNegative && isa<arith::ExtUIOp>(f.op); // a truncation may wrap
        return out;
      })
      .Case<ProgramIdOp, NumProgramsOp>([&](Operation *) {
        AxisInfo out = f.unknown();
        out.nonNegative = true;
        return out;
      })
      .Case([&](MultipleOfOp m) { return visitMultipleOf(f, m); })
      .Case([&](MaxContiguousOp m) { return visitMaxContiguous(f, m); })
      // Loads, reduce, scan, reshape, join, split and anything unlisted:
      // unknown, but elementwise arith/math keeps shared constancy.
      .Default([&](Operation *) { return isElementwise(op) ? visitElementwise(f) : f.unknown(); });
}
