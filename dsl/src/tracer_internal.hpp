// What the tracer's source files share: shape checks, constants, broadcasting
// and the operand checks every builder starts with. Not installed.
#pragma once

#include "tessel/tracer.hpp"

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace tessel::detail {

std::string formatShape(const Shape &shape);
bool isPowerOfTwo(int64_t v);
// Whether `v` is representable in the integer type `t` (always true for floats).
bool intFits(int64_t v, DType t);

// Error unless a shape of power-of-two dimensions has at most 2^20 elements.
void checkTileElements(const OpSite &site, const Shape &shape);
// Tile shapes the user asks for: powers of two, at most kMaxRank dims, at most 2^20 elements.
void checkTileShape(const OpSite &site, const Shape &shape);
// Inside a combine function every value is a scalar.
void checkRegionScalar(const TraceContext &ctx, const OpSite &site, const Shape &shape);

// The trace all tile operands belong to (null entries and literals skipped),
// after checking each is live and visible where nodes go now.
TraceContext &contextOfAll(const OpSite &site, const std::vector<const Operand *> &operands);
inline TraceContext &contextOf(const OpSite &site, std::initializer_list<const Operand *> operands) {
  return contextOfAll(site, std::vector<const Operand *>(operands));
}

TraceNode makeNode(TraceOp op, DType dtype, bool isPtr, Shape shape, std::vector<int32_t> operands, SourceLoc loc);
// A constant of element type `elem` (scalar unless `shape` is given) from a literal.
int32_t constant(TraceContext &ctx, const OpSite &site, const Operand &lit, DType elem, Shape shape = {});
// The value id of an operand; literals become constants of `elem`.
int32_t materialize(TraceContext &ctx, const OpSite &site, const Operand &o, DType elem);

// numpy/Triton broadcasting of two shapes.
Shape broadcastShapes(const OpSite &site, const Shape &a, const Shape &b);
// Whether `from` grows into `to` by adding leading 1s and growing size-1 dims.
bool broadcastsTo(const Shape &from, const Shape &to);
// Value `id` made to have shape `to` (which it must broadcast to).
int32_t broadcastNode(TraceContext &ctx, const OpSite &site, int32_t id, const Shape &to);

// `axis` (negative counts from the end) as an index into a tile of `shape`.
int64_t normalizeAxis(const OpSite &site, const Shape &shape, int64_t axis);

// The low and high halves of the unsigned product of two integer operands
// of element type `elem` (arith.mului_extended; umulhi is the high half).
std::pair<ValueRef, ValueRef> emitMulExtended(const OpSite &site, Operand a, Operand b, DType elem);

} // namespace tessel::detail
