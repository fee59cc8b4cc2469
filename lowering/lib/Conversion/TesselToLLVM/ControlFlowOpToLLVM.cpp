// The kernel: func.func becomes an llvm.func with the ROCDL kernel attributes
// and the workgroup size, its scalar and pointer arguments in the kernarg
// segment; func.return becomes llvm.return. scf ops whose values are tiles
// carry each tile as its registers (upstream structural type conversion).
#include "PatternTesselOpToLLVM.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"

using namespace mlir;
using namespace mlir::tessel;

namespace {

struct FuncOpConversion : TesselOpToLLVMPattern<func::FuncOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;
  LogicalResult matchAndRewrite(func::FuncOp func, OneToNOpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    MLIRContext *ctx = rewriter.getContext();
    TypeConverter::SignatureConversion signature(func.getNumArguments());
    SmallVector<Type> params;
    for (auto [i, t] : llvm::enumerate(func.getArgumentTypes())) {
      Type converted = converter.convertType(t);
      if (!converted)
        return func.emitError("kernel argument #") << i << " has a type with no LLVM equivalent";
      signature.addInputs(i, converted);
      params.push_back(converted);
    }
    auto kernel = rewriter.create<LLVM::LLVMFuncOp>(
        func.getLoc(), func.getName(),
        LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), params));
    auto *rocdl = ctx->getLoadedDialect<ROCDL::ROCDLDialect>();
    int32_t blockSize = target.numWarps() * target.waveSize();
    kernel->setAttr(rocdl->getKernelAttrHelper().getName(), rewriter.getUnitAttr());
    kernel->setAttr(rocdl->getFlatWorkGroupSizeAttrHelper().getName(),
                    rewriter.getStringAttr(std::to_string(blockSize) + "," + std::to_string(blockSize)));
    kernel->setAttr(rocdl->getReqdWorkGroupSizeAttrHelper().getName(),
                    rewriter.getDenseI32ArrayAttr({blockSize, 1, 1}));
    rewriter.inlineRegionBefore(func.getBody(), kernel.getBody(), kernel.end());
    rewriter.applySignatureConversion(&kernel.getBody().front(), signature, &converter);
    rewriter.eraseOp(func);
    return success();
  }
};

struct ReturnOpConversion : TesselOpToLLVMPattern<func::ReturnOp> {
  using TesselOpToLLVMPattern::TesselOpToLLVMPattern;
  LogicalResult matchAndRewrite(func::ReturnOp op, OneToNOpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (op.getNumOperands() != 0)
      return op.emitError("a kernel returns nothing");
    rewriter.replaceOpWithNewOp<LLVM::ReturnOp>(op, ValueRange{});
    return success();
  }
};

} // namespace

void mlir::tessel::populateControlFlowOpToLLVMPatterns(const TesselToLLVMTypeConverter &converter,
                                                       const TargetInfo &target,
                                                       RewritePatternSet &patterns,
                                                       ConversionTarget &legality) {
  patterns.add<FuncOpConversion, ReturnOpConversion>(converter, target);
  // scf.for/while/if/yield with tile operands take their registers instead;
  // scf ops on scalars are legal here and lowered to cf after the conversion.
  scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns, legality);
}

