// The trace: what running a block program once records. It is tessel's
// hand-off from the C++ front end (dsl/) to the compiler (lowering/), kept free
// of MLIR and LLVM so the public headers stay light and a trace can be
// fingerprinted cheaply for the cache key.
#pragma once

#include "tessel/core/dtype.hpp"
#include "tessel/core/source_loc.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace tessel {

// Opcodes. Operand conventions are given per op; "tile" means any rank
// (0 = scalar). Binary elementwise ops see operands of one shape and one
// dtype: the tracer inserts Splat/Broadcast first.
enum class TraceOp : uint8_t {
  Arg,         // i0 = kernel argument index. Scalar or pointer.
  ConstInt,    // i0 = value; shape may be non-empty (a filled tile)
  ConstFloat,  // f = value; shape may be non-empty
  // A generic op: the node names its MLIR op (`name`, e.g. "tessel.program_id")
  // and its attributes (`attrs`); operands as any node's, the result is the
  // node's type (or none, `results == 0`). The importer builds it by name and
  // the op's verifier checks it, so a new op needs no case of its own here or
  // in the importer.
  Op,
  // Elementwise binary: (a, b), same shape & dtype; result dtype = operand's
  Add, Sub, Mul,
  Div,         // ints: truncating (C); floats: IEEE
  Rem,         // ints: sign of dividend (C); floats: fmod
  Min, Max,    // floats: NaN-propagating
  And, Or, Xor,
  Shl, Shr,    // Shr is arithmetic for signed ints
  // Comparisons: (a, b) -> i1 of the same shape
  CmpEq, CmpNe, CmpLt, CmpLe, CmpGt, CmpGe,
  // Elementwise unary: (a)
  Neg, Not,    // Not: bitwise for ints, logical for i1
  Exp, Exp2, Log, Log2, Sqrt, Rsqrt, Abs, Floor, Ceil, Sin, Cos,
  Fma,         // (a, b, c) -> a * b + c, floats
  Where,       // (cond i1, a, b) -> a's dtype
  Cast,        // (a) -> `dtype` (int<->float, widen/narrow, to/from i1)
  // --- reductions and scans (issue 3) ---
  // Reduce: operands = N input tiles of one shape; i0 = axis. `region` is the
  // combine function: 2N RegionArg nodes first (scalars; args 0..N-1 are the
  // accumulated values, N..2N-1 the next values, arg k has input k % N's
  // dtype), then its body, then one Yield whose operands are the N combined
  // values. Operand indices inside `region` index `region`. Results have the
  // input shape without `axis` (scalars for 1-D inputs) and are read through
  // Result nodes only. The node's own dtype/shape are result 0's.
  Reduce,
  Scan,        // like Reduce, inclusive; i1 = 1 for reverse; results keep the shape
  Result,      // (multi-result node), i0 = result index
  RegionArg,   // inside a region: i0 = argument index
  Yield,       // inside a region: its last node; operands = the region's results
};

const char *traceOpName(TraceOp op);

// An attribute of a generic op (TraceOp::Op).
struct TraceAttr {
  enum Kind : uint8_t { I32, I64, Bool, I32Array } kind;
  std::string name;             // "axis"
  int64_t value = 0;            // I32, I64, Bool
  std::vector<int64_t> values;  // I32Array
  bool operator==(const TraceAttr &) const = default;
};

struct TraceNode {
  TraceOp op;
  DType dtype;                   // element type; pointee type when isPtr
  bool isPtr = false;            // element is a pointer to `dtype`
  std::vector<int64_t> shape;    // empty: scalar
  std::vector<int32_t> operands; // indices of earlier nodes
  int64_t i0 = 0, i1 = 0;
  double f = 0;
  SourceLoc loc;
  std::vector<int64_t> ints;     // op-specific list (Permute's permutation)
  std::vector<TraceNode> region; // Reduce/Scan: the traced combine function
  // TraceOp::Op only: the MLIR op's name, its attributes, its result count (0 or 1).
  std::string name;
  std::vector<TraceAttr> attrs;
  uint8_t results = 1;
};

// A runtime argument of the kernel; its place in the kernarg segment is
// kernarg.hpp's rule.
struct TraceArg {
  enum Kind : uint8_t { Pointer, Int, Float } kind;
  DType dtype;  // pointee type for Pointer
  bool operator==(const TraceArg &) const = default;
};

struct Trace {
  std::string kernelName;
  std::vector<TraceArg> args;    // runtime arguments only (constants are folded)
  std::vector<TraceNode> nodes;  // in program order; Store nodes are effects

  // Stable 64-bit fingerprint of everything above except source locations'
  // file pointers (the file names' text is hashed).
  uint64_t fingerprint() const;
};

} // namespace tessel
