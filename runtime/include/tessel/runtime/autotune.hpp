// Autotuning: the best of a few launch configurations, per problem key.
//
// On a GPU the tuner times each configuration once (with the caller's timer,
// which runs the kernel) and keeps the fastest. On the emulator, where a time
// says nothing about a GPU, it asks the caller's static cost model instead
// and says so. Either way the choice is remembered for the key: in memory,
// and on disk next to the kernel cache (<cache dir>/autotune/<name>.txt), so
// a new process reuses it without timing again.
#pragma once

#include "tessel/runtime/device.hpp"

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace tessel {

// One configuration: named integer parameters (block sizes, group size) and
// the launch's waves and pipeline stages.
struct TuneConfig {
  std::vector<std::pair<std::string, int>> params;
  unsigned num_warps = 4;
  unsigned num_stages = 1;

  int get(const std::string &name) const; // throws Error naming a missing parameter
  std::string describe() const;           // "BM=128 BN=128 BK=32 num_warps=4 num_stages=1"
};

class Autotuner {
public:
  enum class Method { Timed, CostModel, Remembered, FromDisk };
  // Seconds one run with the config takes (it runs the kernel).
  using Timer = std::function<double(const TuneConfig &)>;
  // A static estimate of the config's run time, lower is better.
  using CostModel = std::function<double(const TuneConfig &)>;

  // `name` keys the on-disk memory (a kernel's name); `directory` is where
  // it lives (empty: <DiskCache::defaultDirectory()>/autotune).
  Autotuner(std::string name, std::vector<TuneConfig> configs, std::string directory = "");

  // The configuration for `key` (e.g. "gfx942 M=512 N=512 K=512").
  const TuneConfig &pick(const Device &device, const std::string &key, const Timer &timer, const CostModel &cost);
  // How the last pick was made.
  Method lastMethod() const { return last_; }
  const std::vector<TuneConfig> &configs() const { return configs_; }

private:
  std::string path() const;
  int readFromDisk(const std::string &key) const;
  void writeToDisk(const std::string &key, int index) const;

  std::string name_, directory_;
  std::vector<TuneConfig> configs_;
  std::map<std::string, int> chosen_;
  std::mutex mutex_;
  Method last_ = Method::Remembered;
};

const char *methodName(Autotuner::Method m);

} // namespace tessel
