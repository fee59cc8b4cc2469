// 8-bit float dots the target's matrix cores do not take (see Passes.td).
#include "DotLayouts.h"

#include "tessel/Dialect/Tessel/Transforms/Passes.h"
#include "tessel/lowering/target.hpp"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELLEGALIZEDOTS
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;
using ::tessel::DType;
using ::tessel::Fp8Family;
using ::tessel::TargetFacts;

namespace {

Fp8Family familyOf(DType t) {
  return t == DType::F8E4M3FNUZ || t == DType::F8E5M2FNUZ ? Fp8Family::Fnuz : Fp8Family::Ocp;
}

// The C++ types of a family, as a user spells them.
const char *typesOf(Fp8Family family) {
  return family == Fp8Family::Fnuz ? "float8_e4m3fnuz, float8_e5m2fnuz" : "float8_e4m3fn, float8_e5m2";
}

// `t`'s counterpart in the other family (same exponent and mantissa widths).
DType counterpart(DType t) {
  switch (t) {
  case DType::F8E4M3FN: return DType::F8E4M3FNUZ;
  case DType::F8E5M2: return DType::F8E5M2FNUZ;
  case DType::F8E4M3FNUZ: return DType::F8E4M3FN;
  default: return DType::F8E5M2;
  }
}

// "gfx942 (float8_e4m3fnuz, float8_e5m2fnuz) or gfx950 (...)": the other
// targets whose matrix cores take 8-bit floats, from the target table.
std::string fp8Targets(const char *besides) {
  std::string out;
  for (const std::string &arch : ::tessel::supportedTargets()) {
    Fp8Family family = ::tessel::requireTarget(arch).fp8MatrixFamily();
    if (family == Fp8Family::None || arch == besides)
      continue;
    out += (out.empty() ? "" : " or ") + arch + " (" + typesOf(family) + ")";
  }
  return out;
}

struct LegalizeDotsPass : mlir::tessel::impl::TesselLegalizeDotsBase<LegalizeDotsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    StringAttr arch = tesselDialect(module.getContext()).getTargetAttrHelper().getAttr(module);
    const TargetFacts *target = arch ? ::tessel::lookupTarget(arch.getValue()) : nullptr;
    SmallVector<DotScaledOp> scaled;
    module.walk([&](DotScaledOp op) { scaled.push_back(op); });
    for (DotScaledOp op : scaled)
      legalizeScaled(op, target);
    if (!target)
      return;
    bool failedAny = false;
    module.walk([&](DotOp dot) {
      if (dot.getAE2m1() || dot.getBE2m1())
        return; // made for gfx950's f8f6f4 MFMAs above
      auto a = cast<RankedTensorType>(dot.getA().getType()), b = cast<RankedTensorType>(dot.getB().getType());
      std::optional<DType> ta = dtypeOf(a.getElementType()), tb = dtypeOf(b.getElementType());
      if (!ta || !tb || !::tessel::isFloat8(*ta))
        return;
      const Fp8Family mine = familyOf(*ta), takes = target->fp8MatrixFamily();
      const int64_t K = a.getShape().back();
      if (takes == mine) {
        for (const ::tessel::MatrixInstr &i : target->matrixInstrsFor(*ta, *tb, DType::F32))
          if (K % i.k == 0)
            return;
        widen(dot); // K below every instruction's depth
        return;
      }
      if (takes == Fp8Family::None && target->fp8DotThroughF16) {
        widen(dot);
        return;
      }
      failedAny = true;
      std::string types = ::tessel::dtypeCppName(*ta);
      if (*tb != *ta)
        types += std::string(" and ") + ::tessel::dtypeCppName(*tb);
      InFlightDiagnostic error = emitUserError(dot);
      if (takes == Fp8Family::None) {
        error << "dot on " << types << ": " << target->arch
              << "'s matrix cores take no 8-bit floats; cast<half>(...) the operands (exact) and dot those, "
                 "or compile for "
              << fp8Targets(target->arch);
        return;
      }
      std::string works = ::tessel::dtypeCppName(counterpart(*ta));
      if (*tb != *ta)
        works += std::string(" and ") + ::tessel::dtypeCppName(counterpart(*tb));
      error << "dot on " << types << ": " << target->arch << "'s matrix cores take the "
            << (takes == Fp8Family::Fnuz ? "FNUZ" : "OCP") << " 8-bit floats (" << typesOf(takes)
            << "), not the " << (mine == Fp8Family::Fnuz ? "FNUZ" : "OCP") << " ones; use " << works
            << " (cast<T>(...) the operands; a byte means another value in the other format), or compile for "
            << fp8Targets(target->arch);
    });
    if (failedAny)
      signalPassFailure();
  }

  // A tessel.dot_scaled: a tessel.dot with scales where the target's scaled
  // MFMAs take its formats and block, else its decomposition; what the
  // other form needed, unused now, is erased.
  static void legalizeScaled(DotScaledOp op, const TargetFacts *target) {
    auto a = cast<RankedTensorType>(op.getA().getType()), b = cast<RankedTensorType>(op.getB().getType());
    auto e2m1 = [](int32_t f) { return ::tessel::MxFormat(f) == ::tessel::MxFormat::e2m1; };
    const bool e2m1A = e2m1(op.getAFormat()), e2m1B = e2m1(op.getBFormat());
    // K counts elements: e2m1 packs two a byte along K.
    const int64_t M = a.getDimSize(0), K = a.getDimSize(1) * (e2m1A ? 2 : 1), N = b.getDimSize(1);
    std::optional<DType> ta = dtypeOf(a.getElementType()), tb = dtypeOf(b.getElementType());
    // The f8f6f4 MFMAs' formats: e4m3, e5m2 (their tiles' types) and e2m1
    // (bytes; any f8f6f4 row takes it).
    auto takes = [](int32_t f) {
      auto x = ::tessel::MxFormat(f);
      return x == ::tessel::MxFormat::e4m3 || x == ::tessel::MxFormat::e5m2 || x == ::tessel::MxFormat::e2m1;
    };
    const bool native = takes(op.getAFormat()) && takes(op.getBFormat()) && ta && tb && target &&
                        scaledMatrixInstr(*target, e2m1A ? std::nullopt : ta, e2m1B ? std::nullopt : tb, M, N, K);
    SmallVector<Operation *> maybeDead;
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp())
        maybeDead.push_back(def);
    Value result = op.getFallback();
    if (native) {
      OpBuilder builder(op);
      Value sa = op.getAScale(), sb = op.getBScale();
      // One scale alone: the other side's is 1.0 (127) everywhere.
      auto ones = [&](ArrayRef<int64_t> shape) {
        auto type = RankedTensorType::get(shape, builder.getI8Type());
        return builder.create<arith::ConstantOp>(op.getLoc(), DenseElementsAttr::get(type, builder.getI8IntegerAttr(127)))
            .getResult();
      };
      if (sa && !sb)
        sb = ones({N, K / 32});
      if (sb && !sa)
        sa = ones({M, K / 32});
      auto dot = builder.create<DotOp>(op.getLoc(), op.getType(), op.getA(), op.getB(), op.getC(), sa, sb);
      if (e2m1A)
        dot.setAE2m1(true);
      if (e2m1B)
        dot.setBE2m1(true);
      result = dot;
    } else if (auto dot = result.getDefiningOp<DotOp>()) {
      truncateScaledOperands(dot, maybeDead);
    }
    op.getResult().replaceAllUsesWith(result);
    op.erase();
    llvm::DenseSet<Operation *> erased;
    while (!maybeDead.empty()) {
      Operation *def = maybeDead.pop_back_val();
      if (erased.contains(def) || !isOpTriviallyDead(def))
        continue;
      erased.insert(def);
      for (Value v : def->getOperands())
        if (Operation *d = v.getDefiningOp())
          maybeDead.push_back(d);
      def->erase();
    }
  }

  // The decomposition's operands go to bf16 by truncation, as Triton's AMD
  // upcast (`v_perm` of the high halves): each is an element of at most 8
  // significant bits times a power of two, computed in f32, so its low 16
  // bits are 0 and truncation equals rounding, except for a product below
  // f32's normal range (2^-126), whose bits under bf16's subnormal step
  // (2^-133) truncation drops. NaNs made by arithmetic are quiet (bit 22)
  // and stay NaN. Rounding costs gfx942 4 instructions an element (no bf16
  // conversion instruction); truncation one `v_perm` for two.
  static void truncateScaledOperands(DotOp dot, SmallVectorImpl<Operation *> &maybeDead) {
    OpBuilder builder(dot);
    for (OpOperand *operand : {&dot.getAMutable(), &dot.getBMutable()}) {
      auto round = operand->get().getDefiningOp<arith::TruncFOp>();
      if (!round)
        continue;
      auto type = dyn_cast<RankedTensorType>(round.getIn().getType());
      if (!type || !type.getElementType().isF32() || !getElementTypeOrSelf(round.getType()).isBF16())
        continue;
      auto i32 = type.clone(builder.getI32Type()), i16 = type.clone(builder.getI16Type());
      Location loc = round.getLoc();
      Value bits = builder.create<arith::BitcastOp>(loc, i32, round.getIn());
      Value sixteen = builder.create<arith::ConstantOp>(loc, DenseElementsAttr::get(i32, builder.getI32IntegerAttr(16)));
      Value high = builder.create<arith::TruncIOp>(loc, i16, builder.create<arith::ShRUIOp>(loc, bits, sixteen));
      operand->set(builder.create<arith::BitcastOp>(loc, round.getType(), high));
      maybeDead.push_back(round);
    }
  }

  // The dot's 8-bit float operands as f16 (every 8-bit float is exact in it).
  static void widen(DotOp dot) {
    OpBuilder builder(dot);
    for (OpOperand *operand : {&dot.getAMutable(), &dot.getBMutable()}) {
      auto type = cast<RankedTensorType>(operand->get().getType());
      auto f16 = RankedTensorType::get(type.getShape(), builder.getF16Type(), type.getEncoding());
      operand->set(builder.create<arith::ExtFOp>(dot.getLoc(), f16, operand->get()));
    }
  }
};

} // namespace
