#include "tessel/Analysis/AxisInfo.h"
#include "tessel/Dialect/Tessel/IR/Dialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/TypeSwitch.h"

#include <numeric>

using namespace mlir;
using namespace mlir::tessel;

int64_t mlir::tessel::highestPowerOf2Divisor(int64_t v) {
  if (v == 0)
    return AxisInfo::kMaxDivisibility;
  int64_t p = v & -v;
  return std::min<int64_t>(p < 0 ? -p : p, AxisInfo::kMaxDivisibility);
}

AxisInfo AxisInfo::unknown(unsigned rank) {
  AxisInfo a;
  rank = std::max(rank, 1u);
  a.contiguity.assign(rank, 1);
  a.divisibility.assign(rank, 1);
  a.constancy.assign(rank, 1);
  return a;
}

AxisInfo AxisInfo::uniform(ArrayRef<int64_t> shape, int64_t divisibility) {
  AxisInfo a = unknown(shape.size());
  for (unsigned d = 0; d < shape.size(); ++d)
    a.constancy[d] = shape[d];
  if (shape.empty())
    a.constancy[0] = 1;
  a.divisibility.assign(a.rank(), divisibility);
  return a;
}

static SmallVector<int64_t> shapeOf(Value v) {
  if (auto t = dyn_cast<RankedTensorType>(v.getType()))
    return SmallVector<int64_t>(t.getShape());
  return {};
}

static int64_t gcd(int64_t a, int64_t b) { return std::gcd(a, b); }

static int64_t elementBytes(Type pointee) {
  return std::max<int64_t>(1, pointee.getIntOrFloatBitWidth() / 8);
}

AxisInfoAnalysis::AxisInfoAnalysis(Operation *func) {
  if (auto f = dyn_cast<func::FuncOp>(func)) {
    for (BlockArgument arg : f.getArguments()) {
      int64_t div = 1;
      if (auto attr = f.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(), "tessel.divisibility"))
        div = attr.getInt();
      info_[arg] = AxisInfo::uniform({}, div);
    }
  }
  func->walk([&](Operation *op) { visit(op); });
}

AxisInfo AxisInfoAnalysis::get(Value v) const {
  auto it = info_.find(v);
  if (it != info_.end())
    return it->second;
  // Nothing known: unknown, with the value's own rank.
  unsigned rank = 1;
  if (auto t = dyn_cast<RankedTensorType>(v.getType()))
    rank = std::max<int64_t>(1, t.getRank());
  return AxisInfo::unknown(rank);
}

// Ops that apply one function to each element: the result's constancy is
// what all operands share.
static bool isElementwise(Operation *op) {
  if (!isa<arith::ArithDialect, math::MathDialect>(op->getDialect()) || op->getNumResults() != 1)
    return false;
  auto result = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  for (Value v : op->getOperands()) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (bool(t) != bool(result) || (t && t.getShape() != result.getShape()))
      return false;
  }
  return true;
}

