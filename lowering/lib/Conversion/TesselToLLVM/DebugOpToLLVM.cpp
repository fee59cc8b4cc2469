// print and device_assert: printf through the ROCm device library
// (`__ockl_printf_begin`, `__ockl_printf_append_string_n`,
// `__ockl_printf_append_args`, as HIP's device printf is lowered). On the GPU
// the HIP runtime services them through the hostcall buffer (a hidden kernel
// argument the code object's metadata lists); the emulator implements the
// same functions. A failed assert prints through `__ockl_fprintf_stderr_begin`
// and executes `llvm.trap`.
#include "PatternTesselOpToLLVM.h"
#include "Utility.h"
#include "tessel/Dialect/Tessel/IR/SourceLine.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include "llvm/ADT/StringExtras.h"

#include <cmath>
#include <string>

using namespace mlir;
using namespace mlir::tessel;

namespace {

// The address space HIP puts string literals in (constant memory).
constexpr unsigned kConstantAddressSpace = 4;
// `__ockl_printf_append_args` takes seven values a call.
constexpr size_t kArgsPerCall = 7;

// A declaration of the device library function `name` in the module.
void declare(OpBuilder &b, ModuleOp module, StringRef name, LLVM::LLVMFunctionType type) {
  if (module.lookupSymbol<LLVM::LLVMFuncOp>(name))
    return;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  b.create<LLVM::LLVMFuncOp>(module.getLoc(), name, type);
}

// `text` plus its NUL as a private constant of the module (one per text);
// a generic pointer to it.
Value stringConstant(OpBuilder &b, Location loc, ModuleOp module, StringRef text) {
  std::string bytes = text.str();
  bytes.push_back('\0');
  auto type = LLVM::LLVMArrayType::get(b.getI8Type(), bytes.size());
  std::string name;
  for (auto global : module.getOps<LLVM::GlobalOp>())
    if (auto value = dyn_cast_or_null<StringAttr>(global.getValueAttr());
        value && value.getValue() == bytes && global.getSymName().starts_with("__tessel_printf_format_"))
      name = global.getSymName().str();
  for (unsigned n = 0; name.empty(); ++n)
    if (std::string candidate = "__tessel_printf_format_" + std::to_string(n); !module.lookupSymbol(candidate))
      name = candidate;
  if (!module.lookupSymbol(name)) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    b.create<LLVM::GlobalOp>(loc, type, /*isConstant=*/true, LLVM::Linkage::Private, name,
                             b.getStringAttr(bytes), /*alignment=*/1, kConstantAddressSpace);
  }
  auto constPtr = LLVM::LLVMPointerType::get(b.getContext(), kConstantAddressSpace);
  Value address = b.create<LLVM::AddressOfOp>(loc, constPtr, name);
  return b.create<LLVM::AddrSpaceCastOp>(loc, LLVM::LLVMPointerType::get(b.getContext()), address);
}

