// Whether a pipelined loop that loads straight into LDS waits as it must,
// read off its gfx9 assembly. The emulator runs a load to LDS as an immediate
// store, so a missing `s_waitcnt` never shows there as a wrong result; the
// machine code is the only place to see it.
//
// The loop (bench::mainLoopBlocks) is tessel-pipeline-loops' two-slot form,
// one barrier an iteration: the loads issued between two barriers fill the
// slot that is read after the second, and the slot read between two barriers
// is filled again after the second. So:
//  - every load to LDS has landed in LDS when its wave reaches the next
//    barrier (then every wave's has, and what comes after may read it);
//  - every LDS read is done when its wave reaches the next barrier (then no
//    load after it overwrites what it has yet to read).
// Every two iterations, each along any path through the loop (an
// exec-masked block taken or skipped; the loop as LLVM rotated it, from any
// block it is entered at), are walked in program order with the counters of
// the CDNA3/CDNA4 ISA (section 4.4, "Data dependency resolution"), and each of
// the first iteration's loads to LDS and LDS reads is checked at the first
// barrier after it:
//  - vmcnt counts vector memory instructions (a load to LDS lands in LDS when
//    it leaves the count), which leave it in the order they were issued:
//    `s_waitcnt vmcnt(N)` leaves at most the N latest in flight;
//    (FLAT instructions may leave out of order: with one in flight only
//    vmcnt(0) says a load to LDS has landed);
//  - lgkmcnt counts LDS instructions, which leave in order, and scalar memory
//    and message instructions, which do not: with any of those in flight only
//    lgkmcnt(0) says an LDS read is done.
// Instructions the walk does not know are ignored; a vector memory
// instruction it counts that the hardware does not would make it trust a
// wait too much, so only loads, stores and atomics of buffer, global, flat and
// scratch memory count. A loop with an inner loop (a branch that no path from
// the loop's entry back to it takes) is refused, not checked. With more
// barriers an iteration each access is still checked at the first one after
// it, which is stricter than such a scheme may need (it may then fail).
// Not walked: the code before the loop up to its first barrier (the first
// tile's loads) and after it.
#pragma once

#include "../../../bench/matmul_forms.hpp" // mainLoopBlocks

#include <algorithm>
#include <deque>
#include <regex>
#include <string>
#include <utility>
#include <vector>

