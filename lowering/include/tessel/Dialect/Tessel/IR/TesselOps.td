//===- TesselOps.td - tessel ops ----------------------------*- tablegen -*-===//
#ifndef TESSEL_OPS
#define TESSEL_OPS

include "tessel/Dialect/Tessel/IR/TesselDialect.td"
include "tessel/Dialect/Tessel/IR/TesselTypes.td"
include "tessel/Dialect/Tessel/IR/TesselAttrs.td"
include "tessel/Dialect/Tessel/IR/TesselInterfaces.td"
include "tessel/Dialect/Tessel/IR/TesselEnums.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/InferIntRangeInterface.td"

// Ops the integer range analysis looks through (IntRanges.cpp).
def Tessel_InferRanges : DeclareOpInterfaceMethods<InferIntRangeInterface, ["inferResultRanges"]>;

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

def Tessel_ProgramIdOp : Tessel_Op<"program_id", [Tessel_InferRanges, Pure]> {
  let summary = "index of this program instance along a grid axis";
  let arguments = (ins ConfinedAttr<I32Attr, [IntMinValue<0>, IntMaxValue<2>]>:$axis);
  let results = (outs I32:$result);
  let assemblyFormat = "$axis attr-dict `:` type($result)";
}

def Tessel_NumProgramsOp : Tessel_Op<"num_programs", [Tessel_InferRanges, Pure]> {
  let summary = "number of program instances along a grid axis";
  let arguments = (ins ConfinedAttr<I32Attr, [IntMinValue<0>, IntMaxValue<2>]>:$axis);
  let results = (outs I32:$result);
  let assemblyFormat = "$axis attr-dict `:` type($result)";
}

