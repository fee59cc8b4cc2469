// The conversion of tile-level tessel IR to per-thread LLVM dialect, as one
// populate function per op family, each in its own file. A tile becomes the
// registers one thread holds (TesselToLLVMTypeConverter, 1:N); hardware
// primitives come from TargetInfo.
#pragma once

#include "TargetInfo.h"
#include "TypeConverter.h"

#include "mlir/Transforms/DialectConversion.h"

namespace mlir::tessel {

class AxisInfoAnalysis;
struct PackedPairs;

// Base of tessel's conversion patterns: the type converter and the target.
template <class SourceOp> class TesselOpToLLVMPattern : public OpConversionPattern<SourceOp> {
public:
  TesselOpToLLVMPattern(const TesselToLLVMTypeConverter &converter, const TargetInfo &target,
                        PatternBenefit benefit = 1)
      : OpConversionPattern<SourceOp>(converter, &converter.getContext(), benefit),
        converter(converter), target(target) {}

protected:
  const TesselToLLVMTypeConverter &converter;
  const TargetInfo &target;
};

// Every flattened register of each of `operands` (the adaptor's view of them).
inline SmallVector<Value> registersOf(ValueRange converted) {
  return SmallVector<Value>(converted.begin(), converted.end());
}

// program_id, num_programs, make_range.
void populateSPMDOpToLLVMPatterns(const TesselToLLVMTypeConverter &converter,
                                  const TargetInfo &target, RewritePatternSet &patterns);
// splat, broadcast, expand_dims and the analysis hints: register renaming.
void populateViewOpToLLVMPatterns(const TesselToLLVMTypeConverter &converter,
                                  const TargetInfo &target, RewritePatternSet &patterns);
// arith and math on tiles (one scalar op per register), constants, addptr,
// assume. `axis` (the module's axis analysis, run before the conversion; may
// be null) lets an integer op compute registers it proves equal once;
// `pairs` (the conversion's) keeps the packed f32 operand pairs made.
void populateElementwiseOpToLLVMPatterns(const TesselToLLVMTypeConverter &converter,
                                         const TargetInfo &target, RewritePatternSet &patterns,
                                         const AxisInfoAnalysis *axis, PackedPairs &pairs);
// arith.extf / arith.truncf to and from the 8-bit floats: the target's
// conversion instructions where it has them for the format, integer
// operations elsewhere (before the elementwise patterns, which would hand
// them to the upstream patterns: LLVM has no 8-bit float type).
void populateFp8ConversionOpToLLVMPatterns(const TesselToLLVMTypeConverter &converter,
                                           const TargetInfo &target, RewritePatternSet &patterns);
// load and store: vector accesses, predication on masks, ownership of replicas.
void populateLoadStoreOpToLLVMPatterns(const TesselToLLVMTypeConverter &converter,
                                       const TargetInfo &target, RewritePatternSet &patterns);
// buffer_load and buffer_store: AMDGPU buffer instructions, masks by range check.
void populateBufferOpToLLVMPatterns(const TesselToLLVMTypeConverter &converter,
                                    const TargetInfo &target, RewritePatternSet &patterns);
// reduce: within a thread, across lanes (butterfly), across waves (LDS).
void populateAtomicOpToLLVMPatterns(const TesselToLLVMTypeConverter &converter, const TargetInfo &target,
                                    RewritePatternSet &patterns);
// Marks each stable sort one of whose operands is every element's starting
// position along the sort axis (argsort's and topk's payload: make_range
// from 0 through expand_dims, broadcast along the other dimensions and
// convert_layout; positionsAlong in SortOpToLLVM.cpp): its ties break by
// that operand, with no hidden copy of the positions. Before the
// conversion, while the operands' defining ops are still there.
void markSortPositions(ModuleOp module);
void populateSortOpToLLVMPatterns(const TesselToLLVMTypeConverter &converter, const TargetInfo &target,
                                  RewritePatternSet &patterns);
void populateReduceOpToLLVMPatterns(const TesselToLLVMTypeConverter &converter,
                                    const TargetInfo &target, RewritePatternSet &patterns);
// scan: within a thread, across lanes (Hillis-Steele), across waves (LDS).
void populateScanOpToLLVMPatterns(const TesselToLLVMTypeConverter &converter,
                                  const TargetInfo &target, RewritePatternSet &patterns);
// convert_layout, reshape, permute, join, split: through LDS.
void populateConvertLayoutOpToLLVMPatterns(const TesselToLLVMTypeConverter &converter,
                                           const TargetInfo &target, RewritePatternSet &patterns);
// local_alloc, local_store, local_load, barrier: tiles kept in LDS across ops.
void populateLocalMemoryOpToLLVMPatterns(const TesselToLLVMTypeConverter &converter,
                                         const TargetInfo &target, RewritePatternSet &patterns);
// dot on the matrix cores: MFMA (DotOpToLLVM/MFMA.cpp), WMMA (DotOpToLLVM/WMMA.cpp).
void populateMfmaDotOpToLLVMPatterns(const TesselToLLVMTypeConverter &converter, const TargetInfo &target,
                                     RewritePatternSet &patterns);
void populateWmmaDotOpToLLVMPatterns(const TesselToLLVMTypeConverter &converter, const TargetInfo &target,
                                     RewritePatternSet &patterns);
// dot as multiply-adds, for what the matrix cores do not take (DotOpToLLVM/FMA.cpp).
void populateFmaDotOpToLLVMPatterns(const TesselToLLVMTypeConverter &converter, const TargetInfo &target,
                                    RewritePatternSet &patterns);
// print and device_assert: printf through the ROCm device library, llvm.trap.
void populateDebugOpToLLVMPatterns(const TesselToLLVMTypeConverter &converter, const TargetInfo &target,
                                   RewritePatternSet &patterns);
// The kernel function and its return; scf ops carrying tiles (structural).
void populateControlFlowOpToLLVMPatterns(const TesselToLLVMTypeConverter &converter,
                                         const TargetInfo &target, RewritePatternSet &patterns,
                                         ConversionTarget &legality);
// After scf became branches: every run of 8-bit block arguments (a tile of
// 8-bit elements carried through an scf.if, for or while, as its registers)
// becomes 32-bit words, four consecutive registers a word, packed at each
// branch that passes them and unpacked at the block's top, so LLVM carries
// words, not one `phi i8` (one VGPR) per element.
void packByteBlockArguments(Operation *root);

} // namespace mlir::tessel
