// ldsLoadHazards (lds_waits.hpp) on hand-written loops: the waits of
// tessel's two-slot loop with loads straight into LDS hold, and each wait or
// barrier taken out is named.
#include "lds_waits.hpp"

#include <doctest/doctest.h>

#include <string>

using e2e::ldsLoadHazards;

namespace {

// One iteration: wait for this slot's loads, barrier, the next slot's loads
// (two into LDS, one into registers), this slot's reads, the products.
std::string loop(const std::string &wait = "s_waitcnt vmcnt(0)", const std::string &readsDone = "s_waitcnt lgkmcnt(0)",
                 const std::string &barrier = "s_barrier") {
  return ".LBB0_5:\n"
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
         "\ts_cbranch_scc1 .LBB0_5\n";
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
  CHECK(noWait.find("an LDS read before any barrier reached with the previous iteration's loads to LDS landed") == 0);
  CHECK(noWait.find("ds_read_b128") != std::string::npos);
  // vmcnt(2) leaves the second load to LDS in flight.
  CHECK(ldsLoadHazards(loop("s_waitcnt vmcnt(2)")).find("an LDS read before") == 0);
  // No barrier: the wave's own loads landed, the other waves' may not have.
  CHECK(ldsLoadHazards(loop("s_waitcnt vmcnt(0)", "s_waitcnt lgkmcnt(0)", "s_nop 1")).find("a load to LDS before") == 0);
}

TEST_CASE("ldsLoadHazards names a load that may overwrite a slot still being read") {
  // The reads' results unused in the iteration: nothing waits for them
  // before the next iteration's barrier, whose loads overwrite their slot.
  const std::string outstanding = ldsLoadHazards(loop("s_waitcnt vmcnt(0)", "s_nop 0"));
  CHECK(outstanding.find("a load to LDS before any barrier reached with the previous iteration's LDS reads done") == 0);
  CHECK(ldsLoadHazards(loop("s_waitcnt vmcnt(0)", "s_waitcnt lgkmcnt(1)")).find("a load to LDS before") == 0);
  // A scalar load in flight leaves lgkmcnt(N > 0) saying nothing of the
  // LDS reads: only lgkmcnt(0) counts then.
  std::string scalar = loop("s_waitcnt vmcnt(0) lgkmcnt(1)", "s_waitcnt lgkmcnt(0)");
  scalar.insert(scalar.find("\ts_cmp_lt_i32"), "\tds_read_b32 v70, v71\n\ts_load_dword s30, s[0:1], 0x0\n");
  CHECK(ldsLoadHazards(scalar).find("a load to LDS before") == 0);
  CHECK(ldsLoadHazards(loop("s_waitcnt vmcnt(0) lgkmcnt(0)", "s_nop 0")) == "");
}

TEST_CASE("ldsLoadHazards refuses loops it cannot walk in program order, and loops with no loads to LDS") {
  std::string branchy = loop();
  branchy.insert(branchy.find("\tds_read_b128"), "\ts_cbranch_execz .LBB0_7\n");
  CHECK(ldsLoadHazards(branchy).find("the loop is not one straight block") == 0);
  std::string labelled = loop();
  labelled.insert(labelled.find("\tds_read_b128"), ".LBB0_6:\n");
  CHECK(ldsLoadHazards(labelled).find("the loop is not one straight block") == 0);
  std::string registers = loop();
  for (size_t at; (at = registers.find(" offen lds")) != std::string::npos;)
    registers.replace(at, 10, " offen");
  CHECK(ldsLoadHazards(registers) == "no load to LDS in the loop");
}