void AxisInfoAnalysis::visit(Operation *op) {
  if (op->getNumResults() != 1)
    return; // multi-result ops (reduce, scan with several operands): unknown
  Value result = op->getResult(0);
  SmallVector<int64_t> shape = shapeOf(result);
  unsigned rank = std::max<unsigned>(shape.size(), 1);
  AxisInfo out = AxisInfo::unknown(rank);
  auto in = [&](unsigned i) { return get(op->getOperand(i)); };
  // Elementwise default: constant where every operand is constant.
  auto elementwiseConstancy = [&] {
    for (unsigned d = 0; d < rank; ++d) {
      int64_t c = shape.empty() ? 1 : shape[d];
      for (Value operand : op->getOperands())
        if (get(operand).rank() == rank)
          c = gcd(c, get(operand).constancy[d]);
      out.constancy[d] = c;
    }
  };

  llvm::TypeSwitch<Operation *>(op)
      .Case<arith::ConstantOp>([&](arith::ConstantOp c) {
        int64_t div = 1;
        if (auto i = dyn_cast<IntegerAttr>(c.getValue()))
          div = highestPowerOf2Divisor(i.getInt());
        else if (auto d = dyn_cast<DenseIntElementsAttr>(c.getValue()); d && d.isSplat())
          div = highestPowerOf2Divisor(d.getSplatValue<APInt>().getSExtValue());
        out = AxisInfo::uniform(shape, div);
      })
      .Case<MakeRangeOp>([&](MakeRangeOp r) {
        out.contiguity[0] = shape[0];
        out.divisibility[0] = highestPowerOf2Divisor(r.getStart());
      })
      .Case<SplatOp>([&](SplatOp s) {
        out = AxisInfo::uniform(shape, in(0).divisibility[0]);
      })
      .Case<BroadcastOp>([&](BroadcastOp b) {
        auto srcShape = shapeOf(b.getSrc());
        const AxisInfo &src = in(0);
        for (unsigned d = 0; d < rank; ++d) {
          bool grown = srcShape[d] == 1 && shape[d] != 1;
          out.contiguity[d] = grown ? 1 : src.contiguity[d];
          out.divisibility[d] = src.divisibility[d];
          out.constancy[d] = grown ? shape[d] : src.constancy[d];
        }
      })
      .Case<ExpandDimsOp>([&](ExpandDimsOp e) {
        const AxisInfo &src = in(0);
        out.contiguity.assign(src.contiguity.begin(), src.contiguity.end());
        out.divisibility.assign(src.divisibility.begin(), src.divisibility.end());
        out.constancy.assign(src.constancy.begin(), src.constancy.end());
        // Along the new dim every element is its own run: only what divides
        // every element of the operand holds.
        int64_t minDiv = AxisInfo::kMaxDivisibility;
        for (unsigned d = 0; d < src.rank(); ++d)
          minDiv = std::min(minDiv, src.contiguity[d] > 1 ? 1 : src.divisibility[d]);
        unsigned axis = e.getAxis();
        out.contiguity.insert(out.contiguity.begin() + axis, 1);
        out.divisibility.insert(out.divisibility.begin() + axis, minDiv);
        out.constancy.insert(out.constancy.begin() + axis, 1);
      })
      .Case<arith::AddIOp, AddPtrOp>([&](Operation *) {
        const AxisInfo &a = in(0), &b = in(1);
        int64_t scale = 1;
        if (auto p = dyn_cast<AddPtrOp>(op))
          scale = elementBytes(pointeeOf(p.getType()));
        for (unsigned d = 0; d < rank; ++d) {
          out.contiguity[d] = std::max(gcd(a.contiguity[d], b.constancy[d]),
                                       gcd(a.constancy[d], b.contiguity[d]));
          out.divisibility[d] =
              gcd(a.divisibility[d],
                  std::min(b.divisibility[d] * scale, AxisInfo::kMaxDivisibility));
          out.constancy[d] = gcd(a.constancy[d], b.constancy[d]);
        }
      })
      .Case<arith::SubIOp>([&](arith::SubIOp) {
        const AxisInfo &a = in(0), &b = in(1);
        for (unsigned d = 0; d < rank; ++d) {
          out.contiguity[d] = gcd(a.contiguity[d], b.constancy[d]);
          out.divisibility[d] = gcd(a.divisibility[d], b.divisibility[d]);
          out.constancy[d] = gcd(a.constancy[d], b.constancy[d]);
        }
      })
      .Case<arith::MulIOp, arith::ShLIOp>([&](Operation *) {
        const AxisInfo &a = in(0), &b = in(1);
        bool shl = isa<arith::ShLIOp>(op);
        for (unsigned d = 0; d < rank; ++d) {
          // Only constant factors are tracked: a contiguous run times a
          // constant is no longer contiguous, but stays divisible.
          // Divisibility describes the first element of each contiguous run;
          // once the product breaks runs up, a run's later elements count.
          int64_t da = a.contiguity[d] > 1 ? 1 : a.divisibility[d];
          int64_t db = b.contiguity[d] > 1 ? 1 : b.divisibility[d];
          if (shl)
            db = 1; // the shift amount's value is not tracked
          out.divisibility[d] = std::min(da * db, AxisInfo::kMaxDivisibility);
          out.constancy[d] = gcd(a.constancy[d], b.constancy[d]);
        }
      })
      .Case<arith::CmpIOp>([&](arith::CmpIOp c) {
        const AxisInfo &a = in(0), &b = in(1);
        bool ordering = c.getPredicate() != arith::CmpIPredicate::eq &&
                        c.getPredicate() != arith::CmpIPredicate::ne;
        for (unsigned d = 0; d < rank; ++d) {
          int64_t full = shape.empty() ? 1 : shape[d];
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
      })
      .Case<arith::ExtSIOp, arith::ExtUIOp, arith::TruncIOp>([&](Operation *) {
        out = in(0);
      })
      .Case<LoadOp>([&](LoadOp) {})
      .Case<MultipleOfOp>([&](MultipleOfOp m) {
        out = in(0);
        for (int64_t &d : out.divisibility)
          d = std::max(d, std::min<int64_t>(m.getDivisor(), AxisInfo::kMaxDivisibility));
      })
      .Case<MaxContiguousOp>([&](MaxContiguousOp m) {
        out = in(0);
        out.contiguity.back() = std::max<int64_t>(out.contiguity.back(), m.getCount());
      })
      .Case<ConvertLayoutOp>([&](ConvertLayoutOp) { out = in(0); })
      .Case<PermuteOp>([&](PermuteOp p) {
        const AxisInfo &src = in(0);
        for (unsigned d = 0; d < rank; ++d) {
          unsigned from = p.getOrder()[d];
          out.contiguity[d] = src.contiguity[from];
          out.divisibility[d] = src.divisibility[from];
          out.constancy[d] = src.constancy[from];
        }
      })
      .Default([&](Operation *) {
        // Reduce, scan, reshape, join, split and anything unlisted: unknown.
        if (op->getNumOperands() > 0 && isElementwise(op))
          elementwiseConstancy();
      });
  info_[result] = std::move(out);
}

unsigned AxisInfoAnalysis::contiguousDim(Value ptr) const {
  const AxisInfo &a = get(ptr);
  unsigned best = a.rank() - 1;
  for (int d = int(a.rank()) - 1; d >= 0; --d)
    if (a.contiguity[d] > a.contiguity[best])
      best = d;
  return best;
}

int64_t AxisInfoAnalysis::vectorWidth(Value ptr, unsigned dim, Value mask) const {
  int64_t bytes = elementBytes(pointeeOf(ptr.getType()));
  const AxisInfo &p = get(ptr);
  int64_t aligned = std::max<int64_t>(1, p.divisibility[dim] / bytes);
  int64_t vec = std::min({p.contiguity[dim], aligned, std::max<int64_t>(1, 16 / bytes)});
  if (mask)
    vec = std::min(vec, get(mask).constancy[dim]);
  return std::max<int64_t>(1, vec);
}