// A tile's registers cross control flow as block arguments, one per element
// (the 1:N conversion keeps a tile's registers consecutive, in its layout's
// register order). For 8-bit elements LLVM then makes a `phi i8` per element,
// which the AMDGPU backend keeps in a VGPR of its own: a prefetched fp8 tile
// took 4x its registers across the pipeliner's branch, unpacked after its
// loads and packed again for its LDS writes (gfx942 tutorial 03 fp8: 131 VALU
// in the loop against Triton's 66). Words of four consecutive registers, as
// the loads and LDS accesses hold them, fold away against those accesses.
// The words are built with integer operations: from a bitcast of a byte
// vector, InstCombine turns the phi back into a phi of byte vectors, which
// the backend splits into bytes again. (16-bit elements gain nothing: the
// backend carries them well, and packing f16 tiles cost tutorial 03's
// gfx942 8-wave loop 168 -> 214 llvm-mca cycles.)
void mlir::tessel::packByteBlockArguments(Operation *root) {
  constexpr unsigned kBytesPerWord = 4;
  auto isByte = [](Value v) { return v.getType().isInteger(8); };
  SmallVector<Block *> blocks;
  root->walk([&](Block *block) {
    if (!block->isEntryBlock() && llvm::any_of(block->getArguments(), isByte))
      blocks.push_back(block);
  });
  for (Block *block : blocks) {
    // Every edge into the block must be a branch whose operands it can change.
    SmallVector<BlockOperand *> edges;
    bool branches = true;
    for (BlockOperand &edge : block->getUses()) {
      edges.push_back(&edge);
      auto branch = dyn_cast<BranchOpInterface>(edge.getOwner());
      branches &= branch && branch.getSuccessorOperands(edge.getOperandNumber()).getProducedOperandCount() == 0;
    }
    if (!branches)
      continue;
    // Whether arguments i and i + 1 come, on some edge, from two different
    // vectors (two tiles' loads: the scales of a scaled dot, one <2 x i8>
    // each). A word across them costs byte shifts on both sides of the
    // branch (gfx950 dot_scaled matmul: 11 VALU an iteration, 4 with a word
    // each: a word of one vector's bytes folds into its load).
    auto vectorOf = [](Value v) -> Value {
      auto extract = v.getDefiningOp<LLVM::ExtractElementOp>();
      return extract ? extract.getVector() : Value();
    };
    auto fromTwoVectors = [&](unsigned i) {
      return llvm::any_of(edges, [&](BlockOperand *edge) {
        OperandRange forwarded = cast<BranchOpInterface>(edge->getOwner())
                                     .getSuccessorOperands(edge->getOperandNumber())
                                     .getForwardedOperands();
        Value a = vectorOf(forwarded[i]), b = vectorOf(forwarded[i + 1]);
        return a && b && a != b;
      });
    };
    // Groups of up to four consecutive byte arguments from one source; a lone
    // byte stays.
    SmallVector<std::pair<unsigned, unsigned>> groups; // (first argument, count)
    for (unsigned i = 0, n = block->getNumArguments(); i < n;) {
      unsigned count = 0;
      while (count < kBytesPerWord && i + count < n && isByte(block->getArgument(i + count)) &&
             (count == 0 || !fromTwoVectors(i + count - 1)))
        ++count;
      if (count > 1)
        groups.push_back({i, count});
      i += std::max(count, 1u);
    }
    if (groups.empty())
      continue;
    MLIRContext *ctx = block->getParent()->getContext();
    Type i8 = IntegerType::get(ctx, 8);
    Type i32 = IntegerType::get(ctx, 32);
    auto constant = [&](OpBuilder &b, Location loc, unsigned v) {
      return b.create<LLVM::ConstantOp>(loc, i32, b.getI32IntegerAttr(v));
    };
    // Each edge passes the words: register first + j in bits [8 j, 8 j + 8).
    for (BlockOperand *edge : edges) {
      auto branch = cast<BranchOpInterface>(edge->getOwner());
      OpBuilder b(branch);
      Location loc = branch.getLoc();
      MutableOperandRange forwarded =
          branch.getSuccessorOperands(edge->getOperandNumber()).getMutableForwardedOperands();
      SmallVector<Value> old(ValueRange(forwarded.getAsOperandRange()));
      SmallVector<Value> passed;
      unsigned next = 0;
      for (auto [first, count] : groups) {
        passed.append(old.begin() + next, old.begin() + first);
        Value word;
        for (unsigned j = 0; j < count; ++j) {
          // A poison byte (the pipeliner's branch that loads nothing) is
          // passed as 0: or-ing its zext into the word would make the
          // word's other, defined bytes poison too.
          Value byte = old[first + j];
          if (byte.getDefiningOp<LLVM::PoisonOp>() || byte.getDefiningOp<LLVM::UndefOp>())
            continue;
          Value part = b.create<LLVM::ZExtOp>(loc, i32, byte);
          if (j > 0)
            part = b.create<LLVM::ShlOp>(loc, part, constant(b, loc, 8 * j));
          word = word ? b.create<LLVM::OrOp>(loc, word, part, /*isDisjoint=*/true) : part;
        }
        if (!word) // every byte poison
          word = b.create<LLVM::PoisonOp>(loc, i32);
        passed.push_back(word);
        next = first + count;
      }
      passed.append(old.begin() + next, old.end());
      forwarded.assign(passed);
    }
    // The block takes the words and unpacks them at its top (last group first,
    // so the earlier groups' argument numbers stay put; each group's unpacking
    // goes before the later ones').
    OpBuilder b(ctx);
    for (auto [first, count] : llvm::reverse(groups)) {
      b.setInsertionPointToStart(block);
      Location loc = block->getArgument(first).getLoc();
      BlockArgument word = block->insertArgument(first, i32, loc);
      if (count == 2) {
        // A pair as the two bytes of its word's low half (InstCombine makes
        // the word a phi <2 x i8>). Measured against shifts and truncations
        // on the gfx950 dot_scaled matmul at 4 waves: 281 against 326
        // llvm-mca cycles (the same VALU, a different schedule). An i16 word
        // is no better: InstCombine splits an i16 phi into i8 phis. (After
        // O3, the backend's carryBytePairsAsWords makes the pair's <2 x i8>
        // phi an i16 one, which it keeps in one register.)
        Value half = b.create<LLVM::BitcastOp>(loc, VectorType::get({2}, i8),
                                               b.create<LLVM::TruncOp>(loc, IntegerType::get(ctx, 16), word));
        for (unsigned j = 0; j < count; ++j)
          block->getArgument(first + 1 + j)
              .replaceAllUsesWith(b.create<LLVM::ExtractElementOp>(loc, half, constant(b, loc, j)));
      } else {
        for (unsigned j = 0; j < count; ++j) {
          Value shifted = j == 0 ? Value(word) : b.create<LLVM::LShrOp>(loc, word, constant(b, loc, 8 * j));
          block->getArgument(first + 1 + j).replaceAllUsesWith(b.create<LLVM::TruncOp>(loc, i8, shifted));
        }
      }
      for (unsigned j = 0; j < count; ++j)
        block->eraseArgument(first + 1);
    }
  }
}
