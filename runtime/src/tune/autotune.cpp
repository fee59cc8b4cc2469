// The autotuner (autotune.hpp): pick, remember in memory and on disk.
#include "tessel/runtime/autotune.hpp"

#include "tessel/core/error.hpp"
#include "tessel/core/file_size_signal.hpp"
#include "tessel/runtime/disk_cache.hpp"

#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

namespace fs = std::filesystem;

namespace tessel {

int TuneConfig::get(const std::string &name) const {
  for (const auto &[key, value] : params)
    if (key == name)
      return value;
  throw Error("autotune: the configuration has no parameter '" + name + "' (" + describe() + ")");
}

std::string TuneConfig::describe() const {
  std::string s;
  for (const auto &[key, value] : params)
    s += key + "=" + std::to_string(value) + " ";
  return s + "num_warps=" + std::to_string(num_warps) + " num_stages=" + std::to_string(num_stages);
}

const char *methodName(Autotuner::Method m) {
  switch (m) {
  case Autotuner::Method::Timed: return "timed on the device";
  case Autotuner::Method::CostModel: return "static cost model (the emulator's run times say nothing about a GPU)";
  case Autotuner::Method::Remembered: return "remembered in this process";
  case Autotuner::Method::FromDisk: return "read from the tuning file";
  }
  return "?";
}

Autotuner::Autotuner(std::string name, std::vector<TuneConfig> configs, std::string directory)
    : name_(std::move(name)), directory_(std::move(directory)), configs_(std::move(configs)) {
  if (configs_.empty())
    throw Error("autotune: '" + name_ + "' has no configurations to choose from");
  if (directory_.empty())
    directory_ = (fs::path(DiskCache::defaultDirectory()) / "autotune").string();
}

std::string Autotuner::path() const { return (fs::path(directory_) / (name_ + ".txt")).string(); }

// Lines "<config index> <description> | <key>"; the last line for a key wins.
// The description must still match: a file from other configs is ignored.
int Autotuner::readFromDisk(const std::string &key) const {
  std::ifstream in(path());
  std::string line;
  int found = -1;
  while (std::getline(in, line)) {
    size_t bar = line.rfind(" | ");
    if (bar == std::string::npos || line.substr(bar + 3) != key)
      continue;
    std::istringstream fields(line.substr(0, bar));
    int index = -1;
    fields >> index;
    std::string description;
    std::getline(fields, description);
    if (!description.empty() && description[0] == ' ')
      description.erase(0, 1);
    if (index >= 0 && size_t(index) < configs_.size() && configs_[size_t(index)].describe() == description)
      found = index;
  }
  return found;
}

void Autotuner::writeToDisk(const std::string &key, int index) const {
  std::error_code error;
  fs::create_directories(directory_, error);
  NoFileSizeSignal noSignal; // past a file-size limit the line is lost, not the process
  std::ofstream out(path(), std::ios::app);
  if (out) // a read-only cache only loses the memory across processes
    out << index << " " << configs_[size_t(index)].describe() << " | " << key << "\n";
}

const TuneConfig &Autotuner::pick(const Device &device, const std::string &key, const Timer &timer,
                                  const CostModel &cost) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = chosen_.find(key); it != chosen_.end()) {
    last_ = Method::Remembered;
    return configs_[size_t(it->second)];
  }
  int best = readFromDisk(key);
  if (best >= 0) {
    last_ = Method::FromDisk;
  } else {
    const bool timed = !device.isEmulator();
    double bestScore = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < configs_.size(); ++i) {
      double score = timed ? timer(configs_[i]) : cost(configs_[i]);
      if (score < bestScore) {
        bestScore = score;
        best = int(i);
      }
    }
    last_ = timed ? Method::Timed : Method::CostModel;
    writeToDisk(key, best);
  }
  chosen_[key] = best;
  return configs_[size_t(best)];
}

} // namespace tessel
