//===- TesselDialect.td - the tessel tile dialect ----------*- tablegen -*-===//
//
// The tessel dialect holds a block program at tile level: what one program
// instance (one workgroup) computes over whole tiles. Tiles are ranked tensors
// whose elements are scalars or !tessel.ptr values; elementwise arithmetic uses
// the arith and math dialects on those tensors. Layout encodings on the tensor
// types say how a tile is spread over the threads of the workgroup once
// layouts are assigned.
//
// Belongs here: ops with no upstream equivalent at tile level (program ids,
// ranges, pointer arithmetic, masked memory access, shape changes of tiles,
// reductions and scans), the layouts, and the facts passes hand each other.
// Does not: per-thread code (that is LLVM/ROCDL), host-side concepts.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_DIALECT
#define TESSEL_DIALECT

include "mlir/IR/OpBase.td"

def Tessel_Dialect : Dialect {
  let name = "tessel";
  let cppNamespace = "::mlir::tessel";
  let summary = "Tile-level block programs for AMD GPUs";
  let description = [{
    One program instance of a tessel kernel operates on tiles: statically
    shaped tensors of scalars or pointers. The dialect provides program ids,
    integer ranges, pointer arithmetic and masked loads and stores; arith and
    math ops supply elementwise computation on the same tensors.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::math::MathDialect"];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  // Folded splats become arith.constant tiles.
  let hasConstantMaterializer = 1;
  // The facts one pass hands the next, as typed attributes (one definition,
  // read through TesselDialect::get...AttrHelper()). Their types are
  // verified (verifyOperationAttribute, verifyRegionArgAttribute): a value
  // of another type written by hand is a diagnostic.
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let discardableAttrs = (ins
    // On the module: how the kernel is launched and the target's limits.
    "::mlir::StringAttr":$target,        // "gfx942"
    "::mlir::IntegerAttr":$num_warps,    // waves per workgroup
    "::mlir::IntegerAttr":$wave_size,    // lanes per wave (64 on gfx9, 32 on gfx11)
    "::mlir::IntegerAttr":$lds_limit,    // bytes of LDS a workgroup may use
    "::mlir::IntegerAttr":$lds_bytes,    // bytes the LDS plan uses
    "::mlir::IntegerAttr":$num_stages,   // software pipelining depth (absent: 1)
    "::mlir::UnitAttr":$fast_math,       // LaunchOptions::fast_math (see tessel-fast-math)
    "::mlir::UnitAttr":$fp_fusion,       // LaunchOptions::fp_fusion (see tessel-fuse-fma)
    "::mlir::UnitAttr":$debug,           // LaunchOptions::debug: device_assert kept (tessel-specialize)
    "::mlir::UnitAttr":$direct_to_lds,   // TESSEL_DIRECT_TO_LDS=1 (tessel-pipeline-loops' direct-to-lds)
    "::mlir::UnitAttr":$no_direct_to_lds, // TESSEL_DIRECT_TO_LDS=0 (tessel-pipeline-loops' direct-to-lds=0)
    // The compile's second try when its first code spills (compileTrace)
    // asks for late staged loads; tessel-pipeline-loops says on the module
    // where they would move loads (else the second try is not made).
    "::mlir::UnitAttr":$late_staged_loads,
    "::mlir::UnitAttr":$late_staged_loads_apply,
    // On an arith.divf: correctly rounded whatever fast_math says (div_rn()).
    "::mlir::UnitAttr":$div_rn,
    // On an op that needs LDS scratch: where the LDS plan put it.
    "::mlir::IntegerAttr":$lds_offset,
    // ... and when no LDS user after it writes those bytes before another
    // barrier has run: the op needs no barrier after its last read.
    "::mlir::UnitAttr":$lds_no_reuse,
    // On a local_load or local_store in a loop with loads to LDS
    // (tessel-pipeline-loops): it touches no bytes those loads write while
    // it runs, so it need not wait for them (LocalMemoryOpToLLVM).
    "::mlir::UnitAttr":$async_copied,
    // On a stable tessel.sort, during tessel-convert-to-llvm only
    // (markSortPositions): the operand that holds each element's position
    // along the axis, which breaks ties in place of a hidden copy.
    "::mlir::IntegerAttr":$sort_positions,
    // On kernel arguments: what the call's values let the compiler assume.
    "::mlir::UnitAttr":$equal_to_one,
    "::mlir::IntegerAttr":$divisibility,
    // On a pointer argument: every valid access through it is within
    // [0, 2^31 - 2) bytes of it (a Buffer that small), so a byte offset from
    // it fits a buffer instruction's 32-bit offset. The value is 31.
    "::mlir::IntegerAttr":$pointer_range
  );
}

class Tessel_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tessel_Dialect, mnemonic, traits>;

#endif // TESSEL_DIALECT
