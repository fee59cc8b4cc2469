// Retargeting an AMDGPU kernel module to the host (DESIGN principle 1: the
// emulator runs the same module that becomes the code object). x86 code
// generation accepts addrspace(1)/(3)/(4)/(5) pointers unchanged, so the work
// is: AMDGPU intrinsics -> emulator runtime calls (one table), LDS globals ->
// offsets into the workgroup's LDS block, private allocas -> host allocas,
// trapping integer division -> GPU-like non-trapping division, float-to-int
// conversions -> the GPU's saturating ones, AMDGPU calling
// conventions and attributes -> host ones, and an entry that unpacks kernarg.
#include "emulator_retarget.hpp"

#include "emulator_runtime.hpp"
#include "emulator_wave.hpp"

#include "tessel/lowering/target.hpp"

#include <llvm/ADT/StringRef.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DataLayout.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/CallingConv.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/ReplaceConstant.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Triple.h>

#include <algorithm>
#include <map>
#include <vector>

namespace tessel::emu {
namespace {

using llvm::CallInst;
using llvm::Function;
using llvm::IRBuilder;
using llvm::Module;
using llvm::Type;
using llvm::Value;

constexpr unsigned kLdsAddressSpace = 3;

// How one AMDGPU intrinsic becomes emulator runtime code.
using CustomRewrite = void (*)(CallInst &call, Module &module);
struct IntrinsicRule {
  const char *intrinsic;       // exact name, or the prefix of an overloaded one
  bool overloaded;             // name continues with type suffixes (.i32, .f32, ...)
  const char *runtimeFunction; // same signature: calls are redirected to it
  bool pure;                   // reads nothing that changes within one thread
  bool needsFibers;            // synchronizes threads: run the workgroup as fibers
  CustomRewrite rewrite;       // when the runtime function's signature differs
};

void rewriteDpp(CallInst &call, Module &module);
void rewritePermlaneX16(CallInst &call, Module &module);
void rewriteReadlane(CallInst &call, Module &module);
void rewriteMatrix(CallInst &call, Module &module);
void rewriteFp8Conversion(CallInst &call, Module &module);
bool fp8IsOcp(CallInst &call);
void eraseCall(CallInst &call, Module &) { call.eraseFromParent(); }
// ballot.i64(i1) / ballot.i32(i1): the wave's bits, from the runtime's i64.
void rewriteBallot(CallInst &call, Module &module) {
  IRBuilder<> b(&call);
  auto callee = module.getOrInsertFunction("tessel_emu_ballot", b.getInt64Ty(), b.getInt32Ty());
  Value *bits = b.CreateCall(callee, {b.CreateZExt(call.getArgOperand(0), b.getInt32Ty())});
  call.replaceAllUsesWith(b.CreateTrunc(bits, call.getType()));
  call.eraseFromParent();
}

// ds.read.tr8.b64 / ds.read.tr16.b64 (gfx950's LDS transpose loads): this
// lane's 8 bytes at its LDS address (an ordinary load, which the sanitizer
// checks), then the wave's exchange (tessel_emu_ds_read_tr).
void rewriteDsReadTranspose(CallInst &call, Module &module) {
  IRBuilder<> b(&call);
  const int32_t elemBytes = call.getCalledFunction()->getName().starts_with("llvm.amdgcn.ds.read.tr8.") ? 1 : 2;
  Value *loaded = b.CreateAlignedLoad(b.getInt64Ty(), call.getArgOperand(0), llvm::Align(8));
  auto callee = module.getOrInsertFunction("tessel_emu_ds_read_tr", b.getInt64Ty(), b.getInt64Ty(), b.getInt32Ty());
  Value *result = b.CreateCall(callee, {loaded, b.getInt32(elemBytes)});
  call.replaceAllUsesWith(b.CreateBitCast(result, call.getType()));
  call.eraseFromParent();
}

// The AMDGPU intrinsics the emulator runs. Anything else named
// llvm.amdgcn.* is an error that names it.
const IntrinsicRule kIntrinsicRules[] = {
    {"llvm.amdgcn.workitem.id.x", false, "tessel_emu_workitem_id_x", true, false, nullptr},
    {"llvm.amdgcn.workitem.id.y", false, "tessel_emu_workitem_id_y", true, false, nullptr},
    {"llvm.amdgcn.workitem.id.z", false, "tessel_emu_workitem_id_z", true, false, nullptr},
    {"llvm.amdgcn.workgroup.id.x", false, "tessel_emu_workgroup_id_x", true, false, nullptr},
    {"llvm.amdgcn.workgroup.id.y", false, "tessel_emu_workgroup_id_y", true, false, nullptr},
    {"llvm.amdgcn.workgroup.id.z", false, "tessel_emu_workgroup_id_z", true, false, nullptr},
    {"llvm.amdgcn.dispatch.ptr", false, "tessel_emu_dispatch_ptr", true, false, nullptr},
    {"llvm.amdgcn.implicitarg.ptr", false, "tessel_emu_implicitarg_ptr", true, false, nullptr},
    {"llvm.amdgcn.s.barrier", false, "tessel_emu_barrier", false, true, nullptr},
    {"llvm.amdgcn.wave.barrier", false, "tessel_emu_wave_barrier", false, true, nullptr},
    {"llvm.amdgcn.ds.bpermute", false, "tessel_emu_ds_bpermute", false, true, nullptr},
    {"llvm.amdgcn.ds.read.tr8.b64", true, nullptr, false, true, &rewriteDsReadTranspose},
    {"llvm.amdgcn.ds.read.tr16.b64", true, nullptr, false, true, &rewriteDsReadTranspose},
    {"llvm.amdgcn.readfirstlane.i32", false, "tessel_emu_readfirstlane", false, true, nullptr},
    {"llvm.amdgcn.readlane", true, nullptr, false, true, &rewriteReadlane},
    {"llvm.amdgcn.ballot", true, nullptr, false, true, &rewriteBallot},
    {"llvm.amdgcn.exp2.f32", false, "tessel_emu_exp2_f32", true, false, nullptr},
    {"llvm.amdgcn.rsq.f32", false, "tessel_emu_rsq_f32", true, false, nullptr},
    {"llvm.amdgcn.update.dpp", true, nullptr, false, true, &rewriteDpp},
    {"llvm.amdgcn.mov.dpp", true, nullptr, false, true, &rewriteDpp},
    {"llvm.amdgcn.permlanex16", true, nullptr, false, true, &rewritePermlaneX16},
    {"llvm.amdgcn.mfma", true, nullptr, false, true, &rewriteMatrix},
    {"llvm.amdgcn.wmma", true, nullptr, false, true, &rewriteMatrix},
    // Before raw.ptr.buffer.load, whose name is its prefix.
    {"llvm.amdgcn.raw.ptr.buffer.load.lds", false, nullptr, false, false, &rewriteBufferLoadToLds},
    {"llvm.amdgcn.raw.ptr.buffer.load", true, nullptr, false, false, &rewriteBufferLoad},
    {"llvm.amdgcn.raw.ptr.buffer.store", true, nullptr, false, false, &rewriteBufferStore},
    // A load to LDS has written it when it returns: nothing to wait for.
    {"llvm.amdgcn.s.waitcnt", false, nullptr, false, false, &eraseCall},
    // Last: its users, the loads and stores above, are rewritten first.
    {"llvm.amdgcn.make.buffer.rsrc", true, nullptr, false, false, &rewriteBufferResource},
    {"llvm.amdgcn.cvt.pk.fp8.f32", false, nullptr, true, false, &rewriteFp8Conversion},
    {"llvm.amdgcn.cvt.pk.bf8.f32", false, nullptr, true, false, &rewriteFp8Conversion},
    {"llvm.amdgcn.cvt.f32.fp8", false, nullptr, true, false, &rewriteFp8Conversion},
    {"llvm.amdgcn.cvt.f32.bf8", false, nullptr, true, false, &rewriteFp8Conversion},
};

const IntrinsicRule *findRule(llvm::StringRef name) {
  for (const IntrinsicRule &rule : kIntrinsicRules) {
    llvm::StringRef ruleName(rule.intrinsic);
    if (name == ruleName || (rule.overloaded && name.starts_with(ruleName) &&
                             name.size() > ruleName.size() && name[ruleName.size()] == '.'))
      return &rule;
  }
  return nullptr;
}

// A value of a 32- or 64-bit type as an integer of `bits`, and back.
Value *toBits(IRBuilder<> &b, Value *v, unsigned bits) {
  Type *intTy = b.getIntNTy(bits);
  if (v->getType()->isPointerTy())
    return b.CreatePtrToInt(v, intTy);
  if (!v->getType()->isIntegerTy())
    v = b.CreateBitCast(v, b.getIntNTy(v->getType()->getPrimitiveSizeInBits()));
  return b.CreateZExtOrTrunc(v, intTy);
}
Value *fromBits(IRBuilder<> &b, Value *v, Type *type) {
  if (type->isPointerTy())
    return b.CreateIntToPtr(v, type);
  Type *sameWidth = b.getIntNTy(type->getPrimitiveSizeInBits());
  v = b.CreateZExtOrTrunc(v, sameWidth);
  return type->isIntegerTy() ? v : b.CreateBitCast(v, type);
}

// update.dpp(old, src, ctrl, row_mask, bank_mask, bound_ctrl) and
// mov.dpp(src, ctrl, row_mask, bank_mask, bound_ctrl) on any 32/64-bit type.
void rewriteDpp(CallInst &call, Module &module) {
  const bool isUpdate = call.arg_size() == 6;
  Type *type = call.getType();
  unsigned width = type->isPointerTy() ? 64 : type->getPrimitiveSizeInBits().getFixedValue();
  if (width == 0 || width > 64)
    throw Error("the emulator does not support " + call.getCalledFunction()->getName().str() +
                " on this type");
  const unsigned bits = width <= 32 ? 32 : 64;
  IRBuilder<> b(&call);
  Type *intTy = b.getIntNTy(bits), *i32 = b.getInt32Ty();
  auto callee = module.getOrInsertFunction(
      bits == 32 ? "tessel_emu_update_dpp_b32" : "tessel_emu_update_dpp_b64", intTy, intTy, intTy,
      i32, i32, i32, i32);
  unsigned first = isUpdate ? 1 : 0;
  Value *src = toBits(b, call.getArgOperand(first), bits);
  Value *old = isUpdate ? toBits(b, call.getArgOperand(0), bits) : src;
  Value *ctrl = b.CreateZExtOrTrunc(call.getArgOperand(first + 1), i32);
  Value *rowMask = b.CreateZExtOrTrunc(call.getArgOperand(first + 2), i32);
  Value *bankMask = b.CreateZExtOrTrunc(call.getArgOperand(first + 3), i32);
  Value *bound = b.CreateZExt(call.getArgOperand(first + 4), i32);
  Value *result = b.CreateCall(callee, {old, src, ctrl, rowMask, bankMask, bound});
  call.replaceAllUsesWith(fromBits(b, result, type));
  call.eraseFromParent();
}

// A cross-lane intrinsic on a 32-bit type as a call of `runtime`, which
// takes every operand as an i32: the data operands (`data`, by index) as
// their bits, the others (lane numbers, selects, flags) zero-extended.
void rewriteAs32BitCall(CallInst &call, Module &module, const char *runtime,
                        std::initializer_list<unsigned> data) {
  Type *type = call.getType();
  if (type->isPointerTy() || type->getPrimitiveSizeInBits().getFixedValue() != 32)
    throw Error("the emulator supports " + call.getCalledFunction()->getName().str() +
                " on 32-bit types only");
  IRBuilder<> b(&call);
  Type *i32 = b.getInt32Ty();
  std::vector<Value *> args;
  for (unsigned i = 0; i < call.arg_size(); ++i) {
    Value *arg = call.getArgOperand(i);
    bool isData = std::find(data.begin(), data.end(), i) != data.end();
    args.push_back(isData ? toBits(b, arg, 32) : b.CreateZExtOrTrunc(arg, i32));
  }
  std::vector<Type *> params(args.size(), i32);
  auto callee = module.getOrInsertFunction(runtime, llvm::FunctionType::get(i32, params, false));
  Value *result = b.CreateCall(callee, args);
  call.replaceAllUsesWith(fromBits(b, result, type));
  call.eraseFromParent();
}

// permlanex16(old, src, sel1, sel2, fi, bound_ctrl).
void rewritePermlaneX16(CallInst &call, Module &module) {
  rewriteAs32BitCall(call, module, "tessel_emu_permlanex16", {0, 1});
}

// readlane(src, lane).
void rewriteReadlane(CallInst &call, Module &module) {
  rewriteAs32BitCall(call, module, "tessel_emu_readlane", {0});
}

// An MFMA or WMMA intrinsic: its operands go to memory (allocas at the
// function's entry) and tessel_emu_matrix computes the wave's product
// (emulator_matrix.cpp), with the lane's scale registers (zero when the
// instruction takes none). Only the forms the compiler emits are accepted
// (matrixOperands checks them): MFMA with cbsz = abid = blgp = 0, but the
// f8f6f4 forms, whose cbsz / blgp name A's / B's 8- or 4-bit format; WMMA iu8
// without clamp.
void rewriteMatrix(CallInst &call, Module &module) {
  const auto [id, flags, a, bValue, c, scaleA, scaleB] = matrixOperands(call);
  Function &fn = *call.getFunction();
  unsigned allocaSpace = module.getDataLayout().getAllocaAddrSpace();
  IRBuilder<> entry(&fn.getEntryBlock(), fn.getEntryBlock().begin());
  IRBuilder<> b(&call);
  Type *ptr = b.getPtrTy();
  auto slot = [&](Type *type) {
    llvm::AllocaInst *alloca = entry.CreateAlloca(type, allocaSpace, nullptr);
    return allocaSpace == 0 ? static_cast<Value *>(alloca) : b.CreateAddrSpaceCast(alloca, ptr);
  };
  Value *pa = slot(a->getType()), *pb = slot(bValue->getType()), *pc = slot(c->getType()), *pd = slot(call.getType());
  b.CreateStore(a, pa);
  b.CreateStore(bValue, pb);
  b.CreateStore(c, pc);
  auto callee = module.getOrInsertFunction("tessel_emu_matrix", b.getVoidTy(), b.getInt32Ty(), b.getInt32Ty(), ptr,
                                           ptr, ptr, ptr, b.getInt32Ty(), b.getInt32Ty());
  b.CreateCall(callee, {b.getInt32(uint32_t(id)), b.getInt32(flags), pa, pb, pc, pd,
                        scaleA ? scaleA : b.getInt32(0), scaleB ? scaleB : b.getInt32(0)});
  call.replaceAllUsesWith(b.CreateLoad(call.getType(), pd));
  call.eraseFromParent();
}

// Whether the 8-bit floats of `call` (an fp8/bf8 conversion or MFMA) are
// OCP's (gfx950) or FNUZ (gfx942), by the kernel's target; an error on a
// target without such instructions.
bool fp8IsOcp(CallInst &call) {
  const std::string arch = kernelArch(*call.getFunction());
  const TargetFacts *target = lookupTarget(arch);
  if (!target || target->fp8Conversions == Fp8Family::None)
    throw Error("the emulator: '" + call.getCalledFunction()->getName().str() + "' is not an instruction of " +
                (arch.empty() ? "this target" : arch));
  return target->fp8Conversions == Fp8Family::Ocp;
}

// The 8-bit float conversions: a runtime call with the encoding the
// kernel's target converts (gfx942 FNUZ, gfx950 OCP).
void rewriteFp8Conversion(CallInst &call, Module &module) {
  const std::string name = call.getCalledFunction()->getName().str();
  const bool ocp = fp8IsOcp(call);
  const bool bf8 = llvm::StringRef(name).contains("bf8");
  const Fp8Encoding encoding = bf8 ? (ocp ? Fp8Encoding::E5M2Ocp : Fp8Encoding::E5M2Fnuz)
                                   : (ocp ? Fp8Encoding::E4M3Ocp : Fp8Encoding::E4M3Fnuz);
  IRBuilder<> b(&call);
  Type *i32 = b.getInt32Ty(), *f32 = b.getFloatTy();
  Value *result;
  if (llvm::StringRef(name).starts_with("llvm.amdgcn.cvt.pk.")) { // (a, b, old, word_sel)
    auto callee = module.getOrInsertFunction("tessel_emu_cvt_pk_fp8_f32", i32, f32, f32, i32, i32, i32);
    result = b.CreateCall(callee, {call.getArgOperand(0), call.getArgOperand(1), call.getArgOperand(2),
                                   b.CreateZExt(call.getArgOperand(3), i32), b.getInt32(uint32_t(encoding))});
  } else { // (src, byte_sel)
    auto callee = module.getOrInsertFunction("tessel_emu_cvt_f32_fp8", f32, i32, i32, i32);
    result = b.CreateCall(callee, {call.getArgOperand(0), call.getArgOperand(1), b.getInt32(uint32_t(encoding))});
  }
  llvm::cast<CallInst>(result)->setDoesNotAccessMemory();
  call.replaceAllUsesWith(result);
  call.eraseFromParent();
}

} // namespace

std::string kernelArch(const llvm::Function &fn) {
  llvm::Attribute cpu = fn.getFnAttribute("target-cpu");
  if (cpu.isValid() && !cpu.getValueAsString().empty())
    return cpu.getValueAsString().str();
  if (auto *flag = llvm::dyn_cast_or_null<llvm::MDString>(fn.getParent()->getModuleFlag(kArchFlag)))
    return flag->getString().str();
  return "";
}

MatrixOperands matrixOperands(CallInst &call) {
  MatrixOperands m;
  int &id = m.id;
  uint32_t &flags = m.flags;
  Value *&a = m.a, *&bValue = m.b, *&c = m.c;
  const std::string name = call.getCalledFunction()->getName().str();
  id = matrixInstructionId(name);
  if (id < 0)
    throw Error("the emulator does not support the AMDGPU intrinsic '" + name + "'");
  auto constantArg = [&](unsigned i, const char *what) -> uint64_t {
    auto *c = llvm::dyn_cast<llvm::ConstantInt>(call.getArgOperand(i));
    if (!c)
      throw Error("the emulator needs a constant " + std::string(what) + " for '" + name + "'");
    return c->getZExtValue();
  };
  const bool wmma = llvm::StringRef(name).starts_with("llvm.amdgcn.wmma");
  const bool iu8 = llvm::StringRef(name).starts_with("llvm.amdgcn.wmma.i32.16x16x16.iu8");
  flags = 0;
  if (iu8) { // (A signed, A, B signed, B, C, clamp)
    a = call.getArgOperand(1);
    bValue = call.getArgOperand(3);
    c = call.getArgOperand(4);
    flags = (constantArg(0, "A sign") ? 0 : 1) | (constantArg(2, "B sign") ? 0 : 2);
    if (constantArg(5, "clamp"))
      throw Error("the emulator supports '" + name + "' without clamp only");
  } else if (matrixFormatOperands(id)) {
    // llvm.amdgcn.mfma.scale.*.f8f6f4 (A, B, C, cbsz, blgp, A's scale byte
    // select, A's scale, B's select, B's scale): cbsz and blgp are A's and
    // B's formats. Constant zero scales on both sides are the unscaled
    // instruction (LLVM selects V_MFMA_*_F8F6F4 for them); any other scales
    // are V_MFMA_SCALE_*: each lane's scale register, the byte its select
    // names (0-3), in flags bit 9 (scaled) and bits 10-11, 12-13.
    a = call.getArgOperand(0);
    bValue = call.getArgOperand(1);
    c = call.getArgOperand(2);
    flags |= fp8IsOcp(call) ? 4 : 0;
    // Formats 0 E4M3 and 1 E5M2 take 8 VGPRs, 4 E2M1 (FP4) 4: an operand
    // may be larger (LLVM's verifier allows it; the registers past those
    // are not read), never smaller. FP6 (2, 3) is not run.
    for (unsigned i : {3u, 4u}) {
      const char *what = i == 3 ? "cbsz" : "blgp";
      const uint64_t format = constantArg(i, what);
      if (format != 0 && format != 1 && format != 4)
        throw Error("the emulator runs '" + name + "' on E4M3, E5M2 and E2M1 (formats 0, 1 and 4) only; " + what +
                    " is " + std::to_string(format) + (format < 4 ? " (FP6)" : ""));
      Value *operand = call.getArgOperand(i - 3);
      const uint64_t bytes = call.getModule()->getDataLayout().getTypeStoreSize(operand->getType());
      const uint64_t needs = format == 4 ? 16 : 32;
      if (bytes < needs)
        throw Error("the emulator: '" + name + "' with " + what + " " + std::to_string(format) + " reads " +
                    std::to_string(needs) + " bytes of " + (i == 3 ? "A" : "B") + ", which has " +
                    std::to_string(bytes));
      flags |= uint32_t(format) << (i == 3 ? 3 : 6);
    }
    auto isZero = [&](unsigned i) {
      auto *scale = llvm::dyn_cast<llvm::ConstantInt>(call.getArgOperand(i));
      return scale && scale->isZero();
    };
    if (!isZero(6) || !isZero(8)) {
      const uint64_t selA = constantArg(5, "A scale byte select"), selB = constantArg(7, "B scale byte select");
      if (selA > 3 || selB > 3)
        throw Error("the emulator: '" + name + "' selects scale bytes 0-3, not " +
                    std::to_string(selA > 3 ? selA : selB));
      flags |= 1u << 9 | uint32_t(selA) << 10 | uint32_t(selB) << 12;
      m.scaleA = call.getArgOperand(6);
      m.scaleB = call.getArgOperand(8);
    }
  } else {
    a = call.getArgOperand(0);
    bValue = call.getArgOperand(1);
    c = call.getArgOperand(2);
    if (llvm::StringRef(name).contains("8.fp8") || llvm::StringRef(name).contains("8.bf8"))
      flags |= fp8IsOcp(call) ? 4 : 0; // the 8-bit float MFMAs: FNUZ or OCP by target
    if (!wmma)
      for (unsigned i = 3; i < 6; ++i)
        if (uint64_t v = constantArg(i, i == 3 ? "cbsz" : i == 4 ? "abid" : "blgp"))
          throw Error("the emulator supports '" + name + "' with cbsz = abid = blgp = 0 only (" +
                      (i == 3 ? "cbsz" : i == 4 ? "abid" : "blgp") + " is " + std::to_string(v) + ")");
  }
  return m;
}

bool synchronizesWave(llvm::StringRef name) {
  const IntrinsicRule *rule = findRule(name);
  return rule && rule->needsFibers;
}

namespace {

// AMDGPU intrinsics -> runtime calls. Returns whether fibers are needed.
bool rewriteAmdgpuIntrinsics(Module &module, const std::string &kernelName) {
  bool needsFibers = false;
  std::vector<Function *> intrinsics;
  for (Function &f : module)
    if (f.getName().starts_with("llvm.amdgcn."))
      intrinsics.push_back(&f);
  // In the table's order: a rule may consume values another one makes.
  auto order = [](Function *f) {
    const IntrinsicRule *rule = findRule(f->getName());
    return rule ? rule - kIntrinsicRules : -1;
  };
  std::stable_sort(intrinsics.begin(), intrinsics.end(),
                   [&](Function *a, Function *b) { return order(a) < order(b); });
  for (Function *intrinsic : intrinsics) {
    const IntrinsicRule *rule = findRule(intrinsic->getName());
    if (!rule)
      throw Error("the emulator does not support the AMDGPU intrinsic '" +
                  intrinsic->getName().str() + "' (used by kernel '" + kernelName + "')");
    needsFibers |= rule->needsFibers && !intrinsic->use_empty();
    std::vector<CallInst *> calls;
    for (llvm::User *user : intrinsic->users())
      if (auto *call = llvm::dyn_cast<CallInst>(user); call && call->getCalledFunction() == intrinsic)
        calls.push_back(call);
      else
        throw Error("kernel '" + kernelName + "' uses '" + intrinsic->getName().str() +
                    "' other than by calling it");
    if (rule->rewrite) {
      for (CallInst *call : calls)
        rule->rewrite(*call, module);
    } else {
      Function *runtime = Function::Create(intrinsic->getFunctionType(),
                                           Function::ExternalLinkage, rule->runtimeFunction, module);
      if (Function *existing = module.getFunction(rule->runtimeFunction); existing != runtime) {
        runtime->eraseFromParent();
        runtime = existing;
      }
      runtime->addFnAttr(llvm::Attribute::NoUnwind);
      if (rule->pure) {
        runtime->setDoesNotAccessMemory();
        runtime->setWillReturn();
      }
      for (CallInst *call : calls) {
        call->setCalledFunction(runtime);
        call->setAttributes({}); // the intrinsic's attributes (immarg, ...) are not ours
      }
    }
    intrinsic->eraseFromParent();
  }
  return needsFibers;
}

// llvm.trap (a failed device_assert) stops the workgroup through the
// runtime, which reports it as the launch's error; on x86 it would be ud2.
void rewriteTraps(Module &module) {
  Function *trap = module.getFunction("llvm.trap");
  if (!trap)
    return;
  auto runtime = module.getOrInsertFunction("tessel_emu_trap", llvm::FunctionType::get(Type::getVoidTy(module.getContext()), false));
  auto *callee = llvm::cast<Function>(runtime.getCallee());
  callee->setDoesNotReturn();
  callee->addFnAttr(llvm::Attribute::NoUnwind);
  std::vector<CallInst *> calls;
  for (llvm::User *user : trap->users())
    if (auto *call = llvm::dyn_cast<CallInst>(user))
      calls.push_back(call);
  for (CallInst *call : calls) {
    CallInst *replacement = CallInst::Create(runtime, "", call->getIterator());
    replacement->setDoesNotReturn();
    call->eraseFromParent();
  }
  if (trap->use_empty())
    trap->eraseFromParent();
}

// Every remaining external symbol must be one the emulator provides:
// kernels call no malloc (DESIGN principle 2).
void checkExternalSymbols(Module &module, const std::string &kernelName) {
  for (Function &f : module) {
    if (!f.isDeclaration() || f.isIntrinsic() || f.getName().starts_with("tessel_emu_"))
      continue;
    if (f.getName().starts_with("__ocml_") || f.getName().starts_with("__ockl_")) {
      if (!findDeviceLibraryFunction(f.getName().str()))
        throw Error("the emulator has no host version of the device library function '" +
                    f.getName().str() + "' (called by kernel '" + kernelName + "')");
      continue;
    }
    throw Error("kernel '" + kernelName + "' calls the external function '" + f.getName().str() +
                "'; kernels may call only __ocml_*/__ockl_* device library functions");
  }
  for (llvm::GlobalVariable &g : module.globals())
    if (g.isDeclaration() && g.getAddressSpace() != kLdsAddressSpace)
      throw Error("kernel '" + kernelName + "' refers to the external variable '" +
                  g.getName().str() + "'");
}

// x86 traps on x / 0 and INT_MIN / -1; the GPU does not, and masked-off lanes
// compute such divisions. Quotient by zero is all ones, remainder by zero is
// the dividend (what the AMDGPU expansion gives); INT_MIN / -1 wraps.
void rewriteIntegerDivision(Module &module) {
  std::vector<llvm::BinaryOperator *> divisions;
  for (Function &f : module)
    for (llvm::Instruction &inst : llvm::instructions(f))
      if (auto *op = llvm::dyn_cast<llvm::BinaryOperator>(&inst))
        switch (op->getOpcode()) {
        case llvm::Instruction::UDiv: case llvm::Instruction::SDiv:
        case llvm::Instruction::URem: case llvm::Instruction::SRem:
          divisions.push_back(op);
          break;
        default:
          break;
        }
  for (llvm::BinaryOperator *op : divisions) {
    IRBuilder<> b(op);
    Type *type = op->getType();
    Value *dividend = op->getOperand(0), *divisor = op->getOperand(1);
    const unsigned bits = type->getScalarSizeInBits();
    const auto opcode = op->getOpcode();
    const bool isSigned = opcode == llvm::Instruction::SDiv || opcode == llvm::Instruction::SRem;
    const bool isDiv = opcode == llvm::Instruction::UDiv || opcode == llvm::Instruction::SDiv;
    Value *byZero = b.CreateICmpEQ(divisor, llvm::Constant::getNullValue(type));
    Value *unsafe = byZero;
    if (isSigned) {
      Value *minDividend = b.CreateICmpEQ(
          dividend, llvm::ConstantInt::get(type, llvm::APInt::getSignedMinValue(bits)));
      Value *minusOne = b.CreateICmpEQ(divisor, llvm::Constant::getAllOnesValue(type));
      unsafe = b.CreateOr(byZero, b.CreateAnd(minDividend, minusOne));
    }
    Value *safeDivisor = b.CreateSelect(unsafe, llvm::ConstantInt::get(type, 1), divisor);
    Value *result = b.CreateBinOp(opcode, dividend, safeDivisor);
    result = b.CreateSelect(byZero, isDiv ? llvm::Constant::getAllOnesValue(type) : dividend, result);
    op->replaceAllUsesWith(result);
    op->eraseFromParent();
  }
}

// Private (addrspace 5) allocas become host stack allocas; users keep their
// addrspace(5) pointer through a no-op cast.
void moveAllocasToHostStack(Module &module) {
  std::vector<llvm::AllocaInst *> allocas;
  for (Function &f : module)
    for (llvm::Instruction &inst : llvm::instructions(f))
      if (auto *alloca = llvm::dyn_cast<llvm::AllocaInst>(&inst);
          alloca && alloca->getAddressSpace() != 0)
        allocas.push_back(alloca);
  for (llvm::AllocaInst *old : allocas) {
    auto *host = new llvm::AllocaInst(old->getAllocatedType(), 0, old->getArraySize(),
                                      old->getAlign(), old->getName(), old->getIterator());
    auto *cast = llvm::AddrSpaceCastInst::Create(llvm::Instruction::AddrSpaceCast, host,
                                                 old->getType(), "", old->getIterator());
    old->replaceAllUsesWith(cast);
    old->eraseFromParent();
  }
}

// addrspace(3) globals become offsets into the workgroup's LDS block, which
// the runtime hands out per workgroup. Returns the bytes they need.
uint32_t lowerLdsGlobals(Module &module, const llvm::DataLayout &deviceLayout) {
  // llvm.used & co. only keep symbols alive in a code object.
  for (const char *name : {"llvm.used", "llvm.compiler.used"})
    if (llvm::GlobalVariable *g = module.getGlobalVariable(name))
      g->eraseFromParent();
  std::vector<llvm::GlobalVariable *> lds;
  for (llvm::GlobalVariable &g : module.globals())
    if (g.getAddressSpace() == kLdsAddressSpace)
      lds.push_back(&g);
  if (lds.empty())
    return 0;
  std::vector<llvm::Constant *> asConstants(lds.begin(), lds.end());
  llvm::convertUsersOfConstantsToInstructions(asConstants);

  uint64_t offset = 0;
  llvm::LLVMContext &ctx = module.getContext();
  auto *ldsPtr = llvm::PointerType::get(ctx, kLdsAddressSpace);
  auto ldsBase = module.getOrInsertFunction("tessel_emu_lds_base", ldsPtr);
  if (auto *f = llvm::dyn_cast<Function>(ldsBase.getCallee())) {
    f->setDoesNotAccessMemory();
    f->addFnAttr(llvm::Attribute::NoUnwind);
    f->setWillReturn();
  }
  std::map<Function *, Value *> basePerFunction;
  for (llvm::GlobalVariable *g : lds) {
    llvm::Align align = deviceLayout.getValueOrABITypeAlignment(g->getAlign(), g->getValueType());
    offset = llvm::alignTo(offset, align);
    const uint64_t here = offset;
    offset += deviceLayout.getTypeAllocSize(g->getValueType());
    std::vector<llvm::Use *> uses;
    for (llvm::Use &use : g->uses())
      uses.push_back(&use);
    for (llvm::Use *use : uses) {
      auto *inst = llvm::dyn_cast<llvm::Instruction>(use->getUser());
      if (!inst)
        throw Error("an LDS variable '" + g->getName().str() +
                    "' is used outside of a function; the emulator cannot place it");
      Function *f = inst->getFunction();
      Value *&base = basePerFunction[f];
      IRBuilder<> b(&*f->getEntryBlock().getFirstInsertionPt());
      if (!base)
        base = b.CreateCall(ldsBase, {}, "lds.base");
      else
        b.SetInsertPoint(llvm::cast<llvm::Instruction>(base)->getNextNode());
      use->set(b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), base, here, g->getName()));
    }
    g->eraseFromParent();
  }
  return static_cast<uint32_t>(offset);
}

