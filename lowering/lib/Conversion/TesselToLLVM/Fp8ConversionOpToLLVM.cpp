// Conversions to and from the 8-bit floats (arith.extf / arith.truncf with
// an f8E4M3FN, f8E5M2, f8E4M3FNUZ or f8E5M2FNUZ side). LLVM has no 8-bit float
// type: a register holds the value's bits as an i8. Where the target's
// conversion instructions take the format (gfx942: FNUZ, gfx950: OCP), one
// v_cvt_pk_fp8_f32 / v_cvt_pk_bf8_f32 converts two registers and
// v_cvt_f32_fp8 / v_cvt_f32_bf8 one; elsewhere integer operations compute the
// same bits. Both round to nearest even and do not saturate: a value whose
// rounded magnitude exceeds the format's largest finite one becomes the
// format's overflow (E5M2: infinity; E4M3FN: NaN 0x7F with the sign; FNUZ:
// 0x80), as the instructions do without their clamp bit. cast's saturate
// option clamps in the trace, before the conversion. NaN becomes 0x7F with
// the sign (OCP) or 0x80 (FNUZ); the FNUZ formats have no -0 (it becomes 0).
// Every 8-bit float is exact in f32, f16 and bf16, so a conversion goes
// through f32 with one rounding.
#include "PatternTesselOpToLLVM.h"
#include "Utility.h"

#include "tessel/Dialect/Tessel/IR/Dialect.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tessel;

