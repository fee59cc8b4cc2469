// Performance remarks: see Remarks.h.
#include "Remarks.h"

#include "tessel/Analysis/AxisInfo.h"
#include "tessel/Dialect/Tessel/IR/Dialect.h"
#include "tessel/Dialect/Tessel/IR/Layouts.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <optional>

namespace tessel {

namespace {

using namespace mlir;
using namespace mlir::tessel;

Remark remarkAt(Operation *op, RemarkKind kind, std::string message) {
  Remark r{kind, "", 0, std::move(message)};
  if (FileLineColLoc where = fileLineOf(op->getLoc())) {
    r.file = where.getFilename().str();
    r.line = where.getLine();
  }
  return r;
}

std::string shapeText(RankedTensorType type) {
  std::string out;
  for (int64_t d : type.getShape())
    out += (out.empty() ? "" : "x") + std::to_string(d);
  return out;
}

// One global access of a tile: why it moves fewer than 16 bytes a thread.
struct Access {
  Operation *op;
  Value addresses;           // the tile of addresses (pointers or a buffer op's offsets)
  RankedTensorType tile;     // its type, with its layout
  int64_t elementBytes;
  int64_t vec;
  AxisInfo address;          // of the pointers, or of the offsets (divisibility in elements)
  int64_t baseBytes = 0;     // a buffer op's base: bytes known to divide it (0: a load/store of pointers)
  Value mask;
  bool load;
  Value bound = {}; // a buffer op's element count: the mask it replaced
};

// Whether an access of `tile` that moves `vec` elements of `elementBytes`
// at a time moves fewer than 16 bytes a thread and could move more (a tile
// too small to give a thread 16 bytes cannot): only such an access gets a
// remark, and needs the axis analysis to say why.
bool couldBeWider(RankedTensorType tile, int64_t elementBytes, int64_t vec) {
  const int64_t want = std::max<int64_t>(1, 16 / elementBytes);
  return vec < want && registersPerThread(tile) >= want;
}

// "line N" of `op`, "file:N" where the file is not `near`'s (a helper in a header).
std::string lineText(Operation *op, Operation *near) {
  FileLineColLoc where = fileLineOf(op->getLoc());
  if (!where)
    return "an unknown line";
  FileLineColLoc at = near ? fileLineOf(near->getLoc()) : FileLineColLoc();
  if (at && at.getFilename() != where.getFilename())
    return where.getFilename().str() + ":" + std::to_string(where.getLine());
  return "line " + std::to_string(where.getLine());
}

// A signed `%` or `/` that ends runs of at least `want` elements along the
// access's dimension `dim` in the tile computation of `address` because its
// dividend is not known >= 0: its result, were the dividend known >= 0
// (withNonNegativeOperand), would keep them (a remainder's runs, a
// quotient's constancy: a negative x's remainder jumps by C at multiples of
// C, see visitDivRem); and the scalar to assume() non-negative: the first
// value made on another line than the division that the analysis does not
// know >= 0 (a program id computed with a division, an argument, a loop's
// counter). The walk follows the dimension through elementwise ops,
// broadcast, expand_dims and permute, and a loop's carried values to their
// initial and yielded ones; other shape ops end it.
struct SignedDivision {
  Operation *op = nullptr; // arith.remsi or arith.divsi
  Value scalar;            // may be null: none found
};

SignedDivision signedDivisionCutting(Value address, unsigned dim, int64_t want, const AxisInfoAnalysis &axis) {
  SmallVector<std::pair<Value, unsigned>> work{{address, dim}};
  llvm::DenseSet<std::pair<Value, unsigned>> seen;
  Operation *division = nullptr;
  while (!work.empty() && !division) {
    auto [v, d] = work.pop_back_val();
    if (!isa<RankedTensorType>(v.getType()) || !seen.insert({v, d}).second)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp()); loop && arg.getArgNumber() > 0) {
        unsigned i = arg.getArgNumber() - 1;
        work.push_back({loop.getInitArgs()[i], d});
        work.push_back({loop.getBody()->getTerminator()->getOperand(i), d});
      }
      continue;
    }
    Operation *def = v.getDefiningOp();
    if (isa<arith::RemSIOp, arith::DivSIOp>(def) && !axis.get(def->getOperand(0)).nonNegative) {
      const bool remainder = isa<arith::RemSIOp>(def);
      const AxisInfo now = axis.get(v), assumed = axis.withNonNegativeOperand(def, 0);
      if (d < now.rank() && d < assumed.rank() &&
          (remainder ? now.contiguity[d] < want && assumed.contiguity[d] >= want
                     : now.constancy[d] < want && assumed.constancy[d] >= want)) {
        division = def;
        break;
      }
    }
    if (auto loop = dyn_cast<scf::ForOp>(def)) { // a loop's result: what it yields
      work.push_back({loop.getBody()->getTerminator()->getOperand(cast<OpResult>(v).getResultNumber()), d});
      continue;
    }
    if (auto expand = dyn_cast<ExpandDimsOp>(def)) { // the new dim has no source
      const unsigned added = unsigned(expand.getAxis());
      if (d != added)
        work.push_back({expand.getSrc(), d < added ? d : d - 1});
      continue;
    }
    if (auto permute = dyn_cast<PermuteOp>(def)) { // result dim i is source dim order[i]
      work.push_back({permute.getSrc(), unsigned(permute.getOrder()[d])});
      continue;
    }
    // Element by element (arith, addptr, select, hints) or a broadcast: the
    // same dimension; reshapes, joins, gathers, dots end the walk, and so
    // do loads (an address loaded from memory: its index's runs are not
    // the access's).
    auto shape = cast<RankedTensorType>(v.getType()).getShape();
    const bool sameShapes = isMemoryEffectFree(def) && def->getNumRegions() == 0 &&
                            llvm::all_of(def->getOperands(), [&](Value operand) {
      auto t = dyn_cast<RankedTensorType>(operand.getType());
      return !t || t.getShape() == shape;
    });
    if (isa<BroadcastOp>(def) || sameShapes)
      for (Value operand : def->getOperands())
        if (isa<RankedTensorType>(operand.getType()))
          work.push_back({operand, d});
  }
  SignedDivision found{division, {}};
  if (!division)
    return found;
  FileLineColLoc at = fileLineOf(division->getLoc());
  auto sameLine = [&](Operation *op) {
    FileLineColLoc where = fileLineOf(op->getLoc());
    return at && where && where.getLine() == at.getLine() && where.getFilename() == at.getFilename();
  };
  SmallVector<Value> trail{division->getOperand(0)};
  llvm::SmallPtrSet<Value, 32> visited;
  while (!trail.empty()) {
    Value v = trail.pop_back_val();
    if (!visited.insert(v).second || axis.get(v).nonNegative)
      continue;
    Operation *def = v.getDefiningOp();
    if (!isa<RankedTensorType>(v.getType()) && (!def || !sameLine(def))) {
      found.scalar = v;
      break;
    }
    if (def)
      for (Value operand : def->getOperands())
        trail.push_back(operand);
  }
  return found;
}

