// LLVM's O3 pipeline over a kernel module before code generation
// (optimizeKernel, amdgpu_codegen.hpp), with the passes it skips, and
// computesOnNarrowValues, which decides whether SLP runs.
#include "tessel/lowering/amdgpu_codegen.hpp"

#include <llvm/ADT/STLExtras.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassInstrumentation.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Target/TargetMachine.h>

namespace tessel {

bool computesOnNarrowValues(const llvm::Module &module) {
  auto narrow = [](llvm::Type *t) {
    t = t->getScalarType();
    return (t->isIntegerTy() && t->getIntegerBitWidth() > 1 && t->getIntegerBitWidth() < 32) ||
           t->isHalfTy() || t->isBFloatTy();
  };
  for (const llvm::Function &function : module)
    for (const llvm::Instruction &inst : llvm::instructions(function)) {
      if (narrow(inst.getType()))
        return true;
      for (const llvm::Value *operand : inst.operands())
        if (!llvm::isa<llvm::Constant>(operand) && narrow(operand->getType()))
          return true;
    }
  return false;
}

namespace {

// Passes of clang's O3 pipeline skipped: each acts only on what tessel's
// kernel modules never hold, or has nothing to act on in a module of one
// kernel (each run still builds or looks up the analyses it asks for; on
// vector add's module of 40 instructions the O3 pipeline is ~100 passes of
// fixed cost). Checked by running O3 with and without the list over every
// kernel module that bench-code-objects (all four targets),
// bench-triton-compare (gfx942, gfx950, gfx1100), bench-compile-scaling and
// the e2e suite compile: the optimized modules are the same (bench/README.md,
// "The optimizer's skipped passes"). Not skipped, though no module of that
// corpus needed them: passes that could act on a kernel outside it (the
// loop passes, DSE, ConstraintElimination, Float2Int, JumpThreading,
// MergedLoadStoreMotion, MemCpyOpt, ADCE, CallSiteSplitting; LV widened a
// loop of plain stores in a try, and the review found small kernels that
// ConstraintElimination, Float2Int and DSE change), dead argument
// elimination, argument promotion and AggressiveInstCombine (printf's ockl
// functions, which stay calls), AMDGPUUniformIntrinsicCombine (gfx1100
// kernels' ballots). Required passes (coroutine lowering, instrumentation,
// allocation tokens, annotation remarks) run whatever the callback says.
constexpr llvm::StringLiteral kSkippedPasses[] = {
    // What tessel never emits: coroutines, OpenMP, memory profiles,
    // annotations, forced attributes, calls to a printf function
    // (device_print calls ockl's functions) or to host libm, lookup tables
    // of switches, available_externally bodies (the module is internalized
    // first), auto-init stores, objectsize/is.constant, vector library
    // mappings.
    "CoroAnnotationElidePass", "OpenMPOptPass", "OpenMPOptCGSCCPass", "MemProfRemoveInfo",
    "Annotation2MetadataPass", "ForceFunctionAttrsPass", "AMDGPUPrintfRuntimeBindingPass",
    "AMDGPUUseNativeCallsPass", "LibCallsShrinkWrapPass", "RelLookupTableConverterPass",
    "EliminateAvailableExternallyPass", "MoveAutoInitPass", "LowerConstantIntrinsicsPass", "InjectTLIMappings",
    // Work only with profile data (none here) or only remarks.
    "ControlHeightReductionPass", "LoopSinkPass", "WarnMissedTransformationsPass",
    // Loop distribution acts only on loops that ask for it (metadata).
    "LoopDistributePass",
    // Interprocedural passes with nothing to do in a module of one kernel
    // and the library functions it calls: no indirect calls, no globals
    // whose mod/ref later passes need again (the older result stays valid),
    // no constants to merge, no attributes a reverse post-order walk adds
    // that code generation reads.
    "CalledValuePropagationPass", "ReversePostOrderFunctionAttrsPass", "RecomputeGlobalsAAPass",
    "ConstantMergePass",
};

bool skippedPass(llvm::StringRef pass) {
  return llvm::is_contained(kSkippedPasses, pass);
}

} // namespace

// The O3 pipeline is built per module (~0.1 M instructions of a compile),
// unlike the code generation one: it cannot be kept, since LLVM's
// ModuleInlinerWrapperPass moves its CGSCC pipeline into its module pipeline
// when it runs (a second run crashed).
void optimizeKernel(llvm::Module &module, llvm::TargetMachine &machine) {
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager sccs;
  llvm::ModuleAnalysisManager modules;
  // The SLP vectorizer (on in clang -O3) pairs 8- and 16-bit arithmetic into
  // packed instructions (v_pk_add_f16, v_pk_add_u16, v_perm_b32). Packed f32
  // (v_pk_add_f32 on gfx90a/gfx942/gfx950) the lowering emits itself, so a
  // module of 32-bit values alone is not searched: SLP was a third of the
  // optimizer's time on layer norm. Not the loop vectorizer: tile code has
  // no loops it could widen.
  llvm::PipelineTuningOptions tuning;
  tuning.SLPVectorization = computesOnNarrowValues(module);
  llvm::PassInstrumentationCallbacks instrumentation;
  instrumentation.registerShouldRunOptionalPassCallback(
      [](llvm::StringRef pass, llvm::Any) { return !skippedPass(pass); });
  llvm::PassBuilder builder(&machine, tuning, std::nullopt, &instrumentation);
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(sccs);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, sccs, modules);
  builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3).run(module, modules);
}

} // namespace tessel
