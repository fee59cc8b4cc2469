// Per-thread code shared by the conversion patterns: constants, the
// coordinates a thread's registers hold, ownership of replicated elements,
// predication, and scalar versions of elementwise ops.
#pragma once

#include "TargetInfo.h"

#include "tessel/Dialect/Tessel/IR/Layouts.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::tessel {

Value i32Value(OpBuilder &b, Location loc, int64_t v);
Value constantValue(OpBuilder &b, Location loc, Type type, TypedAttr value);

// Coordinates (i32) along `dim` of every register of a tile of `type`.
SmallVector<Value> emitCoordinates(OpBuilder &b, Location loc, const TargetInfo &target,
                                   RankedTensorType type, unsigned dim);
SmallVector<Value> emitCoordinates(OpBuilder &b, Location loc, const TargetInfo &target,
                                   const LinearLayout &layout, unsigned dim);
// Per register, its coordinates in every dim; a scalar is one register
// with no coordinates.
SmallVector<SmallVector<Value>> emitRegisterCoords(OpBuilder &b, Location loc,
                                                   const TargetInfo &target, Type type);
SmallVector<SmallVector<Value>> emitRegisterCoords(OpBuilder &b, Location loc, const TargetInfo &target,
                                                   const LinearLayout &layout);
// The id bits `bits` of `id` (a lane or wave id), packed: this thread's
// coordinate among the lanes (waves) that hold distinct data along a dim.
// `idWidth`: the bits the id has (TargetInfo::laneIdBits, waveIdBits).
Value idBitsValue(OpBuilder &b, Location loc, Value id, ArrayRef<unsigned> bits,
                  unsigned idWidth);
// True when `bits` are consecutive (a scan needs its lanes in order).
bool areConsecutive(ArrayRef<unsigned> bits);

// Row-major linear index of coordinates (i32 values) in `shape`.
Value emitLinearIndex(OpBuilder &b, Location loc, ArrayRef<Value> coords, ArrayRef<int64_t> shape);

// True in the one thread that stores each element of a tile of type `t`
// (a scalar: thread 0). Other threads hold replicas and must not store: on a
// GPU their stores would race with the owner's. Null when every thread owns
// what it holds.
Value emitOwnerPredicate(OpBuilder &b, Location loc, const TargetInfo &target, Type t);
// Runs `body` (stores) only in the threads that own the elements of a tile of
// type `t`. Whatever `body` reads must be computed before.
void onlyOwners(OpBuilder &b, Location loc, const TargetInfo &target, Type t,
                function_ref<void()> body);
// Runs `body` only where `pred` holds (scf.if); returns body's value, or
// `otherwise` where pred is false, when `otherwise` is given.
Value predicated(OpBuilder &b, Location loc, Value pred, Value otherwise,
                 function_ref<Value()> body);

// A tile staged in LDS as `plan` says, from byte `base` (i32) of the
// module's LDS: the owners of its elements write the registers `regs` of a
// tile of type `type`, plan.writeVec per access; or every thread reads its
// registers of a tile of type `type`, plan.readVec per access. Offsets are
// linear in the coordinates, so LLVM folds each register's into the
// thread's base plus a constant. No barrier. The writes get `noAliasScopes`
// when given.
void emitLdsTileWrite(OpBuilder &b, Location loc, const TargetInfo &target, RankedTensorType type,
                      ValueRange regs, Value base, const LdsStaging &plan, ArrayAttr noAliasScopes = {});
SmallVector<Value> emitLdsTileRead(OpBuilder &b, Location loc, const TargetInfo &target,
                                   RankedTensorType type, Type elem, Value base, const LdsStaging &plan);

Value vectorOf(OpBuilder &b, Location loc, ArrayRef<Value> elems, Type elemType);
// The inverse for a loaded group: the `vec` elements of `value` (a scalar
// when vec == 1) as `elem` registers, appended to `out`.
void appendElements(OpBuilder &b, Location loc, Value value, int64_t vec, Type elem, SmallVectorImpl<Value> &out);
// Bools are bytes in memory (as in C++), i1 in registers.
Type memoryType(OpBuilder &b, Type elem);
Value toMemory(OpBuilder &b, Location loc, Value v);
Value fromMemory(OpBuilder &b, Location loc, Value v, Type elem);
// One `vec`-wide global load of `mem` elements at `ptr`, appended to `out`
// as `elem` registers. With `mask` it runs under one branch and yields
// `others` (the group's vec registers; zeros when empty) where the mask is
// false.
void emitGlobalLoad(OpBuilder &b, Location loc, Value ptr, Type mem, Type elem, int64_t vec, Value mask,
                    ArrayRef<Value> others, SmallVectorImpl<Value> &out);