// `access`: where the remark is, for the lines' file names.
std::string signedDivisionAdvice(const SignedDivision &d, Operation *access) {
  std::string text = std::string("a signed ") + (isa<arith::RemSIOp>(d.op) ? "%" : "/") + " at " +
                     lineText(d.op, access) +
                     " takes a value not known to be >= 0 (a negative value's remainder or quotient breaks runs); "
                     "if it never is, say so: assume(v >= 0)";
  if (!d.scalar)
    return text + " for the scalar it is made from";
  if (auto arg = dyn_cast<BlockArgument>(d.scalar)) {
    Operation *owner = arg.getOwner()->getParentOp();
    if (isa<func::FuncOp>(owner)) // the trace's arguments are the runtime ones only
      return text + " for the kernel's runtime argument " + std::to_string(arg.getArgNumber()) +
             " (from 0, not counting Const<> arguments)";
    if (auto loop = dyn_cast<scf::ForOp>(owner))
      return text + (arg.getArgNumber() == 0 ? " for the counter of the loop at " : " for a value the loop at ") +
             lineText(loop, access) + (arg.getArgNumber() == 0 ? "" : " carries");
    return text + " for the scalar it is made from";
  }
  return text + " for the scalar made at " + lineText(d.scalar.getDefiningOp(), access);
}

