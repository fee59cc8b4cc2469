// The TESSEL_* environment variables, read in one way everywhere.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tessel {

// The variable's value, "" when unset.
std::string environmentValue(const char *name);

// Set to something other than "" or "0".
bool environmentFlag(const char *name);

// The comma-separated words of the variable, each trimmed of spaces.
std::vector<std::string> environmentWords(const char *name);

// `item` is one of the comma-separated words of the variable
// (TESSEL_LOG=compile,cache has "compile"); "1" and "all" name every item.
bool environmentLists(const char *name, std::string_view item);

} // namespace tessel
