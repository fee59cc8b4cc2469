// Whether a pipelined loop that loads straight into LDS waits as it must,
// read off its gfx9 assembly (`bench::mainLoop`). The emulator runs a load
// to LDS as an immediate store, so a missing `s_waitcnt` never shows there as
// a wrong result; the machine code is the only place to see it.
//
// The loop is tessel-pipeline-loops' two-slot form: each iteration waits for
// the slot the previous one loaded, passes a barrier, loads the next tile into
// the other slot and reads its own slot. Two iterations are walked in program
// order with the counters of the CDNA3/CDNA4 ISA (section 4.4, "Data
// dependency resolution"):
//  - vmcnt counts vector memory instructions (a load to LDS lands in LDS when
//    it leaves the count), which leave it in the order they were issued:
//    `s_waitcnt vmcnt(N)` leaves at most the N latest in flight;
//  - lgkmcnt counts LDS instructions, which leave in order, and scalar memory
//    and message instructions, which do not: with any of those in flight only
//    lgkmcnt(0) says an LDS read is done.
// What must hold in the second iteration:
//  - every LDS read comes after a barrier that this wave reached with all of
//    the first iteration's loads to LDS landed (so every wave's had);
//  - every load to LDS comes after a barrier that this wave reached with all
//    of the first iteration's LDS reads done (the load overwrites the slot
//    they read).
// Instructions the walk does not know are ignored; a vector memory
// instruction it counts that the hardware does not would make it trust a
// wait too much, so only loads, stores and atomics of buffer, global, flat and
// scratch memory count.
#pragma once

#include <deque>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace e2e {

// "" when the waits hold; otherwise what is missing, at which line of the
// loop (1-based, within one iteration).
inline std::string ldsLoadHazards(const std::string &loop) {
  struct Line {
    std::string text, mnemonic;
    int number;
  };
  std::vector<Line> body;
  {
    std::istringstream in(loop);
    std::string text;
    int number = 0;
    const std::regex instruction(R"(^\s+([a-z][a-z0-9_]*)\b)");
    while (std::getline(in, text)) {
      ++number;
      std::smatch m;
      if (std::regex_search(text, m, instruction))
        body.push_back({text, m[1].str(), number});
      else if (text.find(':') != std::string::npos && text.rfind(".LBB", 0) == 0 && !body.empty())
        return "the loop is not one straight block (a label at line " + std::to_string(number) + ")";
    }
  }
  auto startsWith = [](const std::string &s, const char *prefix) { return s.rfind(prefix, 0) == 0; };
  for (size_t i = 0; i + 1 < body.size(); ++i)
    if (startsWith(body[i].mnemonic, "s_branch") || startsWith(body[i].mnemonic, "s_cbranch") ||
        startsWith(body[i].mnemonic, "s_setpc"))
      return "the loop is not one straight block (a branch at line " + std::to_string(body[i].number) + ")";

  auto isVectorMemory = [&](const std::string &m) {
    for (const char *space : {"buffer_", "global_", "flat_", "scratch_"})
      if (startsWith(m, space)) {
        const std::string op = m.substr(std::string(space).size());
        return startsWith(op, "load") || startsWith(op, "store") || startsWith(op, "atomic");
      }
    return false;
  };
  const std::regex ldsOperand(R"(\slds\s*(;.*)?$)");
  auto isLoadToLds = [&](const Line &l) {
    return isVectorMemory(l.mnemonic) && (l.mnemonic.find("_lds") != std::string::npos || std::regex_search(l.text, ldsOperand));
  };
  auto isLdsRead = [&](const std::string &m) { return startsWith(m, "ds_read") || startsWith(m, "ds_load"); };
  auto isLds = [&](const std::string &m) { return startsWith(m, "ds_"); };
  auto isUnorderedLgkm = [&](const std::string &m) {
    return startsWith(m, "s_load") || startsWith(m, "s_buffer_load") || startsWith(m, "s_sendmsg") ||
           startsWith(m, "s_memtime") || startsWith(m, "s_memrealtime") || startsWith(m, "flat_");
  };

  struct InFlight {
    int iteration;
    bool marked; // a load to LDS (vmcnt) or an LDS read (lgkmcnt)
    bool unordered = false;
  };
  std::deque<InFlight> vm, lgkm;
  const std::regex vmcnt(R"(\bvmcnt\((\d+)\))"), lgkmcnt(R"(\blgkmcnt\((\d+)\))");
  bool sawLoadToLds = false, readsMayGo = false, loadsMayGo = false;
  for (int iteration = 0; iteration < 2; ++iteration) {
    for (const Line &l : body) {
      const std::string &m = l.mnemonic;
      const std::string at = " (line " + std::to_string(l.number) + ": " + l.text.substr(l.text.find_first_not_of(" \t")) + ")";
      if (m == "s_waitcnt") {
        std::smatch c;
        if (std::regex_search(l.text, c, vmcnt))
          while (vm.size() > std::stoul(c[1].str()))
            vm.pop_front();
        if (std::regex_search(l.text, c, lgkmcnt)) {
          const size_t n = std::stoul(c[1].str());
          bool unordered = false;
          for (const InFlight &f : lgkm)
            unordered |= f.unordered;
          if (n == 0)
            lgkm.clear();
          else if (!unordered)
            while (lgkm.size() > n)
              lgkm.pop_front();
        }
        continue;
      }
      if (m == "s_barrier" && iteration == 1) {
        bool loadsLanded = true, readsDone = true;
        for (const InFlight &f : vm)
          loadsLanded &= !(f.marked && f.iteration == 0);
        for (const InFlight &f : lgkm)
          readsDone &= !(f.marked && f.iteration == 0);
        readsMayGo |= loadsLanded;
        loadsMayGo |= readsDone;
        continue;
      }
      if (isVectorMemory(m)) {
        const bool toLds = isLoadToLds(l);
        sawLoadToLds |= toLds;
        if (toLds && iteration == 1 && !loadsMayGo)
          return "a load to LDS before any barrier reached with the previous iteration's LDS reads done" + at;
        vm.push_back({iteration, toLds});
      }
      if (isLds(m)) {
        if (isLdsRead(m) && iteration == 1 && !readsMayGo)
          return "an LDS read before any barrier reached with the previous iteration's loads to LDS landed" + at;
        lgkm.push_back({iteration, isLdsRead(m)});
      } else if (isUnorderedLgkm(m)) {
        lgkm.push_back({iteration, false, true});
      }
    }
  }
  if (!sawLoadToLds)
    return "no load to LDS in the loop";
  return "";
}

} // namespace e2e