namespace e2e {

// "" when the main loop's waits hold; otherwise what is missing, and where.
inline std::string ldsLoadHazards(const std::string &assembly) {
  const std::vector<tessel::bench::LoopBlock> blocks = tessel::bench::mainLoopBlocks(assembly);
  if (blocks.empty())
    return "no loop with matrix instructions";
  // Each block's instructions.
  std::vector<std::vector<std::string>> lines(blocks.size());
  const std::regex instruction(R"(^\s+([a-z][a-z0-9_]*)\b)");
  for (size_t b = 0; b < blocks.size(); ++b) {
    size_t at = 0;
    const std::string &text = blocks[b].text;
    while (at < text.size()) {
      size_t end = text.find('\n', at);
      end = end == std::string::npos ? text.size() : end;
      const std::string line = text.substr(at, end - at);
      at = end + 1;
      if (std::regex_search(line, instruction))
        lines[b].push_back(line.substr(line.find_first_not_of(" \t")));
    }
  }
  // Every iteration: a path from a header back to it.
  std::vector<std::vector<size_t>> paths;
  for (size_t h = 0; h < blocks.size(); ++h) {
    if (!blocks[h].header)
      continue;
    std::vector<size_t> path{h};
    std::vector<bool> on(blocks.size());
    on[h] = true;
    auto extend = [&](auto &self) -> void {
      if (paths.size() > 256)
        return;
      for (size_t s : blocks[path.back()].successors) {
        if (s == h) {
          paths.push_back(path);
        } else if (!on[s]) {
          on[s] = true;
          path.push_back(s);
          self(self);
          path.pop_back();
          on[s] = false;
        }
      }
    };
    extend(extend);
  }
  if (paths.empty())
    return "no path through the loop from its header back to it";
  if (paths.size() > 256)
    return "more than 256 paths through the loop";
  // A cycle that does not pass through a header (an inner loop) is on no
  // path as a cycle, and a block only on it on none: not checked, refused.
  {
    std::vector<std::vector<bool>> walked(blocks.size(), std::vector<bool>(blocks.size()));
    for (const std::vector<size_t> &path : paths)
      for (size_t i = 0; i < path.size(); ++i)
        walked[path[i]][path[(i + 1) % path.size()]] = true;
    for (size_t b = 0; b < blocks.size(); ++b)
      for (size_t s : blocks[b].successors)
        if (!walked[b][s])
          return "an inner loop (a branch no path from the loop's entry back to it takes): not checked";
  }

  auto startsWith = [](const std::string &s, const char *prefix) { return s.rfind(prefix, 0) == 0; };
  auto mnemonic = [](const std::string &line) { return line.substr(0, line.find_first_of(" \t")); };
  auto isVectorMemory = [&](const std::string &m) {
    for (const char *space : {"buffer_", "global_", "flat_", "scratch_"})
      if (startsWith(m, space)) {
        const std::string op = m.substr(std::string(space).size());
        return startsWith(op, "load") || startsWith(op, "store") || startsWith(op, "atomic");
      }
    return false;
  };
  const std::regex ldsOperand(R"(\slds\s*(;.*)?$)");
  auto isLoadToLds = [&](const std::string &line, const std::string &m) {
    return isVectorMemory(m) && (m.find("_lds") != std::string::npos || std::regex_search(line, ldsOperand));
  };
  auto isLdsRead = [&](const std::string &m) { return startsWith(m, "ds_read") || startsWith(m, "ds_load"); };
  auto isUnorderedLgkm = [&](const std::string &m) {
    return startsWith(m, "s_load") || startsWith(m, "s_buffer_load") || startsWith(m, "s_sendmsg") ||
           startsWith(m, "s_memtime") || startsWith(m, "s_memrealtime") || startsWith(m, "flat_");
  };
  const std::regex vmcnt(R"(\bvmcnt\((\d+)\))"), lgkmcnt(R"(\blgkmcnt\((\d+)\))");

  struct Access {
    std::string line;
    bool toLds;          // a load to LDS, else an LDS read
    bool inFlight = true; // still counted (vmcnt or lgkmcnt)
    bool checked = false; // a barrier came after it
  };
  struct InFlight {
    int access; // index into the first iteration's accesses, or -1
    bool unordered = false;
  };
  // Two iterations, along `first` then `second`: "" or the hazard.
  auto walk = [&](const std::vector<size_t> &first, const std::vector<size_t> &second) -> std::string {
    std::vector<Access> accesses; // the first iteration's
    std::deque<InFlight> vm, lgkm;
    auto retire = [&](std::deque<InFlight> &counter, size_t keep) {
      while (counter.size() > keep) {
        if (counter.front().access >= 0)
          accesses[size_t(counter.front().access)].inFlight = false;
        counter.pop_front();
      }
    };
    for (int iteration = 0; iteration < 2; ++iteration)
      for (size_t b : iteration == 0 ? first : second)
        for (const std::string &line : lines[b]) {
          const std::string m = mnemonic(line);
          if (m == "s_waitcnt") {
            // counter(N): at most N left in flight, which says which when
            // they leave in order; with one that may not, only N = 0 does.
            for (auto [field, counter] : {std::pair{&vmcnt, &vm}, std::pair{&lgkmcnt, &lgkm}}) {
              std::smatch c;
              if (!std::regex_search(line, c, *field))
                continue;
              const size_t n = std::stoul(c[1].str());
              const bool unordered =
                  std::any_of(counter->begin(), counter->end(), [](const InFlight &f) { return f.unordered; });
              if (n == 0 || !unordered)
                retire(*counter, n);
            }
            continue;
          }
          if (m == "s_barrier") {
            for (Access &a : accesses) {
              if (a.checked)
                continue;
              if (a.inFlight)
                return std::string(a.toLds ? "a load to LDS still in flight at the next barrier ("
                                           : "an LDS read still in flight at the next barrier (") +
                       a.line + ")";
              a.checked = true;
            }
            continue;
          }
          const bool vector = isVectorMemory(m), toLds = vector && isLoadToLds(line, m);
          const bool read = startsWith(m, "ds_") && isLdsRead(m);
          int access = -1;
          if (iteration == 0 && (toLds || read)) {
            access = int(accesses.size());
            accesses.push_back({line, toLds});
          }
          if (vector) // FLAT may return out of order (then only vmcnt(0) says what is done)
            vm.push_back({toLds ? access : -1, startsWith(m, "flat_")});
          if (startsWith(m, "ds_"))
            lgkm.push_back({read ? access : -1});
          else if (isUnorderedLgkm(m))
            lgkm.push_back({-1, true});
        }
    for (const Access &a : accesses)
      if (!a.checked)
        return "no barrier after " + a.line + " within the next iteration";
    return "";
  };
  bool sawLoadToLds = false;
  for (const std::vector<std::string> &block : lines)
    for (const std::string &line : block)
      sawLoadToLds |= isLoadToLds(line, mnemonic(line));
  if (!sawLoadToLds)
    return "no load to LDS in the loop";
  for (const std::vector<size_t> &first : paths)
    for (const std::vector<size_t> &second : paths)
      if (std::string hazard = walk(first, second); !hazard.empty())
        return hazard;
  return "";
}

} // namespace e2e
