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

#endif // TESSEL_ATTRS