// `a` is couldBeWider.
void narrowAccessRemark(const Access &a, const AxisInfoAnalysis &axis, std::vector<Remark> &out) {
  const int64_t want = std::max<int64_t>(1, 16 / a.elementBytes);
  const unsigned dim = a.address.longestRunDim();
  std::string why;
  auto reason = [&](const std::string &text) { why += (why.empty() ? "" : "; ") + text; };
  // The first limit that applies: with runs too short, alignment and the
  // mask (made of the same strides) do not matter yet.
  const int64_t runs = a.address.contiguity[dim];
  int64_t alignBytes = a.baseBytes ? std::min(a.baseBytes, a.address.divisibility[dim] * a.elementBytes)
                                   : a.address.divisibility[dim];
  alignBytes = std::min<int64_t>(alignBytes, AxisInfo::kMaxDivisibility);
  const int64_t maskRuns = a.mask    ? axis.get(a.mask).constancy[dim]
                           : a.bound ? std::min(want, axis.get(a.bound).divisibility[0])
                                     : want;
  const int64_t extent = a.tile.getShape()[dim];
  if (extent < want)
    reason("the tile is " + std::to_string(extent) + " elements along its contiguous dimension " +
           std::to_string(dim) + ", less than a vector (a larger block along it)");
  else if (runs < want) {
    const SignedDivision division = signedDivisionCutting(a.addresses, dim, want, axis);
    reason("addresses are known contiguous only in runs of " + std::to_string(runs) +
           (runs == 1 ? " element" : " elements") +
           (division.op ? " (" + signedDivisionAdvice(division, a.op) + ")"
                        : std::string(" (index the fastest dimension with stride 1: a stride argument equal to 1, or "
                                      "assume(stride == 1); max_contiguous if runs are longer)")));
  }
  else if (alignBytes < want * a.elementBytes)
    reason("each run's start is known aligned to " + std::to_string(alignBytes) +
           " bytes only (multiple_of(offsets, " + std::to_string(want) + "), or assume(x % " +
           std::to_string(want) + " == 0) on the sizes and strides it comes from)");
  else if (maskRuns < want)
    reason("the mask is known constant over " + std::to_string(maskRuns) +
           " elements only (assume(n % " + std::to_string(want) + " == 0) on the bound it compares with)");
  if (why.empty()) {
    const int64_t perThread = contiguousPerThread(a.tile, dim);
    const std::string elements = std::to_string(perThread) + (perThread == 1 ? " contiguous element" : " contiguous elements");
    if (perThread < want && isa<BlockedLayoutAttr>(a.tile.getEncoding()))
      reason("the layout gives a thread " + elements + " along dimension " + std::to_string(dim) +
             " (a larger block along it, or fewer warps)");
    else if (perThread < want)
      reason("a dot's layout gives a thread " + elements + " along dimension " + std::to_string(dim) +
             " (the matrix instruction's; this access follows it)");
    else
      reason("the access is split by other accesses of the same tile");
  }
  out.push_back(remarkAt(a.op, RemarkKind::NarrowAccess,
                         std::string(a.load ? "load" : "store") + " of " + shapeText(a.tile) + " moves " +
                             std::to_string(a.vec * a.elementBytes * 8) +
                             " bits per thread at a time, not 128: " + why));
}

bool inLoop(Operation *op) { return op->getParentOfType<scf::ForOp>() || op->getParentOfType<scf::WhileOp>(); }

// Whether `load`'s result reaches a dot's A or B within its loop iteration
// (not through a carried value or an LDS slot: that is a pipelined load).
bool feedsDot(Operation *load) {
  SmallVector<Value> work(load->getResults());
  llvm::SmallPtrSet<Operation *, 16> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (auto dot = dyn_cast<DotOp>(user); dot && use.getOperandNumber() < 2)
        return true;
      if (isa<scf::YieldOp, LocalStoreOp, StoreOp, BufferStoreOp>(user) || !seen.insert(user).second)
        continue;
      if (user->getNumRegions()) // scf.if and friends: what they return may be the operand
        continue;
      work.append(user->getResults().begin(), user->getResults().end());
    }
  }
  return false;
}

