// The trace: what running a block program once records. It is tessel's
// hand-off from the C++ front end (dsl/) to the compiler (lowering/), kept free
// of MLIR and LLVM so the public headers stay light and a trace can be
// fingerprinted cheaply for the cache key.
//
// A trace is MLIR in all but syntax: almost every node is a generic op that
// names its MLIR op ("arith.addf", "tessel.load", "tessel.reduce") with its
// operands, result types, attributes and regions; the importer builds it by
// name and the op's verifier checks it. Only what MLIR spells differently
// (kernel arguments, constants, a multi-result op's results, a block's
// arguments) has a node kind of its own.
#pragma once

#include "tessel/core/dtype.hpp"
#include "tessel/core/source_loc.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace tessel {

enum class TraceOp : uint8_t {
  Arg,        // i0 = kernel argument index. Scalar or pointer.
  ConstInt,   // i0 = value; shape may be non-empty (a filled tile)
  ConstFloat, // f = value; shape may be non-empty
  // A generic op: `name` is its MLIR name, `attrs` its attributes, `regions`
  // its regions; `results` results (the node's own type when 1, `resultTypes`
  // when more, read through Result nodes).
  Op,
  Result,     // result i0 of the multi-result op operands[0]
  RegionArg,  // argument i0 of the region the node is in (its type is the node's);
              // a region's arguments appear in order, not necessarily first
};

const char *traceOpName(TraceOp op);

// An attribute of a generic op. I64 also carries enum attributes stored as
// integers (arith.cmpi's predicate).
struct TraceAttr {
  enum Kind : uint8_t { I32, I64, Bool, I32Array, String } kind;
  std::string name;             // "axis"
  int64_t value = 0;            // I32, I64, Bool
  std::vector<int64_t> values;  // I32Array
  std::string text = {};        // String (device_print's prefix, device_assert's message)
  bool operator==(const TraceAttr &) const = default;
};

// The type of a traced value: a scalar (empty shape) or a tile.
struct TraceType {
  DType dtype = DType::I32;     // element type; pointee type when isPtr
  bool isPtr = false;
  std::vector<int64_t> shape;
  bool operator==(const TraceType &) const = default;
};

struct TraceNode;
// One region of a generic op, one block: its nodes, among them RegionArg
// nodes (the block's arguments, in order), ending in the terminator (a
// generic op with no result, e.g. "tessel.yield").
using TraceRegion = std::vector<TraceNode>;

// Every value has an id (`TraceNode::id`, unique in the trace): operands name
// ids. The tracer numbers values in the order it records them, which is not
// always the order of the node lists: a loop body's block argument for a
// carried tile is made when the tile is first touched, possibly while an
// inner loop is being traced. A node may use any value that dominates it
// and that its op's verifier allows (a loop body may use the kernel's values,
// a combine function only its own).
struct TraceNode {
  TraceOp op;
  int32_t id = -1;               // the value's id (also for ops with no result)
  DType dtype;                   // element type; pointee type when isPtr
  bool isPtr = false;            // element is a pointer to `dtype`
  std::vector<int64_t> shape;    // empty: scalar
  std::vector<int32_t> operands; // ids of earlier values
  int64_t i0 = 0;
  double f = 0;
  SourceLoc loc;
  // TraceOp::Op only.
  std::string name;
  std::vector<TraceAttr> attrs;
  uint8_t results = 1;
  std::vector<TraceType> resultTypes; // when results > 1
  std::vector<TraceRegion> regions;

  TraceType type() const { return {dtype, isPtr, shape}; }
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
  std::vector<TraceNode> nodes;  // the kernel body, in program order

  // Stable 64-bit fingerprint of everything above except source locations'
  // file pointers (the file names' text is hashed).
  uint64_t fingerprint() const;
};

} // namespace tessel
