// ldsLoadHazards (lds_waits.hpp) on hand-written kernels: the waits of
// tessel's two-slot loop with loads straight into LDS hold, and each wait or
// barrier taken out is named.
#include "lds_waits.hpp"

#include <doctest/doctest.h>

#include <string>

using e2e::ldsLoadHazards;

namespace {

// A kernel around one loop whose iteration waits for this slot's loads,
// passes a barrier, loads the next slot (two loads into LDS, one into
// registers), reads this slot and multiplies.
std::string loop(const std::string &wait = "s_waitcnt vmcnt(0)", const std::string &readsDone = "s_waitcnt lgkmcnt(0)",
                 const std::string &barrier = "s_barrier") {
  return "\ts_mov_b32 s4, 0\n"
         ".LBB0_5:\n"
         "\ts_add_i32 s4, s4, 64\n"
         "\t" + wait + "\n"
         "\t" + barrier + "\n"
         "\ts_mov_b32 m0, s20\n"
         "\tbuffer_load_dwordx4 v43, s[12:15], 0 offen lds\n"
         "\tbuffer_load_dwordx4 v44, s[16:19], 0 offen lds\n"
         "\tbuffer_load_dword v60, v45, s[24:27], 0 offen\n"
         "\tds_read_b128 v[54:57], v43\n"
         "\tds_read_b64_tr_b8 v[44:45], v50 offset:16384\n"
         "\t" + readsDone + "\n"
         "\tv_mfma_f32_32x32x16_fp8_fp8 v[0:15], v[54:55], v[44:45], v[0:15]\n"
         "\ts_cmp_lt_i32 s4, s5\n"
         "\ts_cbranch_scc1 .LBB0_5\n"
         "; %bb.6:\n"
         "\ts_endpgm\n";
}

} // namespace

TEST_CASE("ldsLoadHazards accepts the two-slot loop whose waits hold") {
  CHECK(ldsLoadHazards(loop()) == "");
  // The register load issued last may stay in flight: vmcnt(1) still lands
  // both loads to LDS (they leave the count in order, before it).
  CHECK(ldsLoadHazards(loop("s_waitcnt vmcnt(1)")) == "");
}

TEST_CASE("ldsLoadHazards names a read of a slot whose loads may not have landed") {
  const std::string noWait = ldsLoadHazards(loop("s_nop 0"));
  CHECK(noWait.find("a load to LDS still in flight at the next barrier") == 0);
  CHECK(noWait.find("buffer_load_dwordx4 v43") != std::string::npos);
  // vmcnt(2) leaves the second load to LDS in flight.
  CHECK(ldsLoadHazards(loop("s_waitcnt vmcnt(2)")).find("a load to LDS still in flight at the next barrier (buffer_load_dwordx4 v44") == 0);
  // No barrier: the wave's own loads landed, the other waves' may not have.
  CHECK(ldsLoadHazards(loop("s_waitcnt vmcnt(0)", "s_waitcnt lgkmcnt(0)", "s_nop 1")).find("no barrier after") == 0);
}

TEST_CASE("ldsLoadHazards names a load that may overwrite a slot still being read") {
  // The reads' results unused in the iteration: nothing waits for them
  // before the next iteration's barrier, whose loads overwrite their slot.
  const std::string outstanding = ldsLoadHazards(loop("s_waitcnt vmcnt(0)", "s_nop 0"));
  CHECK(outstanding.find("an LDS read still in flight at the next barrier (ds_read_b128") == 0);
  CHECK(ldsLoadHazards(loop("s_waitcnt vmcnt(0)", "s_waitcnt lgkmcnt(1)")).find("an LDS read still in flight") == 0);
  // A scalar load in flight leaves lgkmcnt(N > 0) saying nothing of the
  // LDS reads: only lgkmcnt(0) counts then.
  std::string scalar = loop("s_waitcnt vmcnt(0) lgkmcnt(1)", "s_waitcnt lgkmcnt(0)");
  scalar.insert(scalar.find("\ts_cmp_lt_i32"), "\tds_read_b32 v70, v71\n\ts_load_dword s30, s[0:1], 0x0\n");
  CHECK(ldsLoadHazards(scalar).find("an LDS read still in flight") == 0);
  CHECK(ldsLoadHazards(loop("s_waitcnt vmcnt(0) lgkmcnt(0)", "s_nop 0")) == "");
}