// Whether `v` depends on a value the loop carries (an iter_arg of `loop`).
bool dependsOnCarried(Value v, scf::ForOp loop) {
  SmallVector<Value> work{v};
  llvm::SmallPtrSet<Value, 16> seen;
  while (!work.empty()) {
    Value x = work.pop_back_val();
    if (!x || !seen.insert(x).second)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(x)) {
      if (arg.getOwner() == loop.getBody() && arg != loop.getInductionVar())
        return true;
      continue;
    }
    Operation *def = x.getDefiningOp();
    if (!loop->isProperAncestor(def))
      continue;
    work.append(def->getOperands().begin(), def->getOperands().end());
  }
  return false;
}

void notPipelinedRemark(Operation *load, Value address, unsigned stages, std::vector<Remark> &out) {
  auto loop = load->getParentOfType<scf::ForOp>();
  if (!loop || !feedsDot(load))
    return;
  std::string why = dependsOnCarried(address, loop)
                        ? "its address is a pointer the loop carries (ptrs += step); compute it from the "
                          "loop index (base + k * stride) so the load can be fetched ahead"
                        : "the pipeliner does not take this loop's form (a load feeding a dot at the top "
                          "level of the loop body, its address from the loop index)";
  out.push_back(remarkAt(load, RemarkKind::NotPipelined,
                         "load feeding a dot is not fetched ahead although num_stages = " +
                             std::to_string(stages) + ": " + why));
}

void ldsInLoopRemark(Operation *op, unsigned stages, std::vector<Remark> &out) {
  if (!tesselDialect(op->getContext()).getLdsOffsetAttrHelper().getAttr(op) || !inLoop(op))
    return;
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!type)
    return;
  const std::string what = isa<ConvertLayoutOp>(op) ? "layout conversion" : op->getName().stripDialect().str();
  if (isa<DotOperandLayoutAttr>(type.getEncoding())) {
    if (stages >= 2) // the load that feeds it gets a not-pipelined remark
      return;
    out.push_back(remarkAt(op, RemarkKind::LdsInLoop,
                           "a dot operand (" + shapeText(type) +
                               ") moves through LDS every iteration, in step with the loop's math: "
                               "num_stages = 2 or more loads it ahead (an address made from the loop index)"));
    return;
  }
  out.push_back(remarkAt(op, RemarkKind::LdsInLoop,
                         what + " of " + shapeText(type) + " moves through LDS every iteration (" +
                             std::to_string(ldsScratchBytes(op)) +
                             " bytes, barriers): make the tile before the loop, or use it in the form it is "
                             "made in"));
}

} // namespace

std::vector<Remark> collectTileRemarks(ModuleOp module) {
  std::vector<Remark> out;
  unsigned stages = 1;
  if (IntegerAttr s = tesselDialect(module.getContext()).getNumStagesAttrHelper().getAttr(module))
    stages = unsigned(s.getInt());
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    // Made when the first narrow access needs it: a kernel whose accesses
    // all move 16 bytes a thread (most) runs no analysis here.
    std::optional<AxisInfoAnalysis> analysis;
    auto axis = [&]() -> const AxisInfoAnalysis & {
      if (!analysis)
        analysis.emplace(func);
      return *analysis;
    };
    func.walk([&](Operation *op) {
      if (auto load = dyn_cast<LoadOp>(op)) {
        auto tile = dyn_cast<RankedTensorType>(load.getPtr().getType());
        if (tile && couldBeWider(tile, ldsElementBytes(load.getType()), load.getVec()))
          narrowAccessRemark({op, load.getPtr(), tile, ldsElementBytes(load.getType()), load.getVec(),
                              axis().get(load.getPtr()), 0, load.getMask(), true},
                             axis(), out);
        if (stages >= 2)
          notPipelinedRemark(op, load.getPtr(), stages, out);
      } else if (auto store = dyn_cast<StoreOp>(op)) {
        auto tile = dyn_cast<RankedTensorType>(store.getPtr().getType());
        if (tile && couldBeWider(tile, ldsElementBytes(store.getValue().getType()), store.getVec()))
          narrowAccessRemark({op, store.getPtr(), tile, ldsElementBytes(store.getValue().getType()), store.getVec(),
                              axis().get(store.getPtr()), 0, store.getMask(), false},
                             axis(), out);
      } else if (auto load = dyn_cast<BufferLoadOp>(op)) {
        auto tile = cast<RankedTensorType>(load.getOffsets().getType());
        if (couldBeWider(tile, ldsElementBytes(load.getType()), load.getVec()))
          narrowAccessRemark({op, load.getOffsets(), tile, ldsElementBytes(load.getType()), load.getVec(),
                              axis().get(load.getOffsets()),
                              std::max<int64_t>(1, axis().get(load.getBase()).divisibility[0]), load.getMask(), true,
                              load.getBound()},
                             axis(), out);
        if (stages >= 2)
          notPipelinedRemark(op, load.getOffsets(), stages, out);
      } else if (auto store = dyn_cast<BufferStoreOp>(op)) {
        auto tile = cast<RankedTensorType>(store.getOffsets().getType());
        if (couldBeWider(tile, ldsElementBytes(store.getValue().getType()), store.getVec()))
          narrowAccessRemark({op, store.getOffsets(), tile, ldsElementBytes(store.getValue().getType()),
                              store.getVec(), axis().get(store.getOffsets()),
                              std::max<int64_t>(1, axis().get(store.getBase()).divisibility[0]), store.getMask(),
                              false, store.getBound()},
                             axis(), out);
      } else if (isa<ConvertLayoutOp, PermuteOp, ReshapeOp, JoinOp, SplitOp>(op)) {
        ldsInLoopRemark(op, stages, out);
      }
    });
  }
  return out;
}