bool isAmdgpuCallingConv(unsigned cc) {
  using CC = llvm::CallingConv::ID;
  switch (static_cast<CC>(cc)) {
  case llvm::CallingConv::AMDGPU_KERNEL: case llvm::CallingConv::AMDGPU_Gfx:
  case llvm::CallingConv::AMDGPU_CS: case llvm::CallingConv::AMDGPU_VS:
  case llvm::CallingConv::AMDGPU_PS: case llvm::CallingConv::AMDGPU_GS:
  case llvm::CallingConv::AMDGPU_HS: case llvm::CallingConv::AMDGPU_ES:
  case llvm::CallingConv::AMDGPU_LS: case llvm::CallingConv::SPIR_KERNEL:
    return true;
  default:
    return false;
  }
}

// AMDGPU calling conventions -> C; AMDGPU-only attributes dropped. Frames
// larger than a page are probed page by page ("probe-stack"), so a thread
// whose stack overflows meets the guard page below its fiber stack rather
// than stepping over it into its neighbour's.
void useHostCallingConventionsAndAttributes(Module &module) {
  for (Function &f : module) {
    if (isAmdgpuCallingConv(f.getCallingConv()))
      f.setCallingConv(llvm::CallingConv::C);
    if (!f.isDeclaration())
      f.addFnAttr("probe-stack", "inline-asm");
    std::vector<std::string> drop;
    for (const llvm::Attribute &attr : f.getAttributes().getFnAttrs())
      if (attr.isStringAttribute()) {
        llvm::StringRef kind = attr.getKindAsString();
        if (kind.starts_with("amdgpu-") || kind == "target-cpu" || kind == "target-features" ||
            kind == "uniform-work-group-size")
          drop.push_back(kind.str());
      }
    for (const std::string &kind : drop)
      f.removeFnAttr(kind);
    for (llvm::Instruction &inst : llvm::instructions(f))
      if (auto *call = llvm::dyn_cast<llvm::CallBase>(&inst);
          call && isAmdgpuCallingConv(call->getCallingConv()))
        call->setCallingConv(llvm::CallingConv::C);
  }
}

