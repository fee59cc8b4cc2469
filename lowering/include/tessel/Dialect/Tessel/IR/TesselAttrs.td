//===- TesselAttrs.td - layouts of tiles over threads ------*- tablegen -*-===//
//
// A layout says which thread of the workgroup holds which element of a tile,
// in which of its registers. Every layout implements DistributedLayout: it
// has a linear form (LinearLayout.h) from which the compiler derives
// everything else (elements per thread, which lanes and waves hold distinct
// data, the coordinates a thread's registers hold, who owns a replicated
// element), so a new layout (MFMA, WMMA, dot operands) is one attribute and
// one toLinearLayout, not a case in every pass.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_ATTRS
#define TESSEL_ATTRS

include "tessel/Dialect/Tessel/IR/TesselDialect.td"
include "mlir/IR/AttrTypeBase.td"

def Tessel_DistributedLayoutInterface : AttrInterface<"DistributedLayoutAttr"> {
  let cppNamespace = "::mlir::tessel";
  let description = [{
    A layout that spreads a tile over the registers of the lanes and waves of
    a workgroup.
  }];
  let methods = [
    InterfaceMethod<[{
      The linear form of this layout for a tile of `shape`: what each bit of
      a register index, a lane id and a wave id adds to an element's
      coordinates.
    }], "::mlir::tessel::LinearLayout", "toLinearLayout",
    (ins "::llvm::ArrayRef<int64_t>":$shape)>,
  ];
}

def Tessel_BlockedLayoutAttr : AttrDef<Tessel_Dialect, "BlockedLayout",
    [DeclareAttrInterfaceMethods<Tessel_DistributedLayoutInterface>]> {
  let mnemonic = "blocked";
  let summary = "a tile split into per-thread blocks";
  let description = [{
    Each thread holds `sizePerThread` contiguous elements per dimension;
    `threadsPerWave` threads of a wave and `wavesPerBlock` waves tile the
    dimensions; the pattern repeats to cover the tile and wraps (replicates)
    where the tile is smaller. `order` lists dimensions fastest first: a
    thread's registers and the lanes of a wave run along order[0] first.
  }];
  let parameters = (ins
    ArrayRefParameter<"unsigned">:$sizePerThread,
    ArrayRefParameter<"unsigned">:$threadsPerWave,
    ArrayRefParameter<"unsigned">:$wavesPerBlock,
    ArrayRefParameter<"unsigned">:$order);
  let assemblyFormat = [{
    `<` `sizePerThread` `=` `[` $sizePerThread `]` `,` `threadsPerWave` `=` `[` $threadsPerWave `]`
    `,` `wavesPerBlock` `=` `[` $wavesPerBlock `]` `,` `order` `=` `[` $order `]` `>`
  }];
  let genVerifyDecl = 1;
}

def Tessel_SliceLayoutAttr : AttrDef<Tessel_Dialect, "SliceLayout",
    [DeclareAttrInterfaceMethods<Tessel_DistributedLayoutInterface>]> {
  let mnemonic = "slice";
  let summary = "a parent layout with one dimension removed";
  let description = [{
    The layout of a tile that `tessel.expand_dims` turns into a tile of the
    parent layout: element i of the slice sits where the parent holds the
    elements whose coordinate along `dim` is dropped.
  }];
  let parameters = (ins "unsigned":$dim, "DistributedLayoutAttr":$parent);
  let assemblyFormat = "`<` struct(params) `>`";
}