// One printf: `format` with `args` (each already an i64: integers extended,
// floats as the bits of a double, pointers as addresses), on stdout or
// stderr. HIP's lowering of printf makes the same calls.
void emitPrintf(OpBuilder &b, Location loc, ModuleOp module, StringRef format, ArrayRef<Value> args, bool toStderr) {
  MLIRContext *ctx = b.getContext();
  Type i32 = b.getI32Type(), i64 = b.getI64Type(), ptr = LLVM::LLVMPointerType::get(ctx);
  auto beginType = toStderr ? LLVM::LLVMFunctionType::get(i64, {}) : LLVM::LLVMFunctionType::get(i64, {i64});
  auto stringType = LLVM::LLVMFunctionType::get(i64, {i64, ptr, i64, i32});
  SmallVector<Type> argTypes = {i64, i32};
  argTypes.append(kArgsPerCall, i64);
  argTypes.push_back(i32);
  auto argsType = LLVM::LLVMFunctionType::get(i64, argTypes);
  const char *begin = toStderr ? "__ockl_fprintf_stderr_begin" : "__ockl_printf_begin";
  declare(b, module, begin, beginType);
  declare(b, module, "__ockl_printf_append_string_n", stringType);
  declare(b, module, "__ockl_printf_append_args", argsType);

  Value desc = toStderr ? b.create<LLVM::CallOp>(loc, beginType, begin, ValueRange{}).getResult()
                        : b.create<LLVM::CallOp>(loc, beginType, begin,
                                                 ValueRange{b.create<LLVM::ConstantOp>(loc, i64, 0)})
                              .getResult();
  Value text = stringConstant(b, loc, module, format);
  Value length = b.create<LLVM::ConstantOp>(loc, i64, int64_t(format.size() + 1));
  auto flag = [&](bool last) { return b.create<LLVM::ConstantOp>(loc, i32, last ? 1 : 0).getResult(); };
  desc = b.create<LLVM::CallOp>(loc, stringType, "__ockl_printf_append_string_n",
                                ValueRange{desc, text, length, flag(args.empty())})
             .getResult();
  Value zero = b.create<LLVM::ConstantOp>(loc, i64, 0);
  for (size_t first = 0; first < args.size(); first += kArgsPerCall) {
    const size_t n = std::min(kArgsPerCall, args.size() - first);
    SmallVector<Value> operands = {desc, b.create<LLVM::ConstantOp>(loc, i32, int64_t(n))};
    for (size_t i = 0; i < kArgsPerCall; ++i)
      operands.push_back(i < n ? args[first + i] : zero);
    operands.push_back(flag(first + n == args.size()));
    desc = b.create<LLVM::CallOp>(loc, argsType, "__ockl_printf_append_args", operands).getResult();
  }
}

// A value as printf passes it (C's promotions, then 64 bits: what clang's
// AMDGPU printf lowering does), and its conversion.
std::pair<Value, std::string> printfArgument(OpBuilder &b, Location loc, Value v) {
  Type t = v.getType(), i32 = b.getI32Type(), i64 = b.getI64Type();
  if (isa<LLVM::LLVMPointerType>(t))
    return {b.create<LLVM::PtrToIntOp>(loc, i64, v), "%p"};
  if (auto f = dyn_cast<FloatType>(t)) {
    Value d = f.getWidth() == 64 ? v : b.create<LLVM::FPExtOp>(loc, b.getF64Type(), v).getResult();
    return {b.create<LLVM::BitcastOp>(loc, i64, d), "%f"};
  }
  auto integer = cast<IntegerType>(t);
  if (integer.getWidth() == 64)
    return {v, "%lli"};
  Value widened = v;
  if (integer.getWidth() == 1)
    widened = b.create<LLVM::ZExtOp>(loc, i32, v); // bools print 0 and 1
  else if (integer.getWidth() < 32)
    widened = b.create<LLVM::SExtOp>(loc, i32, v);
  return {b.create<LLVM::ZExtOp>(loc, i64, widened), "%i"};
}

Value programIdArgument(OpBuilder &b, Location loc, const TargetInfo &target, unsigned axis) {
  return b.create<LLVM::ZExtOp>(loc, b.getI64Type(), target.programId(b, loc, axis));
}

// printf's arguments for "pid (%i, %i, %i) idx (...)": the program ids, then
// an element's coordinates.
SmallVector<Value> pidAndIndexArguments(OpBuilder &b, Location loc, const TargetInfo &target,
                                        ArrayRef<Value> coords) {
  SmallVector<Value> args;
  for (unsigned axis = 0; axis < 3; ++axis)
    args.push_back(programIdArgument(b, loc, target, axis));
  for (Value c : coords)
    args.push_back(b.create<LLVM::ZExtOp>(loc, b.getI64Type(), c));
  return args;
}

// "%i, %3i": an index's format, each dim as wide as its largest index (Triton's).
std::string indexFormat(ArrayRef<int64_t> shape) {
  std::string format;
  for (size_t d = 0; d < shape.size(); ++d) {
    const int width = shape[d] > 1 ? int(std::ceil(std::log10(double(shape[d])))) : 1;
    format += (d ? ", %" : "%") + std::to_string(width) + "i";
  }
  return format;
}