// Where each parameter sits in kernarg: the given layout, or the AMDGPU
// rule (in order, natural alignment) when none is given.
KernargLayout parameterLayout(Function &kernel, const KernargLayout &given,
                              const llvm::DataLayout &deviceLayout) {
  KernargLayout computed;
  uint32_t offset = 0;
  for (llvm::Argument &arg : kernel.args()) {
    if (arg.hasByRefAttr() || arg.hasByValAttr())
      throw Error("kernel '" + kernel.getName().str() +
                  "' passes a parameter by reference, which the emulator does not support");
    Type *type = arg.getType();
    uint32_t size = type->isIntegerTy(1) ? 1 : uint32_t(deviceLayout.getTypeAllocSize(type));
    uint32_t align = type->isIntegerTy(1) ? 1 : uint32_t(deviceLayout.getABITypeAlign(type).value());
    offset = uint32_t(llvm::alignTo(offset, align));
    computed.offsets.push_back(offset);
    computed.sizes.push_back(size);
    offset += size;
  }
  computed.totalBytes = offset;
  if (given.offsets.empty() && given.totalBytes == 0)
    return computed;
  if (given.offsets.size() != computed.offsets.size())
    throw Error("kernel '" + kernel.getName().str() + "' has " +
                std::to_string(computed.offsets.size()) + " parameters but its kernarg layout lists " +
                std::to_string(given.offsets.size()));
  for (size_t i = 0; i < computed.sizes.size(); ++i)
    if (i < given.sizes.size() && given.sizes[i] != computed.sizes[i])
      throw Error("kernel '" + kernel.getName().str() + "': parameter " + std::to_string(i) +
                  " is " + std::to_string(computed.sizes[i]) + " bytes but its kernarg layout says " +
                  std::to_string(given.sizes[i]));
  return given;
}