TEST_CASE("ldsLoadHazards walks every path through a loop with an exec-masked block") {
  // An exec-masked block at the end of the iteration, skipped when no lane
  // is active in it.
  auto masked = [](const std::string &top, const std::string &inside) {
    std::string k = loop(top);
    k.insert(k.find("\ts_cmp_lt_i32"), "\ts_and_saveexec_b64 s[8:9], vcc\n\ts_cbranch_execz .LBB0_7\n; %bb.6:\n" +
                                           inside + ".LBB0_7:\n\ts_or_b64 exec, exec, s[8:9]\n");
    return k;
  };
  CHECK(ldsLoadHazards(masked("s_waitcnt vmcnt(0)", "\tbuffer_store_dword v1, v2, s[24:27], 0 offen\n")) == "");
  // The only wait in the masked block: the text holds it, but an iteration
  // that skips the block reaches the barrier with its loads in flight.
  CHECK(ldsLoadHazards(masked("s_nop 0", "\ts_waitcnt vmcnt(0)\n")).find("a load to LDS still in flight") == 0);
}

TEST_CASE("ldsLoadHazards says when there is no loop to check") {
  CHECK(ldsLoadHazards("\tv_add_f32 v0, v1, v2\n\ts_endpgm\n") == "no loop with matrix instructions");
  std::string registers = loop();
  for (size_t at; (at = registers.find(" offen lds")) != std::string::npos;)
    registers.replace(at, 10, " offen");
  CHECK(ldsLoadHazards(registers) == "no load to LDS in the loop");
}

TEST_CASE("ldsLoadHazards on a rotated loop: entered at its barrier block, the only block mainLoopBlocks marks entered") {
  auto rotated = [](const std::string &wait) {
    return "\ts_mov_b32 s4, 0\n"
           "\ts_branch .LBB0_6\n"
           ".LBB0_5:\n"
           "\tds_read_b128 v[54:57], v43\n"
           "\tbuffer_load_dwordx4 v44, s[12:15], 0 offen lds\n"
           "\ts_waitcnt lgkmcnt(0)\n"
           "\tv_mfma_f32_32x32x16_fp8_fp8 v[0:15], v[54:55], v[44:45], v[0:15]\n"
           "\ts_cbranch_scc0 .LBB0_8\n"
           ".LBB0_6:\n"
           "\t" + wait + "\n"
           "\ts_barrier\n"
           "\ts_cbranch_scc1 .LBB0_5\n"
           ".LBB0_8:\n"
           "\ts_endpgm\n";
  };
  const std::vector<tessel::bench::LoopBlock> blocks = tessel::bench::mainLoopBlocks(rotated("s_waitcnt vmcnt(0)"));
  REQUIRE(blocks.size() == 2u);
  // The empty block after `s_branch .LBB0_6` is no block of its own: it
  // would have fallen through into .LBB0_5 and marked it entered too.
  CHECK(!blocks[0].header);
  CHECK(blocks[1].header);
  CHECK(ldsLoadHazards(rotated("s_waitcnt vmcnt(0)")) == "");
  CHECK(ldsLoadHazards(rotated("s_nop 0")).find("a load to LDS still in flight") == 0);
}

TEST_CASE("ldsLoadHazards trusts only vmcnt(0) while a FLAT access is in flight, and refuses inner loops") {
  // In order, vmcnt(1) would leave only the FLAT load in flight.
  std::string flat = loop("s_waitcnt vmcnt(1)");
  flat.insert(flat.find("\tds_read_b128"), "\tflat_load_dword v61, v[2:3]\n");
  CHECK(ldsLoadHazards(flat).find("a load to LDS still in flight") == 0);
  std::string plain = loop("s_waitcnt vmcnt(1)");
  plain.insert(plain.find("\tds_read_b128"), "\tglobal_load_dword v61, v[2:3], off\n");
  CHECK(ldsLoadHazards(plain) == "");
  // The reads and products loop on their own block: the walk covers no
  // second pass through it, so the loop is refused.
  const std::string inner = "\ts_mov_b32 s4, 0\n"
                            ".LBB0_5:\n"
                            "\ts_waitcnt vmcnt(0)\n"
                            "\ts_barrier\n"
                            "\tbuffer_load_dwordx4 v43, s[12:15], 0 offen lds\n"
                            ".LBB0_6:\n"
                            "\tds_read_b128 v[54:57], v43\n"
                            "\ts_waitcnt lgkmcnt(0)\n"
                            "\tv_mfma_f32_32x32x16_fp8_fp8 v[0:15], v[54:55], v[44:45], v[0:15]\n"
                            "\ts_cbranch_scc1 .LBB0_6\n"
                            "; %bb.7:\n"
                            "\ts_cbranch_scc1 .LBB0_5\n"
                            "; %bb.8:\n"
                            "\ts_endpgm\n";
  CHECK(ldsLoadHazards(inner).find("an inner loop") == 0);
}