// printf text stands for itself: '%' doubled.
std::string literal(StringRef text) {
  std::string out;
  for (char c : text) {
    out += c;
    if (c == '%')
      out += '%';
  }
  return out;
}

struct PrintOpConversion : TesselOpToLLVMPattern<PrintOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;
  LogicalResult matchAndRewrite(PrintOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto module = op->getParentOfType<ModuleOp>();
    const std::string prefix = literal(op.getPrefix());
    if (op.getValues().empty()) {
      // One line per program, from its first thread.
      Value first = rewriter.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::eq, target.threadId(rewriter, loc),
                                                  i32Value(rewriter, loc, 0));
      predicated(rewriter, loc, first, {}, [&]() -> Value {
        emitPrintf(rewriter, loc, module, "pid (%i, %i, %i)" + prefix + "\n",
                   pidAndIndexArguments(rewriter, loc, target, {}), false);
        return {};
      });
      rewriter.eraseOp(op);
      return success();
    }
    const size_t numOperands = op.getValues().size();
    for (size_t i = 0; i < numOperands; ++i) {
      Value operand = op.getValues()[i];
      ValueRange registers = adaptor.getValues()[i];
      auto tile = dyn_cast<RankedTensorType>(operand.getType());
      const std::string index = tile ? indexFormat(tile.getShape()) : "";
      const std::string operandText = numOperands > 1 ? "(operand " + std::to_string(i) + ") " : "";
      onlyOwners(rewriter, loc, target, operand.getType(), [&] {
        SmallVector<SmallVector<Value>> coords = emitRegisterCoords(rewriter, loc, target, operand.getType());
        for (size_t r = 0; r < registers.size(); ++r) {
          SmallVector<Value> args = pidAndIndexArguments(rewriter, loc, target, coords[r]);
          auto [value, conversion] = printfArgument(rewriter, loc, registers[r]);
          args.push_back(value);
          emitPrintf(rewriter, loc, module,
                     "pid (%i, %i, %i) idx (" + index + ")" + prefix + operandText + conversion + "\n", args,
                     false);
        }
      });
    }
    rewriter.eraseOp(op);
    return success();
  }
};


struct DeviceAssertOpConversion : TesselOpToLLVMPattern<DeviceAssertOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;
  LogicalResult matchAndRewrite(DeviceAssertOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto module = op->getParentOfType<ModuleOp>();
    Type condType = op.getCond().getType();
    auto tile = dyn_cast<RankedTensorType>(condType);
    std::string where = sourceLineText(loc);
    std::string format = literal(where.empty() ? "device_assert failed" : where + ": device_assert failed");
    if (!op.getMessage().empty())
      format += ": " + literal(op.getMessage());
    format += ": pid (%i, %i, %i)";
    if (tile)
      format += " idx (" + indexFormat(tile.getShape()) + ")";
    format += "\n";
    ValueRange registers = adaptor.getCond();
    onlyOwners(rewriter, loc, target, condType, [&] {
      SmallVector<SmallVector<Value>> coords = emitRegisterCoords(rewriter, loc, target, condType);
      Value yes = rewriter.create<LLVM::ConstantOp>(loc, rewriter.getI1Type(), 1);
      for (size_t r = 0; r < registers.size(); ++r) {
        Value failed = rewriter.create<LLVM::XOrOp>(loc, registers[r], yes);
        predicated(rewriter, loc, failed, {}, [&]() -> Value {
          emitPrintf(rewriter, loc, module, format, pidAndIndexArguments(rewriter, loc, target, coords[r]),
                     /*toStderr=*/true);
          rewriter.create<LLVM::Trap>(loc);
          return {};
        });
      }
    });
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::tessel::populateDebugOpToLLVMPatterns(const TesselToLLVMTypeConverter &converter,
                                                 const TargetInfo &target, RewritePatternSet &patterns) {
  patterns.add<PrintOpConversion, DeviceAssertOpConversion>(converter, target);
}