// void tessel_emu_entry(ptr kernarg): load each parameter, call the kernel.
void addEntry(Module &module, Function &kernel, const KernargLayout &layout) {
  llvm::LLVMContext &ctx = module.getContext();
  auto *ptr = llvm::PointerType::get(ctx, 0);
  auto *type = llvm::FunctionType::get(Type::getVoidTy(ctx), {ptr}, false);
  Function *entry = Function::Create(type, Function::ExternalLinkage, kEntryName, module);
  entry->addFnAttr(llvm::Attribute::NoUnwind);
  IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", entry));
  std::vector<Value *> args;
  for (llvm::Argument &arg : kernel.args()) {
    Value *at = b.CreateConstInBoundsGEP1_32(b.getInt8Ty(), entry->getArg(0),
                                             layout.offsets[arg.getArgNo()]);
    if (arg.getType()->isIntegerTy(1))
      args.push_back(b.CreateTrunc(b.CreateAlignedLoad(b.getInt8Ty(), at, llvm::Align(1)), b.getInt1Ty()));
    else
      args.push_back(b.CreateAlignedLoad(arg.getType(), at, llvm::Align(1)));
  }
  b.CreateCall(&kernel, args);
  b.CreateRetVoid();
}

} // namespace

RetargetedKernel retargetForHost(Module &module, const std::string &kernelName,
                                 const KernargLayout &kernargs, const llvm::DataLayout &hostLayout,
                                 const std::string &hostTriple, SanitizeMode sanitize,
                                 llvm::TargetMachine &device, unsigned waveForm) {
  Function *kernel = module.getFunction(kernelName);
  if (!kernel || kernel->isDeclaration())
    throw Error("the kernel module does not define the kernel '" + kernelName + "'");
  const llvm::DataLayout deviceLayout = module.getDataLayout();
  RetargetedKernel result;
  KernargLayout layout = parameterLayout(*kernel, kernargs, deviceLayout);
  result.kernargBytes = layout.totalBytes;

  rewriteFloatToInt(module); // per thread, where a vector's elements are one thread's
  insertLockstepMeetings(module, kernelName, device);
  if (waveForm)
    buildWaveKernel(*kernel, waveForm, sanitize);
  result.needsFibers = rewriteAmdgpuIntrinsics(module, kernelName);
  rewriteTraps(module);
  checkExternalSymbols(module, kernelName);
  rewriteIntegerDivision(module);
  moveAllocasToHostStack(module);
  result.ldsBytes = lowerLdsGlobals(module, deviceLayout);
  result.sites = instrumentMemoryAccesses(module, sanitize);
  useHostCallingConventionsAndAttributes(module);
  kernel->setLinkage(Function::InternalLinkage); // lets O2 inline it into the entry
  module.setTargetTriple(llvm::Triple(hostTriple));
  module.setDataLayout(hostLayout);
  addEntry(module, *kernel, layout);

  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (llvm::verifyModule(module, &os))
    throw Error("the kernel module of '" + kernelName +
                "' is not valid after retargeting to the host: " + problems);
  return result;
}

} // namespace tessel::emu
