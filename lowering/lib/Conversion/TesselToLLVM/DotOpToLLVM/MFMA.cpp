// tessel.dot on the CDNA matrix cores: one MFMA instruction per (M, N)
// instruction tile of the wave and K step. The operand layouts put the
// kWidth elements an instruction takes from a lane in consecutive registers
// (Layouts.cpp), so each instruction's A and B are a vector of registers,
// bitcast to the intrinsic's operand type; the accumulator tile's registers
// go in and come out as one vector.
#include "../PatternTesselOpToLLVM.h"
#include "../Utility.h"
#include "MatrixTiles.h"

#include "tessel/Dialect/Tessel/IR/Layouts.h"
#include "tessel/lowering/target.hpp"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;
using namespace mlir::tessel;

namespace {

// Whether a scale byte is a load's (or an element of a loaded vector), which
// no optimization folds to a constant.
bool isLoadedByte(Value byte) {
  while (true) {
    if (auto extract = byte.getDefiningOp<LLVM::ExtractElementOp>())
      byte = extract.getVector();
    else if (auto cast = byte.getDefiningOp<LLVM::BitcastOp>())
      byte = cast.getArg();
    else if (auto trunc = byte.getDefiningOp<LLVM::TruncOp>())
      byte = trunc.getArg();
    else if (auto cast = byte.getDefiningOp<UnrealizedConversionCastOp>();
             cast && cast.getNumOperands() == cast.getNumResults())
      byte = cast.getOperand(cast_or_null<OpResult>(byte).getResultNumber());
    else
      return bool(byte.getDefiningOp<LLVM::LoadOp>());
  }
}

// The LLVM type an MFMA intrinsic takes a lane's kWidth `elem` operands as
// (IntrinsicsAMDGPU.td): f32 one float; f16 <kWidth x half>; bf16 <4 x i16>
// for the .1k forms, <8 x bfloat> for gfx950's; i8 and the 8-bit floats
// (whose registers are i8) packed into i32 or i64, or <kWidth / 4 x i32> for
// 16 or 32 of them (gfx950's i8 and f8f6f4 forms).
Type operandType(MLIRContext *ctx, Type elem, unsigned kWidth, StringRef intrinsic) {
  if (kWidth == 1)
    return elem;
  if (elem.isBF16() && intrinsic.ends_with(".1k"))
    return VectorType::get({kWidth}, IntegerType::get(ctx, 16));
  if (elem.isInteger(8) || elem.getIntOrFloatBitWidth() == 8) {
    unsigned bits = kWidth * 8;
    return bits <= 64 ? Type(IntegerType::get(ctx, bits)) : Type(VectorType::get({bits / 32}, IntegerType::get(ctx, 32)));
  }
  return VectorType::get({kWidth}, elem);
}

struct DotOpMfmaConversion : TesselOpToLLVMPattern<DotOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;