def Tessel_MakeRangeOp : Tessel_Op<"make_range", [Tessel_InferRanges, Pure]> {
  let summary = "the 1-D tile start, start+1, ..., end-1";
  let arguments = (ins I32Attr:$start, I32Attr:$end);
  let results = (outs RankedTensorOf<[I32]>:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tessel_SplatOp : Tessel_Op<"splat", [Tessel_InferRanges, Pure,
    TypesMatchWith<"result element type matches the scalar",
                   "result", "src", "::llvm::cast<::mlir::RankedTensorType>($_self).getElementType()">]> {
  let summary = "a tile filled with one scalar";
  let arguments = (ins AnyType:$src);
  let results = (outs Tessel_Tile:$result);
  let assemblyFormat = "$src attr-dict `:` type($result)";
  // A constant scalar's splat is a constant tile, so arith's folds see it
  // (x * splat(1) -> x, also where the 1 is a specialized argument).
  let hasFolder = 1;
}

def Tessel_BroadcastOp : Tessel_Op<"broadcast", [Tessel_InferRanges, Pure, SameOperandsAndResultElementType]> {
  let summary = "grow size-1 dimensions of a tile";
  let arguments = (ins Tessel_Tile:$src);
  let results = (outs Tessel_Tile:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1; // of a constant splat: a constant splat
}

def Tessel_ExpandDimsOp : Tessel_Op<"expand_dims", [Tessel_InferRanges, Pure, SameOperandsAndResultElementType]> {
  let summary = "insert a size-1 dimension";
  let arguments = (ins Tessel_Tile:$src, I32Attr:$axis);
  let results = (outs Tessel_Tile:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1; // of a constant splat: a constant splat
}

def Tessel_AddPtrOp : Tessel_Op<"addptr", [Pure, AllTypesMatch<["ptr", "result"]>]> {
  let summary = "advance pointers by element offsets";
  let arguments = (ins Tessel_PtrLike:$ptr, Tessel_IntLike:$offset);
  let results = (outs Tessel_PtrLike:$result);
  let assemblyFormat = "$ptr `,` $offset attr-dict `:` type($result) `,` type($offset)";
  let hasVerifier = 1;
}

def Tessel_LoadOp : Tessel_Op<"load", [AttrSizedOperandSegments, MemoryEffects<[MemRead]>]> {
  let summary = "masked gather from global memory";
  let description = [{
    Loads the element each pointer points to. Where `mask` is false nothing
    is read and the result holds `other` (zero when absent). `vec` is how
    many contiguous elements one thread moves with one instruction; layout
    assignment sets it from the axis analysis.
  }];
  let arguments = (ins Tessel_PtrLike:$ptr, Optional<Tessel_BoolLike>:$mask,
                       Optional<AnyType>:$other,
                       DefaultValuedAttr<ConfinedAttr<I32Attr, [IntPositive]>, "1">:$vec);
  let results = (outs AnyType:$result);
  let assemblyFormat = [{
    $ptr (`,` $mask^)? (`,` `other` $other^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Tessel_StoreOp : Tessel_Op<"store", [MemoryEffects<[MemWrite]>]> {
  let summary = "masked scatter to global memory";
  let arguments = (ins Tessel_PtrLike:$ptr, AnyType:$value,
                       Optional<Tessel_BoolLike>:$mask,
                       DefaultValuedAttr<ConfinedAttr<I32Attr, [IntPositive]>, "1">:$vec);
  let assemblyFormat = [{
    $ptr `,` $value (`,` $mask^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Tessel_BufferLoadOp : Tessel_Op<"buffer_load", [AttrSizedOperandSegments, MemoryEffects<[MemRead]>]> {
  let summary = "load of base[offsets]: a scalar base plus 32-bit offsets";
  let description = [{
    `tessel.load` of `addptr(splat(base), offsets)` where every accessed
    offset is known to lie in [0, 2^31 / element bytes): a uniform 64-bit
    base (scalar registers) and 32-bit byte offsets per lane, the form both
    AMDGPU buffer instructions and the scalar-base (saddr) form of global
    instructions take. Where `mask` is false the result is `other` (zero
    when absent). With `bound` (a non-negative element count), an element
    whose offset is not below it is masked off too; then every offset,
    accessed or not, must lie in [0, 2^31 / element bytes), as the
    hardware's range check is the only mask (an offset wrapping 32 bits
    would land back in range).
    The lowering picks the instruction: a buffer resource over the base
    when the op has `bound` or several predicated groups per thread (a
    masked-off lane gets an offset past the resource's range, so the
    hardware reads 0 without a branch; `bound` is the resource's range),
    otherwise a global instruction at base + zext(byte offset), one
    exec-mask branch around it when predicated.
    Formed by tessel-use-buffer-ops; `vec` as for tessel.load.
  }];
  let arguments = (ins Tessel_Ptr:$base, RankedTensorOf<[I32]>:$offsets,
                       Optional<Tessel_BoolLike>:$mask, Optional<AnyType>:$other, Optional<I32>:$bound,
                       DefaultValuedAttr<ConfinedAttr<I32Attr, [IntPositive]>, "1">:$vec);
  let results = (outs Tessel_Tile:$result);
  let assemblyFormat = [{
    $base `[` $offsets `]` (`,` $mask^)? (`,` `other` $other^)? (`bound` $bound^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Tessel_BufferStoreOp : Tessel_Op<"buffer_store", [AttrSizedOperandSegments, MemoryEffects<[MemWrite]>]> {
  let summary = "store to base[offsets]: a scalar base plus 32-bit offsets";
  let description = [{
    `tessel.store` to `addptr(splat(base), offsets)` with the accessed
    offsets known to lie in [0, 2^31 / element bytes) (see
    tessel.buffer_load, also for the instruction the lowering picks):
    nothing is written where `mask` is false, nor, with `bound`, at an
    offset not below it (with `bound` every offset must be in that range).
    Formed by tessel-use-buffer-ops.
  }];
  let arguments = (ins Tessel_Ptr:$base, RankedTensorOf<[I32]>:$offsets, Tessel_Tile:$value,
                       Optional<Tessel_BoolLike>:$mask, Optional<I32>:$bound,
                       DefaultValuedAttr<ConfinedAttr<I32Attr, [IntPositive]>, "1">:$vec);
  let assemblyFormat = [{
    $base `[` $offsets `]` `,` $value (`,` $mask^)? (`bound` $bound^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Atomics
//===----------------------------------------------------------------------===//

def Tessel_AtomicRMWOp : Tessel_Op<"atomic_rmw", [DeclareOpInterfaceMethods<Tessel_LdsScratchOpInterface>,
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "atomic read-modify-write through a tile of pointers";
  let description = [{
    For each element whose mask is set: atomically m = kind(m, val) at its
    pointer, with the ordering `sem` at scope `scope`; the result is the
    value m held before (unspecified where masked off). Elements a layout
    replicates over several threads are updated once; their old values
    reach every copy through LDS. `vec` = 2 on an f16/bf16 add: pairs of
    contiguous, 4-byte aligned elements go as one packed atomic (layout
    assignment proves it; a masked-off half adds -0.0).
  }];
  let arguments = (ins Tessel_AtomicKind:$kind, Tessel_PtrLike:$ptr, AnyType:$val,
                       Optional<Tessel_BoolLike>:$mask, Tessel_MemSem:$sem, Tessel_MemScope:$scope,
                       DefaultValuedAttr<ConfinedAttr<I32Attr, [IntPositive]>, "1">:$vec);
  let results = (outs AnyType:$result);
  let assemblyFormat = [{
    $kind $sem $scope $ptr `,` $val (`,` $mask^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Tessel_AtomicCASOp : Tessel_Op<"atomic_cas", [DeclareOpInterfaceMethods<Tessel_LdsScratchOpInterface>,
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "atomic compare-and-swap through a tile of pointers";
  let description = [{
    For each element whose mask is set: atomically, if m == cmp (bitwise)
    then m = val; the result is the value m held before (unspecified where
    masked off). Ordering, scope and replicas as `atomic_rmw`.
  }];
  let arguments = (ins Tessel_PtrLike:$ptr, AnyType:$cmp, AnyType:$val, Optional<Tessel_BoolLike>:$mask,
                       Tessel_MemSem:$sem, Tessel_MemScope:$scope);
  let results = (outs AnyType:$result);
  let assemblyFormat = [{
    $sem $scope $ptr `,` $cmp `,` $val (`,` $mask^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Sorting
//===----------------------------------------------------------------------===//

def Tessel_SortOp : Tessel_Op<"sort", [DeclareOpInterfaceMethods<Tessel_LdsScratchOpInterface>, Pure]> {
  let summary = "sort tiles along one axis by the first (keys); the rest move with them";
  let description = [{
    Sorts each line along `axis` of the first operand (the keys), ascending
    or `descending`; the other operands (payloads) move with their keys.
    Floats order NaN above every number (last ascending, first descending,
    as torch.sort). `stable`: equal keys keep their order along the axis.
    `masked`: the last operand is an i1 tile; elements where it is false
    sort after every element where it is true (whatever their keys: the
    padding of a line shorter than the tile), in key order among
    themselves. A bitonic network over the axis: compare-exchanges within a
    thread's registers, across lanes, and across waves through LDS.
  }];
  let arguments = (ins Variadic<Tessel_Tile>:$srcs, I32Attr:$axis, BoolAttr:$descending, BoolAttr:$stable,
                       DefaultValuedAttr<BoolAttr, "false">:$masked);
  let results = (outs Variadic<Tessel_Tile>:$results);
  let assemblyFormat = "$srcs attr-dict `:` functional-type($srcs, results)";
  let hasVerifier = 1;
  // A payload nobody reads is dropped (before layouts and the LDS plan).
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Reductions and scans
//===----------------------------------------------------------------------===//

def Tessel_ReduceOp : Tessel_Op<"reduce", [DeclareOpInterfaceMethods<Tessel_LdsScratchOpInterface>, Pure, RecursiveMemoryEffects, IsolatedFromAbove,
    SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "combine tiles along one axis";
  let description = [{
    Reduces N tiles of one shape along `axis` with the combine region, which
    takes the N accumulated scalars then the N next scalars and yields N
    scalars. The combine must be associative and commutative (elements are
    combined within a thread, across the lanes of a wave and across waves).
    Results have the operands' shape without `axis`; 1-D operands reduce to
    scalars.
  }];
  let arguments = (ins Variadic<Tessel_Tile>:$srcs, I32Attr:$axis);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$combine);
  let assemblyFormat = "$srcs attr-dict `:` functional-type($srcs, results) $combine";
  let hasVerifier = 1;
}

def Tessel_ScanOp : Tessel_Op<"scan", [DeclareOpInterfaceMethods<Tessel_LdsScratchOpInterface>, Pure, RecursiveMemoryEffects, IsolatedFromAbove,
    SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "inclusive prefix combination along one axis";
  let description = [{
    Result element i along `axis` combines operand elements 0..i in order
    (i..n-1 when `reverse`). The combine must be associative; its order is
    kept.
  }];
  let arguments = (ins Variadic<Tessel_Tile>:$srcs, I32Attr:$axis,
                       DefaultValuedAttr<BoolAttr, "false">:$reverse);
  let results = (outs Variadic<Tessel_Tile>:$results);
  let regions = (region SizedRegion<1>:$combine);
  let assemblyFormat = "$srcs attr-dict `:` functional-type($srcs, results) $combine";
  let hasVerifier = 1;
}

def Tessel_YieldOp : Tessel_Op<"yield", [Pure, Terminator, ReturnLike,
    ParentOneOf<["ReduceOp", "ScanOp"]>]> {
  let summary = "the combined values of a reduce or scan region";
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state, ::mlir::ValueRange{}); }]>];
}

//===----------------------------------------------------------------------===//
// Data movement between layouts and shapes (through LDS)
//===----------------------------------------------------------------------===//

def Tessel_ConvertLayoutOp : Tessel_Op<"convert_layout", [DeclareOpInterfaceMethods<Tessel_LdsScratchOpInterface>, Pure, SameOperandsAndResultShape,
    SameOperandsAndResultElementType]> {
  let summary = "the same tile in another layout";
  let arguments = (ins Tessel_Tile:$src);
  let results = (outs Tessel_Tile:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
}

def Tessel_ReshapeOp : Tessel_Op<"reshape", [Tessel_InferRanges, DeclareOpInterfaceMethods<Tessel_LdsScratchOpInterface>, Pure, SameOperandsAndResultElementType]> {
  let summary = "the same elements in row-major order under another shape";
  let arguments = (ins Tessel_Tile:$src);
  let results = (outs Tessel_Tile:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

def Tessel_PermuteOp : Tessel_Op<"permute", [Tessel_InferRanges, DeclareOpInterfaceMethods<Tessel_LdsScratchOpInterface>, Pure, SameOperandsAndResultElementType]> {
  let summary = "reorder dimensions: result dim i is operand dim order[i]";
  let arguments = (ins Tessel_Tile:$src, DenseI32ArrayAttr:$order);
  let results = (outs Tessel_Tile:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

def Tessel_GatherOp : Tessel_Op<"gather", [DeclareOpInterfaceMethods<Tessel_LdsScratchOpInterface>, Pure]> {
  let summary = "pick elements of a tile along an axis by an index tile (Triton's tl.gather)";
  let description = [{
    result[..., i, ...] = src[..., indices[..., i, ...], ...] along `axis`:
    `indices` has src's rank and extents except along `axis`, the result
    its shape and src's element type. An index outside [0, extent) reads
    0. Through LDS: src is written whole, each thread reads what its
    indices say.
  }];
  let arguments = (ins Tessel_Tile:$src, Tessel_Tile:$indices, I32Attr:$axis);
  let results = (outs Tessel_Tile:$result);
  let assemblyFormat = "$src `[` $indices `]` attr-dict `:` type($src) `,` type($indices) `->` type($result)";
  let hasVerifier = 1;
}

def Tessel_HistogramOp : Tessel_Op<"histogram", [DeclareOpInterfaceMethods<Tessel_LdsScratchOpInterface>, Pure]> {
  let summary = "count a tile's integer values into bins 0..N-1 (Triton's tl.histogram)";
  let description = [{
    result[b] = the number of elements of `src` equal to b (where `mask`
    holds); values outside [0, N) are not counted. N is the result's
    length. Counted in LDS with atomic adds (ds_add_u32), then read back.
  }];
  let arguments = (ins Tessel_Tile:$src, Optional<Tessel_BoolLike>:$mask);
  let results = (outs Tessel_Tile:$result);
  let assemblyFormat = "$src (`,` $mask^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Tessel_JoinOp : Tessel_Op<"join", [DeclareOpInterfaceMethods<Tessel_LdsScratchOpInterface>, Pure]> {
  let summary = "stack two tiles (or scalars) along a new last dimension of size 2";
  let arguments = (ins AnyType:$lhs, AnyType:$rhs);
  let results = (outs Tessel_Tile:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)";
  let hasVerifier = 1;
}

def Tessel_SplitOp : Tessel_Op<"split", [DeclareOpInterfaceMethods<Tessel_LdsScratchOpInterface>, Pure]> {
  let summary = "one half of a tile whose last dimension is 2 (a scalar for a 1-D tile)";
  let arguments = (ins Tessel_Tile:$src, ConfinedAttr<I32Attr, [IntMinValue<0>, IntMaxValue<1>]>:$half);
  let results = (outs AnyType:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Tiles kept in LDS across ops (tessel-pipeline-loops)
//===----------------------------------------------------------------------===//

def Tessel_LocalAllocOp : Tessel_Op<"local_alloc", [DeclareOpInterfaceMethods<Tessel_LdsScratchOpInterface>,
    MemoryEffects<[MemAlloc]>]> {
  let summary = "a buffer in LDS, alive from here to its last use";
  let description = [{
    The type says how a tile sits in a slot; the LDS plan gives the buffer
    its offset (`tessel.lds_offset`).
  }];
  let results = (outs Tessel_Lds:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

def Tessel_LocalStoreOp : Tessel_Op<"local_store", [MemoryEffects<[MemWrite]>]> {
  let summary = "write a tile into a slot of an LDS buffer";
  let description = [{
    Each element is written once (by the thread that owns it). Reads of the
    slot by other threads need a `tessel.barrier` between.
  }];
  let arguments = (ins Tessel_Tile:$src, Tessel_Lds:$buffer, I32:$slot);
  let assemblyFormat = "$src `,` $buffer `[` $slot `]` attr-dict `:` type($src) `->` type($buffer)";
  let hasVerifier = 1;
}

def Tessel_LocalLoadOp : Tessel_Op<"local_load", [MemoryEffects<[MemRead]>]> {
  let summary = "read a tile, in any layout, from a slot of an LDS buffer";
  let arguments = (ins Tessel_Lds:$buffer, I32:$slot);
  let results = (outs Tessel_Tile:$result);
  let assemblyFormat = "$buffer `[` $slot `]` attr-dict `:` type($buffer) `->` type($result)";
  let hasVerifier = 1;
}

def Tessel_BufferLoadToLocalOp : Tessel_Op<"buffer_load_to_local",
    [AttrSizedOperandSegments, MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "load base[offsets] straight into a slot of an LDS buffer";
  let description = [{
    Each element of the slot gets base[offsets] at that element's
    coordinates, as tessel.buffer_load reads it (a masked-off element, or
    one at or past `bound`, gets 0), without passing through registers:
    the target's load-to-LDS instructions (gfx950 `buffer_load_dwordx4 ...
    lds`), where lane l's `vec` elements land at the wave's LDS pointer plus
    l * `vec` elements. So the offsets' layout must put a wave's lanes on
    consecutive chunks of the slot (ignoring its swizzle); each lane then
    loads, from the lane that holds it, the offset of the element the
    swizzle puts at its chunk (`planDirectLds`). With `shift`, every offset
    is `offsets` + `shift` (a loop's carried offset: only the tile moves
    between lanes, once, where it is made). The data is in LDS for other
    threads after `tessel.async_wait` and a barrier. Formed by
    tessel-pipeline-loops on targets with 16-byte loads to LDS.
  }];
  let arguments = (ins Tessel_Ptr:$base, RankedTensorOf<[I32]>:$offsets, Optional<I32>:$shift,
                       Optional<Tessel_BoolLike>:$mask, Optional<I32>:$bound, Tessel_Lds:$buffer, I32:$slot,
                       ConfinedAttr<I32Attr, [IntPositive]>:$vec);
  let assemblyFormat = [{
    $base `[` $offsets (`+` $shift^)? `]` (`,` $mask^)? (`bound` $bound^)? `into` $buffer `[` $slot `]` attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Tessel_AsyncWaitOp : Tessel_Op<"async_wait", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "wait until this thread's loads to LDS have written it";
  let description = [{
    Every `tessel.buffer_load_to_local` this thread issued has written its
    bytes to LDS (the loads count as vector memory operations: vmcnt(0),
    not a register dependence). A barrier after it makes them visible to
    the workgroup.
  }];
  let assemblyFormat = "attr-dict";
}

def Tessel_BarrierOp : Tessel_Op<"barrier", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "every thread of the workgroup arrives before any goes on";
  let description = [{
    Every thread's memory accesses before the barrier, LDS and global,
    happen before any thread's accesses after it (workgroup-scope fences
    around the hardware barrier). Staging writes it between LDS slots;
    `debug_barrier()` (Triton's `tl.debug_barrier`) writes it for a user.
  }];
  let assemblyFormat = "attr-dict";
}

//===----------------------------------------------------------------------===//
// Facts for the analyses
//===----------------------------------------------------------------------===//

def Tessel_DotOp : Tessel_Op<"dot", [Pure, AllTypesMatch<["c", "result"]>, AttrSizedOperandSegments]> {
  let summary = "matrix product and accumulate: result = a * b + c";
  let description = [{
    a is [M, K], b is [K, N], c and the result [M, N]. a and b share one
    element type, f16, bf16, f32 (the accumulator f32) or i8 (the
    accumulator i32), or are 8-bit floats of one family, E4M3 and E5M2 in
    any mix (OCP's f8E4M3FN/f8E5M2 or FNUZ's f8E4M3FNUZ/f8E5M2FNUZ; the
    accumulator f32). On the matrix cores the result takes an MFMA layout and
    a and b the matching dot-operand layouts (tessel-assign-layouts).

    `a_scale` [M, K / 32] and `b_scale` [N, K / 32] (i8, read as unsigned
    E8M0 bytes, 2^(s - 127), 255 NaN), both or neither, only on OCP 8-bit
    floats: each 32 of K of a row of a (a column of b) is multiplied by its
    scale (OCP MX). Made by tessel-legalize-dots from a `tessel.dot_scaled`
    that gfx950's scaled MFMAs take (V_MFMA_SCALE_F32_*_F8F6F4); the scales
    take dot-operand layouts with kWidth 1 (b_scale's with kLast), one byte
    a lane and instruction, where those instructions read them.

    `a_e2m1` (`b_e2m1`), made by tessel-legalize-dots for gfx950's f8f6f4
    MFMAs, with or without scales: a is OCP E2M1 (FP4) packed
    two a byte along K, i8 [M, K / 2] (b i8 [K / 2, N]), the lower K in the
    low nibble; the other operand is E2M1 too or an OCP 8-bit float. Its
    dot-operand layout is over the bytes, kWidth counting bytes.
  }];
  let arguments = (ins Tessel_Tile:$a, Tessel_Tile:$b, Tessel_Tile:$c, Optional<Tessel_Tile>:$a_scale,
                       Optional<Tessel_Tile>:$b_scale, UnitAttr:$a_e2m1, UnitAttr:$b_e2m1);
  let results = (outs Tessel_Tile:$result);
  let assemblyFormat = [{
    $a `,` $b `,` $c (`scales` $a_scale^ `,` $b_scale `:` type($a_scale) `,` type($b_scale))? attr-dict
    `:` type($a) `*` type($b) `->` type($result)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$a, "::mlir::Value":$b, "::mlir::Value":$c), [{
      build($_builder, $_state, result, a, b, c, ::mlir::Value(), ::mlir::Value());
    }]>
  ];
  let hasVerifier = 1;
}

def Tessel_DotScaledOp : Tessel_Op<"dot_scaled", [Pure, AllTypesMatch<["c", "result", "fallback"]>,
                                                 AttrSizedOperandSegments]> {
  let summary = "the product of two blocks in microscaling (MX) formats, and its decomposition";
  let description = [{
    Triton's `tl.dot_scaled`: (a * a_scale) [M, K] times (b * b_scale)
    [K, N] plus c, in f32. `a_format` and `b_format` name the formats
    (MxFormat: 0 e2m1, 1 e4m3, 2 e5m2, 3 bf16, 4 fp16); a is [M, K] ([M,
    K / 2] bytes for e2m1), b [K, N] ([K / 2, N]); `a_scale` [M, K / 32] and
    `b_scale` [N, K / 32] are E8M0 bytes (i8), each optional.

    `fallback` is the same product composed by the tracer from upcasts: each
    element times its scale in bf16 (f16 with an fp16 operand), then a
    plain dot. tessel-legalize-dots replaces the op by it, unless the
    target's scaled matrix instructions take the formats (gfx950: e2m1, e4m3
    and e5m2, K a multiple of an instruction's, M and N of its tile); then by
    a `tessel.dot` with scales (e2m1 operands marked), and the decomposition,
    unused, is erased. One
    front door: every target's kernel traces the same op.
  }];
  let arguments = (ins Tessel_Tile:$a, Tessel_Tile:$b, Tessel_Tile:$c, Tessel_Tile:$fallback,
                       Optional<Tessel_Tile>:$a_scale, Optional<Tessel_Tile>:$b_scale,
                       ConfinedAttr<I32Attr, [IntMinValue<0>, IntMaxValue<4>]>:$a_format,
                       ConfinedAttr<I32Attr, [IntMinValue<0>, IntMaxValue<4>]>:$b_format);
  let results = (outs Tessel_Tile:$result);
  let assemblyFormat = [{
    $a `,` $b `,` $c `fallback` $fallback (`a_scale` $a_scale^ `:` type($a_scale))?
    (`b_scale` $b_scale^ `:` type($b_scale))? attr-dict `:` type($a) `*` type($b) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tessel_AssumeOp : Tessel_Op<"assume", []> {
  let summary = "a condition the caller guarantees";
  let arguments = (ins I1:$cond);
  let assemblyFormat = "$cond attr-dict";
}

def Tessel_MultipleOfOp : Tessel_Op<"multiple_of", [Tessel_InferRanges, Pure, SameOperandsAndResultType]> {
  let summary = "each contiguous run starts at a multiple of `divisor`";
  let arguments = (ins Tessel_Tile:$src, ConfinedAttr<I64Attr, [IntPositive]>:$divisor);
  let results = (outs Tessel_Tile:$result);
  let assemblyFormat = "$src attr-dict `:` type($src)";
}

def Tessel_MaxContiguousOp : Tessel_Op<"max_contiguous", [Tessel_InferRanges, Pure, SameOperandsAndResultType]> {
  let summary = "runs of `count` elements along the last dimension are contiguous";
  let arguments = (ins Tessel_Tile:$src, ConfinedAttr<I64Attr, [IntPositive]>:$count);
  let results = (outs Tessel_Tile:$result);
  let assemblyFormat = "$src attr-dict `:` type($src)";
}

def Tessel_PrintOp : Tessel_Op<"print", [MemoryEffects<[MemWrite]>]> {
  let summary = "prints every element of its operands, once, with its program id and index";
  let description = [{
    `device_print(prefix, tiles...)`. Each element prints as one line,
    `pid (x, y, z) idx (i, j)<prefix><value>` (Triton's format), with
    `(operand k) ` before the value when there are several operands; with no
    operand, one line `pid (x, y, z)<prefix>` per program. `prefix` is
    printable ASCII, already normalized by the tracer (Triton's rule: it ends
    in ": " when values follow). An element held by several threads
    (replicas) prints once, from its owner. Lowered to the ROCm device
    library's printf (`__ockl_printf_*`), which the HIP runtime services
    through the hostcall buffer and the emulator implements itself.
  }];
  let arguments = (ins StrAttr:$prefix, Variadic<AnyType>:$values);
  let assemblyFormat = "$prefix attr-dict ($values^ `:` type($values))?";
}

def Tessel_DeviceAssertOp : Tessel_Op<"device_assert", [MemoryEffects<[MemWrite]>]> {
  let summary = "stops the launch where an element of the condition is false";
  let description = [{
    `device_assert(cond, message)`. Kept only in a module marked
    `tessel.debug` (LaunchOptions::debug); `tessel-specialize` erases it
    otherwise. A thread holding a false element prints
    `file:line: device_assert failed: message: pid (x, y, z) idx (i, j)` to
    stderr (the device library's fprintf) and executes `llvm.trap`: the
    emulator turns the trap into the launch's tessel::Error with that text,
    the GPU ends the dispatch with a queue error.
  }];
  let arguments = (ins AnyTypeOf<[I1, TensorOf<[I1]>]>:$cond, StrAttr:$message);
  let assemblyFormat = "$cond `,` $message attr-dict `:` type($cond)";
}

#endif // TESSEL_OPS
