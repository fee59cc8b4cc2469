// device_print, device_assert (traced as tessel.print / tessel.device_assert),
// static_print and static_check (trace time only).
#include "tessel/debug.hpp"

#include "tracer_internal.hpp"

#include <cstdio>
#include <string>

namespace tessel::detail {

namespace {

// A prefix or message goes into the code object as a printf format's text:
// printable ASCII keeps it one line on every host (Triton asks the same).
void checkPrintable(const OpSite &site, std::string_view text, const char *what) {
  for (char c : text)
    if (c < 0x20 || c > 0x7e)
      fail(site, std::string(what) + " must be printable ASCII (no newlines, tabs or other control characters); '" +
                     std::string(text.substr(0, 40)) + "' is not");
}

// Triton's rule for the prefix: it ends in ": " when values follow, and a
// prefix longer than two characters starts with " ".
std::string normalizedPrefix(std::string prefix, bool hasValues) {
  if (hasValues && !prefix.ends_with(" "))
    prefix += " ";
  if (hasValues && !prefix.ends_with(": "))
    prefix = prefix.substr(0, prefix.size() - 1) + ": ";
  if (prefix.size() > 2 && !prefix.starts_with(" "))
    prefix = " " + prefix;
  return prefix;
}

const TraceNode *findNode(const std::vector<TraceNode> &nodes, int32_t id) {
  for (const TraceNode &n : nodes)
    if (n.id == id)
      return &n;
  return nullptr;
}

} // namespace

void emitDevicePrint(const OpSite &site, std::string_view prefix, const std::vector<ValueRef> &tiles) {
  std::vector<Operand> operands;
  operands.reserve(tiles.size());
  for (const ValueRef &t : tiles)
    operands.push_back(Operand::of(t));
  std::vector<const Operand *> pointers;
  for (const Operand &o : operands)
    pointers.push_back(&o);
  TraceContext &ctx = tiles.empty() ? currentContext(site.name, site.loc) : contextOfAll(site, pointers);
  if (ctx.inCombine())
    fail(site, "cannot be used inside a combine function");
  checkPrintable(site, prefix, "the prefix");
  std::vector<int32_t> ids;
  for (const ValueRef &t : tiles)
    ids.push_back(t.id);
  TraceAttr attr{TraceAttr::String, "prefix"};
  attr.text = normalizedPrefix(std::string(prefix), !tiles.empty());
  emitOp(ctx, site, "tessel.print", std::move(ids), DType::I1, false, {}, {attr}, /*results=*/0);
}

void emitDeviceAssert(const OpSite &site, ValueRef cond, std::string_view message) {
  Operand oc = Operand::of(cond);
  TraceContext &ctx = contextOf(site, {&oc});
  if (ctx.inCombine())
    fail(site, "cannot be used inside a combine function");
  checkPrintable(site, message, "the message");
  TraceAttr attr{TraceAttr::String, "message"};
  attr.text = std::string(message);
  emitOp(ctx, site, "tessel.device_assert", {cond.id}, DType::I1, false, {}, {attr}, /*results=*/0);
}

std::string describeValue(ValueRef v) {
  if (!v.ctx)
    return "<empty tile>";
  const TraceType &type = v.ctx->type(v.id);
  std::string text = type.isPtr ? std::string("ptr<") + dtypeName(type.dtype) + ">" : dtypeName(type.dtype);
  text += formatShape(type.shape);
  if (const TraceNode *n = findNode(v.ctx->trace().nodes, v.id)) {
    if (n->op == TraceOp::ConstInt)
      text += " = " + (type.dtype == DType::I1 ? std::string(n->i0 ? "true" : "false") : std::to_string(n->i0));
    else if (n->op == TraceOp::ConstFloat)
      text += " = " + numberText(n->f);
  }
  return text;
}

void writeStaticPrint(SourceLoc loc, const std::string &text) {
  std::string line = std::string(loc.file ? loc.file : "") + ":" + std::to_string(loc.line) + ": static_print: " +
                     text + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

void failStaticCheck(SourceLoc loc, std::string_view message) {
  throw Error(std::string(loc.file ? loc.file : "") + ":" + std::to_string(loc.line) + ": static_check failed" +
              (message.empty() ? std::string() : ": " + std::string(message)));
}

} // namespace tessel::detail