  LogicalResult matchAndRewrite(DotOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto cType = cast<RankedTensorType>(op.getC().getType());
    auto aType = cast<RankedTensorType>(op.getA().getType());
    auto mfma = dyn_cast_or_null<MfmaLayoutAttr>(cType.getEncoding());
    auto aLayout = dyn_cast_or_null<DotOperandLayoutAttr>(aType.getEncoding());
    auto bLayout = dyn_cast_or_null<DotOperandLayoutAttr>(cast<RankedTensorType>(op.getB().getType()).getEncoding());
    if (!mfma)
      return rewriter.notifyMatchFailure(op, "not an MFMA dot");
    // An e2m1 operand's registers are bytes of two K each: its kWidth is
    // half the other's (an 8-bit float's), its run one (kGroup 0).
    const bool e2m1A = op.getAE2m1(), e2m1B = op.getBE2m1();
    if (!aLayout || !bLayout || aLayout.getParent() != mfma || bLayout.getParent() != mfma ||
        aLayout.getKWidth() * (e2m1A ? 2 : 1) != bLayout.getKWidth() * (e2m1B ? 2 : 1) ||
        (e2m1A == e2m1B && aLayout.getKGroup() != bLayout.getKGroup()))
      return op.emitError("tessel.dot needs an MFMA accumulator and matching operand layouts "
                          "(run tessel-assign-layouts)");
    const int64_t rank = cType.getRank(); // a batch dim, if any, comes first
    const int64_t M = cType.getDimSize(rank - 2), N = cType.getDimSize(rank - 1),
                  K = aType.getDimSize(rank - 1) * (e2m1A ? 2 : 1);
    const int64_t batch = rank == 3 ? cType.getDimSize(0) : 1;
    const unsigned m = mfma.getInstrShape()[0], n = mfma.getInstrShape()[1];
    const unsigned wM = mfma.getWavesPerBlock()[0], wN = mfma.getWavesPerBlock()[1];
    const unsigned kWidth = aLayout.getKWidth(), kWidthB = bLayout.getKWidth();
    const unsigned kInstr = kWidth * (e2m1A ? 2 : 1) * (64 / m); // K elements an instruction
    Type inElem = aType.getElementType(), inElemB = cast<RankedTensorType>(op.getB().getType()).getElementType(),
         accElem = cType.getElementType();

    // The instruction: the target table's entry of this shape and types
    // (with an e2m1 operand, an f8f6f4 row of this shape: the formats are
    // its operands). Transposed, the instruction's A is the dot's B (an
    // 8-bit float mix swaps too: fp8 x bf8 runs as bf8_fp8).
    const ::tessel::TargetFacts *facts = ::tessel::lookupTarget(target.arch().str());
    std::optional<::tessel::DType> in = dtypeOf(inElem), inB = dtypeOf(inElemB), acc = dtypeOf(accElem);
    bool instrE2m1A = e2m1A, instrE2m1B = e2m1B;
    if (mfma.getTransposed()) {
      std::swap(in, inB);
      std::swap(instrE2m1A, instrE2m1B);
    }
    const char *intrinsic = nullptr;
    bool formatOperands = false;
    if (facts && in && inB && acc && (e2m1A || e2m1B)) {
      for (const ::tessel::MatrixInstr &i : facts->matrixInstrs)
        if (i.formatOperands && i.m == m && i.n == n && i.k == kInstr && i.accumulator == *acc) {
          intrinsic = i.intrinsic;
          formatOperands = true;
        }
    } else if (facts && in && inB && acc) {
      for (const ::tessel::MatrixInstr &i : facts->matrixInstrsFor(*in, *inB, *acc))
        if (i.kind == ::tessel::MatrixCore::Mfma && i.m == m && i.n == n && i.k == kInstr) {
          intrinsic = i.intrinsic;
          formatOperands = i.formatOperands;
        }
    }
    if (!intrinsic)
      return op.emitError() << "no MFMA instruction " << m << "x" << n << "x" << kInstr << " for " << inElem
                            << " on " << target.arch();

    const int64_t repsM = std::max<int64_t>(1, M / (int64_t(m) * wM));
    const int64_t repsN = std::max<int64_t>(1, N / (int64_t(n) * wN));
    const int64_t repsK = K / kInstr;
    const int64_t instrRegs = int64_t(m) * n / 64;
    SmallVector<Value> a = registersOf(adaptor.getA()), b = registersOf(adaptor.getB());
    SmallVector<Value> accRegs = registersOf(adaptor.getC());
    // Scales (f8f6f4 only): one byte a lane and instruction, as dot operands of kWidth 1.
    SmallVector<Value> aScale, bScale;
    const bool scaled = bool(op.getAScale());
    if (scaled) {
      aScale = registersOf(adaptor.getAScale());
      bScale = registersOf(adaptor.getBScale());
    }
    if (int64_t(a.size()) != batch * kWidth * repsK * repsM || int64_t(b.size()) != batch * kWidthB * repsK * repsN ||
        !fitsMatrixInstruction(int64_t(accRegs.size()), batch, repsM, repsN, instrRegs) ||
        (scaled && (!formatOperands || int64_t(aScale.size()) != repsK * repsM || int64_t(bScale.size()) != repsK * repsN)))
      return op.emitError("tessel.dot: operand registers do not match the layouts (compiler bug)");

    Location loc = op.getLoc();
    // An e2m1 operand's 16 bytes: <4 x i32> (4 VGPRs), an 8-bit float's 32 <8 x i32>.
    Type operand = operandType(rewriter.getContext(), inElem, kWidth, intrinsic),
         operandB = operandType(rewriter.getContext(), inElemB, kWidthB, intrinsic);
    auto accVecType = VectorType::get({instrRegs}, accElem);
    auto i32Const = [&](int32_t v) {
      return rewriter.create<LLVM::ConstantOp>(loc, rewriter.getI32Type(), rewriter.getI32IntegerAttr(v)).getResult();
    };
    Value zero = i32Const(0);
    // The f8f6f4 MFMAs' trailing operands: cbsz and blgp are the instruction's
    // A and B formats (0 E4M3, 1 E5M2, 4 E2M1: the dot's A and B, swapped
    // already when transposed), then A's and B's scale byte selects and
    // scales, 0: no scaling (LLVM selects v_mfma_f32_*_f8f6f4 for constant
    // zero scales).
    SmallVector<Value> trailing{zero, zero, zero};
    if (formatOperands) {
      auto format = [](std::optional<::tessel::DType> t, bool e2m1) {
        return e2m1 ? 4 : t == ::tessel::DType::F8E5M2 ? 1 : 0;
      };
      trailing = {i32Const(format(in, instrE2m1A)), i32Const(format(inB, instrE2m1B)), zero, zero, zero, zero};
    }
    // A side's scale bytes as the instruction's scale registers and byte
    // selects (opsel). Loaded bytes (from LDS or global memory) go four to a
    // register, byte j of word i / 4 for byte i, as Triton packs them (one
    // v_perm or shift-or per pair; gfx950 dot_scaled matmul, 4 waves: 4
    // VGPRs -> 2, one VALU a pair less). Others each take a register of their
    // own, the byte in bits 0-7 and 0x7f in bits 8-15, which no select
    // reads: a register that folds to zero on both sides (scales of 0,
    // 2^-127, given as constants) would make LLVM select the unscaled
    // instruction, which computes as if the scales were 1 (the emulator,
    // running the IR before O3 folds them, would scale). A loaded byte
    // folds to a constant only where LLVM forwards a constant stored to the
    // same address earlier in the kernel (zero scales written, then loaded):
    // not a pattern tessel's kernels make, and then the unscaled
    // instruction's result would differ.
    auto scaleRegisters = [&](ArrayRef<Value> bytes) {
      SmallVector<std::pair<Value, Value>> out; // (register, byte select) of each byte
      Type i32 = rewriter.getI32Type();
      if (!llvm::all_of(bytes, isLoadedByte)) {
        Value unread = i32Const(0x7f00);
        for (Value byte : bytes)
          out.push_back({rewriter.create<LLVM::OrOp>(loc, rewriter.create<LLVM::ZExtOp>(loc, i32, byte), unread), zero});
        return out;
      }
      constexpr size_t kBytesPerRegister = 4;
      for (size_t first = 0; first < bytes.size(); first += kBytesPerRegister) {
        Value word;
        const size_t count = std::min(kBytesPerRegister, bytes.size() - first);
        for (size_t j = 0; j < count; ++j) {
          Value part = rewriter.create<LLVM::ZExtOp>(loc, i32, bytes[first + j]);
          if (j > 0)
            part = rewriter.create<LLVM::ShlOp>(loc, part, i32Const(int32_t(8 * j)));
          word = word ? rewriter.create<LLVM::OrOp>(loc, word, part, /*isDisjoint=*/true).getResult() : part;
        }
        for (size_t j = 0; j < count; ++j)
          out.push_back({word, i32Const(int32_t(j))});
      }
      return out;
    };
    SmallVector<std::pair<Value, Value>> aScaleRegs, bScaleRegs;
    if (scaled) {
      aScaleRegs = scaleRegisters(aScale);
      bScaleRegs = scaleRegisters(bScale);
    }
    forEachMatrixInstruction(rewriter, loc, accRegs, a, b, batch, repsM, repsN, repsK, kWidth, instrRegs,
                             [&](Value d, ArrayRef<Value> av, ArrayRef<Value> bv, const MatrixStep &at) -> Value {
                               // Transposed: D^T = B^T A^T, B's registers as the instruction's A.
                               Value x = packRegisters(rewriter, loc, av, operand),
                                     y = packRegisters(rewriter, loc, bv, operandB);
                               if (mfma.getTransposed())
                                 std::swap(x, y);
                               // The trailing operands: cbsz, abid, blgp = 0 (no broadcast between
                               // blocks), or for the f8f6f4 rows A's and B's formats and zero scales,
                               // or a scaled dot's scales: register (rk, rm) of A's, (rk, rn) of B's
                               // (swapped with A and B when transposed).
                               SmallVector<Value> args{x, y, d};
                               args.append(trailing);
                               if (scaled) {
                                 auto sx = aScaleRegs[at.rk + repsK * at.rm],
                                      sy = bScaleRegs[at.rk + repsK * at.rn];
                                 if (mfma.getTransposed())
                                   std::swap(sx, sy);
                                 args[5] = sx.second; // the instruction's A: byte select, scale
                                 args[6] = sx.first;
                                 args[7] = sy.second;
                                 args[8] = sy.first;
                               }
                               return rewriter
                                   .create<LLVM::CallIntrinsicOp>(loc, accVecType, rewriter.getStringAttr(intrinsic),
                                                                  args)
                                   .getResult(0);
                             },
                             kWidthB);
    replaceWithRegisters(rewriter, op, {accRegs});
    return success();
  }
};

} // namespace

void mlir::tessel::populateMfmaDotOpToLLVMPatterns(const TesselToLLVMTypeConverter &converter,
                                                   const TargetInfo &target, RewritePatternSet &patterns) {
  patterns.add<DotOpMfmaConversion>(converter, target);
}