// A group of registers as what one access moves: `mem` elements (bools as
// bytes), a vector of them when there are several.
Value memoryVector(OpBuilder &b, Location loc, ArrayRef<Value> regs, Type mem);
// One global store of `value` (a memoryVector) at `ptr`, under one branch
// on `pred` when it is given.
void emitGlobalStore(OpBuilder &b, Location loc, Value ptr, Value value, Value pred);
// a && c, either null meaning true (so the result may be null).
Value bothOf(OpBuilder &b, Location loc, Value a, Value c);

// The scalar version of the arith/math op `op` on `operands`: integer
// division defined for every input, ocml calls for math without an AMDGPU
// instruction, else the same op on scalars.
Value emitScalarOp(OpBuilder &b, Operation *op, ValueRange operands, Type resultType);
// emitScalarOp for an op of one or more results of one type (several:
// arith.mului_extended, which is the op itself on scalars).
SmallVector<Value> emitScalarResults(OpBuilder &b, Operation *op, ValueRange operands, Type resultType);
// Packed f32 (TargetInfo::hasPackedF32: v_pk_add_f32, v_pk_mul_f32,
// v_pk_fma_f32): whether `op` is an f32 add, subtract, multiply or fma, which
// the lowering emits on <2 x float>, two registers per op, rather than
// leaving the pairing to LLVM's SLP vectorizer (a third of the optimizer's
// time on a kernel like layer norm, and not always found).
bool isPackableF32(Operation *op);
// The packed pairs one conversion has made, so that each is made once: a
// value with itself (a scalar operand's splat) and two neighbouring
// elements of one vector (a loaded vector's registers). Each is built right
// after what it is made of, where it serves every later use.
struct PackedPairs {
  llvm::DenseMap<std::pair<Value, Value>, Value> made;
};
// (lo, hi) as a pair (<2 x float>, or <2 x i1> for a select's conditions): the packed value two extracts came from when
// they are its elements 0 and 1 in that order; else one `pairs` made
// before (when given); else built (a shufflevector for elements i and i + 1
// of one vector).
Value packPair(OpBuilder &b, Location loc, Value lo, Value hi, PackedPairs *pairs = nullptr);
// `op` (isPackableF32) on <2 x float> `operands`: its results for element 0
// and element 1.
std::pair<Value, Value> emitPackedOp(OpBuilder &b, Operation *op, ValueRange operands);
// Whether `op` is an f32 compare or a select of f32, which no instruction
// packs but which the lowering emits on the pairs packed ops made when its
// operands are such pairs: the backend splits them into the same scalar
// instructions, and the pairs need no element extracted and inserted again
// between packed ops (a where between two packed ops cost four of each).
bool carriesPairs(Operation *op);
// (lo, hi) as a pair made already: the vector of a packed op's two results,
// or a constant with itself (built once, as packPair with `pairs`); else null.
// Not any value with itself: a splat of a loop's broadcast scalar changed
// gfx942's mxfp8 matmul schedule (llvm-mca 1618 -> 1620 cycles).
Value existingPair(OpBuilder &b, Location loc, Value lo, Value hi, PackedPairs &pairs);
// An f32 math.exp / math.exp2 marked afn (fast_exp, fast_exp2), which
// emitScalarOp lowers to the hardware exponential.
bool isHardwareExp(Operation *op);
// An f32 math.rsqrt, which emitScalarOp lowers to v_rsq_f32.
bool isHardwareRsqrt(Operation *op);
// The ocml function (`__ocml_erf_f32`) that emitScalarOp calls for `op`, a
// float math op AMDGPU has no accurate instruction for; empty otherwise.
std::string deviceLibraryFunction(Operation *op);

// Every pattern replaces a tile op through this: each result by its
// registers (rewriter.replaceOpWithMultiple's contract). The conversion driver
// puts a cast of a used result's registers back to its tile after the last
// register, found by comparing the registers' positions; a block that gained
// ops since its last comparison numbers all its ops again first, so replacing
// op after op was quadratic in the kernel's length (issue 34). Each result's
// registers go to the driver as the results of one identity
// unrealized_conversion_cast just before `op`: one position, nothing to
// compare. foldIdentityCasts removes them after the conversion.
void replaceWithRegisters(ConversionPatternRewriter &rewriter, Operation *op,
                          SmallVector<SmallVector<Value>> registers);
// A register as its pattern made it: `v` itself, or the input an identity
// cast of replaceWithRegisters hands on as `v`. What looks at a register's
// defining op (or orders registers) looks through those casts with this.
Value registerSource(Value v);
// Replaces every unrealized_conversion_cast under `root` whose results have
// its inputs' types by its inputs (one walk).
void foldIdentityCasts(Operation *root);

} // namespace mlir::tessel