def Tessel_MfmaLayoutAttr : AttrDef<Tessel_Dialect, "MfmaLayout",
    [DeclareAttrInterfaceMethods<Tessel_DistributedLayoutInterface>]> {
  let mnemonic = "mfma";
  let summary = "the accumulator layout of an MFMA matrix instruction (CDNA, wave64)";
  let description = [{
    The [M, N] result of `tessel.dot` on the matrix cores: the waves form a
    `wavesPerBlock` = [wM, wN] grid of `instrShape` = [m, n] (32x32 or
    16x16) output tiles, repeated over the tile (along M first, then N). In
    one instruction's tile, as AMD's CDNA3 ISA guide gives the D matrix of
    v_mfma_*_32x32x*: lane l, register r hold row 8 * (r / 4) + 4 * (l / 32)
    + r % 4 and column l % 32; of v_mfma_*_16x16x*: row 4 * (l / 16) + r,
    column l % 16.

    `transposed`: the instruction runs with A and B swapped (it computes
    D^T = B^T A^T), so rows and columns trade places: lane l holds row
    l % m and its registers run along N (4 consecutive columns per lane
    and group of 4 registers). A thread then holds runs of a row: C is
    stored as vectors along N, a reduction along N is mostly in-thread, and
    the result (cast to the inputs' type) is already the A operand of a
    following dot with kWidth 4 (no data movement). The operand layouts do
    not change.
  }];
  let parameters = (ins
    ArrayRefParameter<"unsigned">:$instrShape,
    ArrayRefParameter<"unsigned">:$wavesPerBlock,
    DefaultValuedParameter<"bool", "false">:$transposed);
  let assemblyFormat = [{
    `<` `instrShape` `=` `[` $instrShape `]` `,` `wavesPerBlock` `=` `[` $wavesPerBlock `]`
    (`,` `transposed` `=` $transposed^)? `>`
  }];
  let genVerifyDecl = 1;
}

def Tessel_WmmaLayoutAttr : AttrDef<Tessel_Dialect, "WmmaLayout",
    [DeclareAttrInterfaceMethods<Tessel_DistributedLayoutInterface>]> {
  let mnemonic = "wmma";
  let summary = "the accumulator layout of a WMMA instruction (RDNA3, wave32)";
  let description = [{
    The [M, N] result of `tessel.dot` on gfx11's WMMA units: 16x16 output
    tiles on a `wavesPerBlock` = [wM, wN] grid of waves, repeated over the
    tile (M first). In one tile, as AMD's RDNA3 ISA guide gives the 32-bit
    D matrix of v_wmma_*_16x16x16_*: lane l, register r hold row 2 * r +
    l / 16 and column l % 16. `transposed`: A and B swapped, the
    instruction computes D^T: lane l holds row l % 16, columns 2 * r +
    l / 16 (a reduction along N is 8 steps in-thread and one across lanes).
  }];
  let parameters = (ins ArrayRefParameter<"unsigned">:$wavesPerBlock,
                        DefaultValuedParameter<"bool", "false">:$transposed);
  let builders = [
    AttrBuilder<(ins "::llvm::ArrayRef<unsigned>":$wavesPerBlock), [{
      return $_get($_ctxt, wavesPerBlock, false);
    }]>
  ];
  let assemblyFormat = "`<` `wavesPerBlock` `=` `[` $wavesPerBlock `]` (`,` `transposed` `=` $transposed^)? `>`";
}

def Tessel_DotOperandLayoutAttr : AttrDef<Tessel_Dialect, "DotOperandLayout",
    [DeclareAttrInterfaceMethods<Tessel_DistributedLayoutInterface>]> {
  let mnemonic = "dot_operand";
  let summary = "the layout of an operand of a matrix instruction";
  let description = [{
    Operand `opIdx` (0: A, [M, K]; 1: B, [K, N]) of a `tessel.dot` whose
    result has the `parent` MFMA or WMMA layout. Each lane holds `kWidth`
    consecutive elements along K per instruction. MFMA: for A, lane l holds
    row l % m and K elements kWidth * (l / m) .. + kWidth - 1 (B: column
    l % n likewise); one instruction covers kWidth * (64 / m) of K. WMMA:
    lane l holds row (column) l % 16 and all 16 K elements, lanes 16..31
    repeating lanes 0..15. Waves along N share A and waves along M share B
    (their copies are replicas). Registers run along K first (an
    instruction's kWidth elements, then the K repetitions), then along M (A)
    or N (B).

    `kGroup` (MFMA; 0 means kWidth): a lane's kWidth elements are runs of
    kGroup consecutive K with the lane groups interleaved between them:
    lane group g (l / m) holds K g * kGroup + j * kGroup * (64 / m) + i for
    i < kGroup and j < kWidth / kGroup, in that register order. A and B
    order K alike, so the instruction sums the same products. It lets a
    transposed accumulator (runs of 4 along N) be the A operand of an
    instruction that takes 8 K elements a lane (gfx950's 32x32x16 and
    16x16x32) as it is.

    `kLast` (B only, MFMA): the tile is [N, K] rather than [K, N], the same
    elements in the same lanes and registers (gfx950's scaled MFMAs read B's
    scales, [N, K / 32] as Triton takes them, this way: no transpose).
  }];
  let parameters = (ins "unsigned":$opIdx, "DistributedLayoutAttr":$parent, "unsigned":$kWidth,
                        DefaultValuedParameter<"unsigned", "0">:$kGroup,
                        DefaultValuedParameter<"bool", "false">:$kLast);
  let builders = [
    AttrBuilder<(ins "unsigned":$opIdx, "DistributedLayoutAttr":$parent, "unsigned":$kWidth), [{
      return $_get($_ctxt, opIdx, parent, kWidth, 0u, false);
    }]>,
    AttrBuilder<(ins "unsigned":$opIdx, "DistributedLayoutAttr":$parent, "unsigned":$kWidth, "unsigned":$kGroup), [{
      return $_get($_ctxt, opIdx, parent, kWidth, kGroup, false);
    }]>
  ];
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // TESSEL_ATTRS
