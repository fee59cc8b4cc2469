//===- Passes.td - tessel passes ---------------------------*- tablegen -*-===//
#ifndef TESSEL_PASSES
#define TESSEL_PASSES

include "mlir/Pass/PassBase.td"

def TesselSpecialize : Pass<"tessel-specialize", "::mlir::ModuleOp"> {
  let summary = "Turn specialization facts on kernel arguments into IR";
  let description = [{
    A kernel is compiled for what its call's arguments let the compiler
    assume. Integer arguments marked `tessel.equal_to_one` are replaced by the
    constant 1 (the argument stays in the signature so the kernarg layout does
    not depend on the specialization); the canonicalizer after it folds splats
    of it into constant tiles and `x * 1` away, so every analysis sees the 1. `tessel.divisibility` on integer and
    pointer arguments stays as an argument attribute that the axis analysis
    reads; `tessel.assume(arg % C == 0)` adds one (the power of two in C).
    Without `tessel.debug` on the module (LaunchOptions::debug), every
    `tessel.device_assert` is erased, so its condition is dead code and the
    kernel is what it would be without the checks.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def TesselFuseFma : Pass<"tessel-fuse-fma", "::mlir::ModuleOp"> {
  let summary = "Float multiply-adds as one fma when the launch asked for it (LaunchOptions::fp_fusion)";
  let description = [{
    Only in a module marked `tessel.fp_fusion` (Triton's enable_fp_fusion,
    clang's -ffp-contract): a float `arith.addf` or `arith.subf` of a
    product whose every use is such a sum in its block becomes `math.fma`
    (a * b + c and c + a * b as fma(a, b, c), a * b - c as fma(a, b, -c),
    c - a * b as fma(-a, b, c)): one rounding instead of two, and the
    multiply goes. A product used otherwise is kept and its sums stay
    sums. The contraction is made here, in the module both the GPU and the
    emulator run, not left to a backend, so both compute the same bits.
    Without `tessel.fp_fusion` the pass changes nothing.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::math::MathDialect"];
}

def TesselFastMath : Pass<"tessel-fast-math", "::mlir::ModuleOp"> {
  let summary = "Fast float division when the launch asked for it (LaunchOptions::fast_math)";
  let description = [{
    Only in a module marked `tessel.fast_math`. A float `arith.divf` whose
    divisor is a splat or a broadcast (one value per row, say) becomes a
    multiplication by the reciprocal of the splatted or broadcast source,
    computed once per source element: `x / expand_dims(sum, 1)` divides
    once per row. Every other float division gets the `arcp` and `afn`
    fast-math flags, which the AMDGPU backend lowers to its reciprocal
    instruction times the dividend (about 1 ulp) instead of the correctly
    rounded sequence. Divisions marked `tessel.div_rn` (div_rn()) are left
    alone; without `tessel.fast_math` the pass changes nothing.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def TesselCheckAssumptions : Pass<"tessel-check-assumptions", "::mlir::ModuleOp"> {
  let summary = "Reject assumptions that the call's own arguments make false";
  let description = [{
    After specialization and folding, a `tessel.assume` whose condition is
    the constant false is a promise this very call breaks (for example
    `assume(n % 128 == 0)` launched with n == 1): an error at the assume's
    location, instead of undefined behaviour at run time.
  }];
}

def TesselLegalizeDots : Pass<"tessel-legalize-dots", "::mlir::ModuleOp"> {
  let summary = "8-bit float dots the target's matrix cores do not take: an error, or f16 operands";
  let description = [{
    A `tessel.dot` on 8-bit floats runs on the target's 8-bit float MFMAs
    (gfx942: the FNUZ formats, gfx950: the OCP ones; the target table's
    rows) when one of them divides its K. Otherwise:
    - the target's matrix cores take the other family: an error for the
      kernel's author at the dot's line, naming the target and the formats
      it takes (the same byte means another value in the other family, so
      the compiler does not guess);
    - they take none and the target table says `fp8DotThroughF16`
      (gfx1100): both operands widen to f16 (`arith.extf`, exact) and the
      f16 instructions run the dot;
    - they take none otherwise (gfx90a): an error naming the targets that
      take 8-bit floats and saying to cast to half;
    - the family is the target's but no instruction divides K (K below 16):
      the operands widen to f16 (exact), which the f16 instructions or the
      multiply-adds take.
    A `tessel.dot_scaled` (MX formats) becomes a `tessel.dot` with its
    scales where the target's scaled MFMAs take it (gfx950: e2m1, e4m3 and
    e5m2 operands in any mix, e2m1 kept packed and marked `a_e2m1` /
    `b_e2m1`, K a multiple of an f8f6f4 instruction's depth, M and N at
    least its tile; a missing scale is 127, 1.0), else its traced
    decomposition (`fallback`), whose f32 -> bf16 dot operands are then
    truncated (the high 16 bits, as Triton's AMD upcast) instead of
    rounded: equal for an element times a power of two unless the product
    is below f32's normal range; the form not taken, unused, is erased.
    Reads `tessel.target` from the module; without it, every dot_scaled
    takes its decomposition and nothing else changes.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def TesselFoldCompares : Pass<"tessel-fold-compares", "::mlir::ModuleOp"> {
  let summary = "Fold comparisons, and so masks, that integer ranges decide";
  let description = [{
    Runs MLIR's integer range analysis over the kernel, with tessel's ops
    (make_range, program ids, splat, broadcast, ...) telling it their values,
    loop induction variables bounded by their loops, and kernel arguments
    bounded by `tessel.assume(arg >= C)`, `arg > C`, `arg <= C`, `arg < C`
    (either side may be the constant). An `arith.cmpi` that is true (or
    false) for every value the ranges allow becomes a constant; masks built
    from it simplify, and a load or store whose mask is all true loses it
    (and its `other`).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def TesselCarryOffsets : Pass<"tessel-carry-offsets", "::mlir::ModuleOp"> {
  let summary = "Carry a scalar offset instead of a pointer tile moved by uniform amounts";
  let description = [{
    A pointer tile carried by an `scf.for` whose init comes from a kernel
    argument with `tessel.pointer_range` <= 31 (a Buffer under 2 GiB) and
    which each iteration moves by amounts the same for every element
    (`addptr` of a splat or splat constant: Triton's
    `a_ptrs += BLOCK_K * stride_ak`) becomes the init plus a carried i32
    scalar offset (0 at first, plus the amounts each iteration), so the
    access is a kernel argument plus i32 offsets again and can be a buffer
    access (the hardware's range check is the mask: no branch per vector).
    A valid element's offset from the argument fits in i32, and i32 sums
    wrap alike in any order, so the addresses are the same (as one i32
    offset from the argument, which a buffer access is; a global access
    adds the init's and the carried offset apart, the same unless the
    init points over 2 GiB before the Buffer). The tile is
    dropped from the loop (scf.for's canonicalization); its value after the
    loop is rebuilt from the final offset.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect"];
}

def TesselAssignLayouts : Pass<"tessel-assign-layouts", "::mlir::ModuleOp"> {
  let summary = "Give every tile a layout over the workgroup's threads";
  let description = [{
    Groups tiles that must share a layout, as each op states through
    `LayoutRulesOpInterface` (all its tiles in one layout when it has no
    rules: elementwise ops, broadcasts), inserting a `tessel.convert_layout`
    where the constraints cannot all hold; derives for each group a
    blocked layout whose per-thread vector width comes from the axis
    analysis of its loads and stores (contiguity, divisibility, mask
    constancy; at most 16 bytes), gives operands of `tessel.expand_dims` the
    slice of their result's layout, and records the vector width on loads and
    stores. Cheap index computations used along two axes are rematerialized
    per use. Reads `tessel.num_warps` and `tessel.wave_size` from the module, and on
    targets whose LDS reads transpose `tessel.num_stages`, `tessel.direct_to_lds` and
    `tessel.no_direct_to_lds` (a 16-bit dot operand keeps its run along K only where
    the loop's loads will likely stay in registers).
  }];
}

def TesselHoistConversions : Pass<"tessel-hoist-conversions", "::mlir::ModuleOp"> {
  let summary = "Remove redundant layout conversions; move loop-invariant ones out of loops";
  let description = [{
    After layout assignment: a `tessel.convert_layout` to the layout its
    source already has is dropped (layout assignment cuts a tile loose
    before it knows the layouts, which may turn out equal), and a chain of
    conversions whose inner ones nothing else reads becomes one conversion.
    Then a `tessel.convert_layout` in the body of an `scf.for` or
    `scf.while` whose operand is defined outside the loop
    converts the same tile on every iteration (attention's Q going to its
    dot-operand layout). It moves before the loop, out of as many loops as
    its operand is outside of; the loop then reads the converted tile from
    registers. A conversion under an `scf.if` stays where it is (it might
    not run), and so does one whose result takes more than 16 registers
    per thread more than its source (a wave32 WMMA A operand holds each row
    in two lanes, all of K: Q of a 32x128 block over 8 waves would keep 64
    registers per thread over the loop instead of 8). A hoisted conversion
    that an earlier one in its block already makes (same tile, same layout:
    attention's two key loops each read Q) is replaced by it, so the source
    is not kept live across the first loop for a second conversion.
  }];
}

def TesselPipelineLoops : Pass<"tessel-pipeline-loops", "::mlir::ModuleOp"> {
  let summary = "Software-pipeline the loads feeding a loop's dots (num_stages >= 2)";
  let description = [{
    After layout assignment, with `tessel.num_stages` = s >= 2 on the
    module, each `scf.for` with dots gets a schedule over d + 1 stages
    (d = s - 1), then is expanded by it. Stage 0 holds each `tessel.load`
    or `tessel.buffer_load` straight in the body whose tile reaches a
    `tessel.dot` (through layout conversions) and whose operands can be
    computed for a later iteration, with the ops only those operands need;
    stage d holds the rest of the body (the dots and what reads them).

    An operand may read the induction variable (at iteration i + k it is
    iv + k * step) and loop-carried values (carried value j at iteration
    i + k is yield operand j evaluated at iteration i + k - 1; before the
    loop, the init values at the lower bound), through ops of the body's own
    block that are free of memory effects and regions: Triton's pointer tiles
    moved each iteration (`a_ptrs += BLOCK_K * stride_ak`) pipeline; a value
    computed from a load does not. The ops are cloned per iteration ahead,
    once per (value, distance); those the current iteration computes anyway
    move up and are shared. Ops that may not be speculated (a division) are
    computed inside the branch.

    Expansion: the first d iterations' tiles are loaded before the loop (each
    in a uniform branch on whether the loop reaches its iteration; poison
    otherwise); each iteration starts by loading the tiles d iterations
    ahead (in a branch on whether that iteration runs), so a global load's
    latency hides behind d iterations of matrix instructions. A tile whose
    only use converts it through LDS into a dot operand's layout waits in an
    LDS buffer of d slots (`tessel.local_alloc`, swizzled rather than padded
    when a swizzle is as conflict-free): the first iteration's tile is stored
    into slot 0 before the loop, then a `tessel.barrier`; the dot reads its
    operand from the iteration's slot (`tessel.local_load`, in the operand's
    layout) and the end of the body stores the next iteration's tile into
    the next slot, then a barrier (one slot needs a barrier before the store
    too). The slot to read is carried round the loop when there are several.
    The tiles between (d >= 2) and the tiles of other loads wait in
    registers, carried as d - 1 or d sets that each iteration yields shifted
    by one. The LDS plan keeps the buffers alive over the whole loop.

    Then the expanded bodies lose their dead ops (what use-buffer-ops left of
    the pointer chains, when no CSE ran since) and CSE runs over the
    functions: the prologue's copies
    of loop-invariant address ops come before the loop, so the body's own
    become them.

    On a target with 16-byte loads to LDS (gfx950) at num_stages 2, staged
    tiles go from global memory straight into their slots
    (`tessel.buffer_load_to_local`: no registers, no `tessel.local_store`)
    when each is either such a load (a buffer load whose masked-off elements
    read 0 and whose layout puts a wave's lanes on consecutive 16-byte
    chunks of its slot: planDirectLds) or too small to fill one (fewer than
    16 bytes a thread, as dot_scaled's scales: it stays in registers, in two
    slots of its own), and at least one is such a load. When: always with
    `direct-to-lds=1` (or the module's `tessel.direct_to_lds`); never with 0
    (`tessel.no_direct_to_lds`); otherwise where the two slots keep 4 of the
    kernel's waves a SIMD (kDirectLdsMinWaves) and no load would move its
    offsets between lanes every iteration for two or more register groups. The buffers get two slots and the prologue loads
    slot 0; each iteration computes the slot it writes and the next tiles'
    masks (ANDed with whether the next iteration runs: no branch), then
    `tessel.async_wait` and one barrier (its slot has landed, the other is
    free), then loads the small tiles through registers (in the branch on
    whether the next iteration runs), then the next tiles into the other
    slot, then reads and multiplies, and at the end stores the small tiles
    into their next slot (no barrier: the next iteration's orders them);
    after the loop, a wait and a barrier. A larger tile staged through
    registers in two slots would cost an address op per swizzled access
    pattern each iteration: then none goes straight. By default, neither
    where a load's offsets would move between lanes every iteration for two
    or more register groups a thread; the offsets' uniform part (splats of
    scalars under adds, multiplies by a splat, broadcasts, expand_dims) is
    passed apart as the load's shift, so that the lanes' offsets move once,
    where they are made. The slots' reads, and the small tiles' stores, are
    marked `tessel.async_copied`: they never touch bytes a load to LDS in
    flight writes, which the lowering tells LLVM (alias scopes; the stores'
    wait then counts only the small tiles' loads, issued before the loads to
    LDS).

    Late staged loads: where the module says `tessel.late_staged_loads`
    (compileTrace's second compile of a kernel whose first code spills),
    the branch loading each staged tile but the first goes after the
    iteration's products, before the barrier and the slot stores, with its
    addresses made at the top with the first's; only through registers, for
    two or more staged tiles, where every address op can be speculated and
    nothing in the body but the loads touches memory other than by reading.
    Where that would move loads, the pass marks the module
    `tessel.late_staged_loads_apply`.
  }];
  let options = [
    Option<"directToLds", "direct-to-lds", "int", /*default=*/"-1",
           "load staged tiles straight into LDS where the target can (gfx950, num_stages 2): 1 always, "
           "0 never, -1 (default) as the module says (tessel.direct_to_lds / tessel.no_direct_to_lds), "
           "else where the two slots keep kDirectLdsMinWaves waves a SIMD">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect", "::mlir::ub::UBDialect"];
}

def TesselUseBufferOps : Pass<"tessel-use-buffer-ops", "::mlir::ModuleOp"> {
  let summary = "Global accesses as a scalar base plus 32-bit offsets (buffer or saddr instructions)";
  let description = [{
    A `tessel.load` / `tessel.store` of `addptr(splat(base), offsets)`
    (through a chain of addptrs) becomes `tessel.buffer_load` /
    `tessel.buffer_store` of `base'[offsets']` when the target takes buffer
    instructions (its `bufferResourceFlags`) and the integer range analysis
    proves every element's byte offset, plus the access, stays below 2^31 - 1.
    The offsets are split: splatted scalars (uniform over the workgroup) move
    into the scalar base (`addptr(base, u)`, 64-bit), and only the per-element
    rest must be bounded: `pid * BLOCK + arange(0, BLOCK)` needs nothing of
    pid. The lowering then picks the instruction (see tessel.buffer_load): a
    buffer resource, where a masked-off element costs no branch (the
    hardware's range check reads 0 and writes nothing), or a global
    instruction in its scalar-base form (unmasked accesses, and masked ones of
    one group per thread, under one exec-mask branch): either way each lane
    holds a 32-bit offset, not a 64-bit address.

    A masked access whose mask is `x < n` for an offset tile x = u + v (u
    uniform) and a uniform n, with every other conjunct uniform, instead
    takes `bound`: the resource's range is what is left of max(n, 0) past
    u (none where a uniform conjunct is false), and the mask disappears.
    Through a small Buffer (below) with x the only offset tile, the base is
    the argument itself and x the offset, bound max(n, 0) (n for an
    unsigned compare): no 64-bit base
    arithmetic; while u * bytes stays below 2^32 minus v's reach no lane's
    offset wraps, and past that every lane is beyond the Buffer, so the
    bound is 0.
    Not when each thread holds one group (by its layout) and a plain form
    applies: that access is cheaper as a global instruction under one
    branch than with a resource to build.

    When the analysis cannot bound the offsets (`rows * stride` with a
    runtime stride) but the pointer is a kernel argument marked
    `tessel.pointer_range = 31` (the call passed a Buffer of at most
    2^31 - 2 bytes) plus scalar and tile i32 addptrs, the base is the
    argument itself and the offsets are the whole i32 sum (scalar terms
    splatted): a valid element lies inside the Buffer, so its byte offset
    fits, and an invalid one is masked off. That sum is built as a tile
    plus splat(u), u every uniform part gathered from under products with a
    uniform factor, expand_dims and broadcasts (`(k + ks) * stride` is
    `ks * stride + splat(k * stride)`; i32 sums and products wrap alike in
    any order): a loop's offsets made from its counter are then a
    loop-invariant tile plus a moving scalar, which tessel-pipeline-loops
    passes to a load to LDS as its shift. Loads and stores not of these
    forms are left alone.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::func::FuncDialect"];
}

def TesselPlanLds : Pass<"tessel-plan-lds", "::mlir::ModuleOp"> {
  let summary = "Place every LDS buffer and check the total against the target";
  let description = [{
    Ops that exchange data between threads (reductions and scans across
    waves, layout conversions, reshapes, permutes, joins, splits) need
    workgroup memory (LDS) while they run. This pass gives each such buffer
    an offset (`tessel.lds_offset`) with a first-fit allocator over live
    ranges, so buffers that are not alive together share bytes, and records
    the total on the module (`tessel.lds_bytes`, rounded up to 16). An op's
    scratch ends with a barrier after its last read, so the next op may
    write the same bytes; when it costs at most 1 KiB more LDS (and fits),
    the scratch of an op in the function's own block instead stays reserved
    until the next op there that runs a barrier (`tessel.lds_no_reuse`: its
    trailing barrier is not emitted; e.g. softmax's max and sum reductions
    get two barriers, not four). A total
    over `tessel.lds_limit` is an error at the op that needs the most, with
    the bytes it needs, the target's limit and what to shrink.
  }];
}

def TesselTestAxisInfo : Pass<"tessel-test-axis-info", "::mlir::ModuleOp"> {
  let summary = "Print the axis analysis of every tile as remarks (for tests)";
}

def TesselConvertToLLVM : Pass<"tessel-convert-to-llvm", "::mlir::ModuleOp"> {
  let summary = "Convert tile-level IR to per-thread LLVM dialect code";
  let description = [{
    Turns each kernel function, whose tiles carry layouts, into an
    `llvm.func` with the `rocdl.kernel` attribute in which every thread
    computes the elements its layout gives it: a tile becomes the registers
    one thread holds (a 1:N type conversion), and one family of patterns per
    kind of op (elementwise, load/store, reduce, scan, layout conversion,
    SPMD ids, control flow) emits its per-thread code, with the hardware
    primitives (DPP, ds_bpermute, barriers, LDS) from one TargetInfo. Loads
    and stores move `vec` elements at a time and are predicated on their mask;
    math functions without an AMDGPU instruction become calls to the ROCm
    device library (`__ocml_*`). Structured control flow ends as LLVM
    branches.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect", "::mlir::ROCDL::ROCDLDialect",
                           "::mlir::scf::SCFDialect", "::mlir::cf::ControlFlowDialect"];
}

#endif // TESSEL_PASSES
