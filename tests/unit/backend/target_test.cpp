// The target table: facts per target and the error for an unknown one.
#include "tessel/lowering/target.hpp"
#include "tessel/core/error.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace tessel;

TEST_CASE("target table holds the facts of each supported target") {
  struct Expected {
    const char *arch;
    unsigned waveSize, ldsBytes, isaVersion;
    const char *feature;
    bool mfma, wmma;
  };
  const Expected expected[] = {
      {"gfx90a", 64, 65536, 9010, "+wavefrontsize64", true, false},
      {"gfx942", 64, 65536, 9402, "+wavefrontsize64", true, false},
      {"gfx950", 64, 163840, 9500, "+wavefrontsize64", true, false},
      {"gfx1100", 32, 65536, 11000, "+wavefrontsize32", false, true},
  };
  for (const Expected &e : expected) {
    CAPTURE(e.arch);
    const TargetInfo *target = lookupTarget(e.arch);
    REQUIRE(target != nullptr);
    CHECK(std::string(target->arch) == e.arch);
    CHECK(target->waveSize == e.waveSize);
    CHECK(target->ldsBytes == e.ldsBytes);
    CHECK(target->maxWorkgroupSize == 1024);
    CHECK(target->isaVersion == e.isaVersion);
    CHECK(std::string(target->features).find(e.feature) != std::string::npos);
    CHECK(target->hasMfma == e.mfma);
    CHECK(target->hasWmma == e.wmma);
    CHECK(&requireTarget(e.arch) == target);
  }
  CHECK(supportedTargets() == std::vector<std::string>{"gfx90a", "gfx942", "gfx950", "gfx1100"});
}

TEST_CASE("an unknown target is nullptr from lookup and an Error listing the supported ones") {
  CHECK(lookupTarget("gfx1200") == nullptr);
  CHECK(lookupTarget("") == nullptr);
  CHECK(lookupTarget("gfx94") == nullptr);
  std::string message;
  try {
    requireTarget("gfx1200");
  } catch (const Error &error) {
    message = error.what();
  }
  CAPTURE(message);
  CHECK(message.find("gfx1200") != std::string::npos);
  for (const char *arch : {"gfx90a", "gfx942", "gfx950", "gfx1100"})
    CHECK(message.find(arch) != std::string::npos);
}