void addCodeObjectRemarks(std::vector<Remark> &remarks, const TargetFacts &target,
                          const KernelResources &r, unsigned blockSize, unsigned ldsBytes,
                          const std::string &file, unsigned line) {
  if (r.privateSegmentBytes || r.vgprSpills || r.sgprSpills)
    remarks.push_back({RemarkKind::Spill, file, line,
                       std::to_string(r.vgprSpills) + " VGPRs and " + std::to_string(r.sgprSpills) +
                           " SGPRs spill (" + std::to_string(r.privateSegmentBytes) +
                           " bytes of scratch per thread): a smaller block or more warps (num_warps)"});
  const Occupancy o = occupancyOf(target, r, blockSize, ldsBytes);
  char waves[32];
  std::snprintf(waves, sizeof waves, "%g", o.wavesPerSimd);
  std::string message = std::string(waves) + (o.wavesPerSimd == 1 ? " wave" : " waves") + " per SIMD (of " + std::to_string(target.waveSlots) +
                        "), limited by " + o.limiter + ": " + std::to_string(r.vgprs) + " VGPRs";
  if (r.agprs)
    message += " (" + std::to_string(r.agprs) + " of them AGPRs)";
  message += " allow " + std::to_string(o.registerWaves) + " per SIMD";
  if (ldsBytes)
    message += ", " + std::to_string(ldsBytes) + " bytes of LDS allow " + std::to_string(o.ldsWorkgroups) +
               " workgroups per CU";
  const std::string limiter = o.limiter;
  const unsigned more = wavesForAnotherWorkgroup(target, o.registerWaves, blockSize);
  if (limiter == "VGPRs" && more <= target.waveSlots)
    message += "; " + std::to_string(more) + " waves need at most " + std::to_string(registersForWaves(target, more)) +
               " (a smaller block, fewer tiles live at once)";
  else if (limiter == "LDS")
    message += "; one more workgroup needs at most " + std::to_string(target.ldsPerCu / (o.ldsWorkgroups + 1)) +
               " bytes (a smaller block or fewer num_stages)";
  else if (limiter == "SGPRs")
    message += "; " + std::to_string(r.sgprs) + " SGPRs";
  remarks.push_back({RemarkKind::Occupancy, file, line, message});
}

void sortRemarks(std::vector<Remark> &remarks) {
  std::stable_sort(remarks.begin(), remarks.end(), [](const Remark &a, const Remark &b) {
    if (a.file != b.file)
      return a.file < b.file;
    if (a.line != b.line)
      return a.line < b.line;
    return a.kind < b.kind;
  });
}

} // namespace tessel
