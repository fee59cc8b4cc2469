#include "tessel/core/environment.hpp"

#include <cstdlib>

namespace tessel {

std::string environmentValue(const char *name) {
  const char *value = std::getenv(name);
  return value ? value : "";
}

bool environmentFlag(const char *name) {
  std::string value = environmentValue(name);
  return !value.empty() && value != "0";
}

std::vector<std::string> environmentWords(const char *name) {
  std::vector<std::string> words;
  const std::string value = environmentValue(name);
  std::string_view rest = value;
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view word = rest.substr(0, comma);
    while (!word.empty() && word.front() == ' ')
      word.remove_prefix(1);
    while (!word.empty() && word.back() == ' ')
      word.remove_suffix(1);
    words.emplace_back(word);
    if (comma == std::string_view::npos)
      break;
    rest.remove_prefix(comma + 1);
  }
  return words;
}

bool environmentLists(const char *name, std::string_view item) {
  for (const std::string &word : environmentWords(name))
    if (word == item || word == "1" || word == "all")
      return true;
  return false;
}

} // namespace tessel