namespace {

// What the integer conversions need to know of a format.
struct Fp8Format {
  unsigned mantissaBits; // 3 (E4M3) or 2 (E5M2)
  int bias;              // 7, 15 (OCP); 8, 16 (FNUZ)
  bool fnuz;             // one NaN 0x80, no -0, no infinity
  bool hasInfinity;      // E5M2: 0x7C
  int64_t maxCode;       // the largest finite magnitude's bits
};

std::optional<Fp8Format> fp8FormatOf(Type t) {
  if (isa<Float8E4M3FNType>(t)) return Fp8Format{3, 7, false, false, 0x7E};
  if (isa<Float8E5M2Type>(t)) return Fp8Format{2, 15, false, true, 0x7B};
  if (isa<Float8E4M3FNUZType>(t)) return Fp8Format{3, 8, true, false, 0x7F};
  if (isa<Float8E5M2FNUZType>(t)) return Fp8Format{2, 16, true, false, 0x7F};
  return std::nullopt;
}

bool isE4M3(Type t) { return isa<Float8E4M3FNType, Float8E4M3FNUZType>(t); }

// Integer arithmetic on i32 values, spelled short.
struct I32Ops {
  OpBuilder &b;
  Location loc;
  Type i32 = b.getI32Type();
  Value c(int64_t v) { return b.create<LLVM::ConstantOp>(loc, i32, b.getI32IntegerAttr(int32_t(v))); }
  Value add(Value x, Value y) { return b.create<LLVM::AddOp>(loc, x, y); }
  Value sub(Value x, Value y) { return b.create<LLVM::SubOp>(loc, x, y); }
  Value band(Value x, Value y) { return b.create<LLVM::AndOp>(loc, x, y); }
  Value bor(Value x, Value y) { return b.create<LLVM::OrOp>(loc, x, y); }
  Value shl(Value x, Value y) { return b.create<LLVM::ShlOp>(loc, x, y); }
  Value lshr(Value x, Value y) { return b.create<LLVM::LShrOp>(loc, x, y); }
  Value cmp(LLVM::ICmpPredicate p, Value x, Value y) { return b.create<LLVM::ICmpOp>(loc, p, x, y); }
  Value select(Value cond, Value x, Value y) { return b.create<LLVM::SelectOp>(loc, cond, x, y); }
};

// f32 -> the format's bits (in an i32), with integer operations.
Value encodeWithIntegers(OpBuilder &b, Location loc, Value x, const Fp8Format &f) {
  using P = LLVM::ICmpPredicate;
  I32Ops o{b, loc};
  Value bits = b.create<LLVM::BitcastOp>(loc, o.i32, x);
  Value sign = o.band(o.lshr(bits, o.c(24)), o.c(0x80));
  Value abs = o.band(bits, o.c(0x7FFFFFFF));
  Value isNan = o.cmp(P::ugt, abs, o.c(0x7F800000));
  Value normal = o.cmp(P::uge, abs, o.c(0x800000));
  Value significand = o.bor(o.band(abs, o.c(0x7FFFFF)), o.select(normal, o.c(0x800000), o.c(0)));
  Value exponent = o.select(normal, o.sub(o.lshr(abs, o.c(23)), o.c(127)), o.c(-126));
  // Below the normal range every value has the smallest normal's scale.
  const int64_t minExponent = 1 - f.bias;
  Value deficit = o.sub(o.c(minExponent), exponent);
  deficit = o.select(o.cmp(P::sgt, deficit, o.c(0)), deficit, o.c(0));
  // Past 25 every significand (< 2^24) rounds to 0, as at 25.
  Value shift = o.add(o.c(23 - int64_t(f.mantissaBits)), deficit);
  shift = o.select(o.cmp(P::ult, shift, o.c(25)), shift, o.c(25));
  Value kept = o.lshr(significand, shift);
  Value rest = o.band(significand, o.sub(o.shl(o.c(1), shift), o.c(1)));
  Value half = o.shl(o.c(1), o.sub(shift, o.c(1)));
  Value odd = o.cmp(P::ne, o.band(kept, o.c(1)), o.c(0));
  Value roundUp = b.create<LLVM::OrOp>(
      loc, o.cmp(P::ugt, rest, half), b.create<LLVM::AndOp>(loc, o.cmp(P::eq, rest, half), odd));
  kept = o.add(kept, b.create<LLVM::ZExtOp>(loc, o.i32, roundUp));
  // A normal's implicit bit adds one to the exponent field; a carry out of
  // the mantissa is the next binade, as it should be.
  Value isNormal = o.cmp(P::sge, exponent, o.c(minExponent));
  Value code = o.select(isNormal, o.add(o.shl(o.sub(exponent, o.c(minExponent)), o.c(f.mantissaBits)), kept), kept);
  Value nanCode = f.fnuz ? o.c(0x80) : o.bor(sign, o.c(0x7F));
  Value overflowCode = f.hasInfinity ? o.bor(sign, o.c(0x7C)) : nanCode;
  Value finite = o.bor(sign, code);
  if (f.fnuz) // no negative zero
    finite = o.select(o.cmp(P::eq, code, o.c(0)), o.c(0), finite);
  Value overflow = o.cmp(P::sgt, code, o.c(f.maxCode));
  return o.select(isNan, nanCode, o.select(overflow, overflowCode, finite));
}

// The format's bits (an i32 holding one byte) -> f32, with integer operations
// and one product: the code's exponent and mantissa fields, shifted under
// f32's, are an f32 2^(127 - bias) times too small (a subnormal code an f32
// subnormal, which the kernel keeps: FP_DENORM), so the product by that power
// of two is the value, exactly. (Decoding normals and subnormals apart and
// selecting took twice the VALU: gfx942's dot_scaled decomposition of e4m3.)
Value decodeWithIntegers(OpBuilder &b, Location loc, Value byte, const Fp8Format &f) {
  using P = LLVM::ICmpPredicate;
  I32Ops o{b, loc};
  Type f32 = b.getF32Type();
  Value sign = o.shl(o.band(byte, o.c(0x80)), o.c(24));
  Value code = o.band(byte, o.c(0x7F));
  Value fields = o.bor(sign, o.shl(code, o.c(23 - f.mantissaBits)));
  Value factor = b.create<LLVM::ConstantOp>(loc, f32, b.getF32FloatAttr(std::ldexp(1.0f, 127 - f.bias)));
  Value value = b.create<LLVM::FMulOp>(loc, b.create<LLVM::BitcastOp>(loc, f32, fields), factor);
  // NaN and infinity with the byte's sign, as their bits.
  auto special = [&](int64_t magnitude) { return b.create<LLVM::BitcastOp>(loc, f32, o.bor(sign, o.c(magnitude))); };
  if (f.hasInfinity)
    value = o.select(o.cmp(P::eq, code, o.c(0x7C)), special(0x7F800000), value);
  Value isNan = f.fnuz ? o.cmp(P::eq, byte, o.c(0x80))
                : f.hasInfinity ? o.cmp(P::ugt, code, o.c(0x7C))
                                : o.cmp(P::eq, code, o.c(0x7F));
  return o.select(isNan, special(0x7FC00000), value);
}

// `v` (a float of another width) as f32, and back: exact for every 8-bit
// float's value; from f64 the one rounding is this one (the DSL casts f64
// through f32 itself).
Value toF32(OpBuilder &b, Location loc, Value v) {
  Type f32 = b.getF32Type();
  unsigned width = v.getType().getIntOrFloatBitWidth();
  if (width == 32) return v;
  if (width < 32) return b.create<LLVM::FPExtOp>(loc, f32, v);
  return b.create<LLVM::FPTruncOp>(loc, f32, v);
}
Value fromF32(OpBuilder &b, Location loc, Value v, Type to) {
  unsigned width = to.getIntOrFloatBitWidth();
  if (width == 32) return v;
  if (width < 32) return b.create<LLVM::FPTruncOp>(loc, to, v);
  return b.create<LLVM::FPExtOp>(loc, to, v);
}

template <class SourceOp> struct Fp8ConversionOpConversion : TesselOpToLLVMPattern<SourceOp> {
  Fp8ConversionOpConversion(const TesselToLLVMTypeConverter &converter, const TargetInfo &target)
      : TesselOpToLLVMPattern<SourceOp>(converter, target, /*benefit=*/3) {}

  using OneToNOpAdaptor = typename OpConversionPattern<SourceOp>::OneToNOpAdaptor;
  LogicalResult matchAndRewrite(SourceOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Type from = elementTypeOf(op.getIn().getType()), to = elementTypeOf(op.getType());
    std::optional<Fp8Format> fromFormat = fp8FormatOf(from), toFormat = fp8FormatOf(to);
    if (!fromFormat && !toFormat)
      return failure();
    Location loc = op.getLoc();
    Type i32 = rewriter.getI32Type(), i8 = rewriter.getI8Type();
    SmallVector<Value> in = registersOf(adaptor.getIn());
    // Through f32 (an 8-bit float's bits first, when both sides are 8-bit).
    SmallVector<Value> wide;
    for (Value v : in) {
      if (!fromFormat) {
        wide.push_back(toF32(rewriter, loc, v));
        continue;
      }
      Value byte = rewriter.create<LLVM::ZExtOp>(loc, i32, v);
      if (this->target.convertsFp8(from))
        wide.push_back(rewriter
                           .create<LLVM::CallIntrinsicOp>(
                               loc, rewriter.getF32Type(),
                               rewriter.getStringAttr(isE4M3(from) ? "llvm.amdgcn.cvt.f32.fp8"
                                                                   : "llvm.amdgcn.cvt.f32.bf8"),
                               ValueRange{byte, i32Value(rewriter, loc, 0)})
                           .getResult(0));
      else
        wide.push_back(decodeWithIntegers(rewriter, loc, byte, *fromFormat));
    }
    SmallVector<Value> out;
    if (!toFormat) {
      Type scalar = this->converter.scalarType(op.getType());
      for (Value v : wide)
        out.push_back(fromF32(rewriter, loc, v, scalar));
    } else if (this->target.convertsFp8(to)) {
      // Two registers to one instruction: bytes 0 and 1 of its result.
      StringAttr intrinsic =
          rewriter.getStringAttr(isE4M3(to) ? "llvm.amdgcn.cvt.pk.fp8.f32" : "llvm.amdgcn.cvt.pk.bf8.f32");
      Value old = rewriter.create<LLVM::ConstantOp>(loc, i32, rewriter.getI32IntegerAttr(0));
      Value low = rewriter.create<LLVM::ConstantOp>(loc, rewriter.getI1Type(), rewriter.getBoolAttr(false));
      for (size_t r = 0; r < wide.size(); r += 2) {
        Value second = r + 1 < wide.size() ? wide[r + 1] : wide[r];
        Value packed = rewriter
                           .create<LLVM::CallIntrinsicOp>(loc, i32, intrinsic,
                                                          ValueRange{wide[r], second, old, low})
                           .getResult(0);
        out.push_back(rewriter.create<LLVM::TruncOp>(loc, i8, packed));
        if (r + 1 < wide.size())
          out.push_back(rewriter.create<LLVM::TruncOp>(
              loc, i8, rewriter.create<LLVM::LShrOp>(loc, packed, i32Value(rewriter, loc, 8))));
      }
    } else {
      for (Value v : wide)
        out.push_back(rewriter.create<LLVM::TruncOp>(loc, i8, encodeWithIntegers(rewriter, loc, v, *toFormat)));
    }
    replaceWithRegisters(rewriter, op, {out});
    return success();
  }
};

} // namespace

void mlir::tessel::populateFp8ConversionOpToLLVMPatterns(const TesselToLLVMTypeConverter &converter,
                                                         const TargetInfo &target, RewritePatternSet &patterns) {
  patterns.add<Fp8ConversionOpConversion<arith::ExtFOp>, Fp8ConversionOpConversion<arith::TruncFOp>>(converter,
                                                                                                   target);
}
