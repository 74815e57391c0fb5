// Fixture locations (see fixtures.h).
#include "util/fixtures.h"

#include <cstdlib>

namespace pfx {
std::filesystem::path fixtures_dir() {
  if (const char* env = std::getenv("PFX_FIXTURES"); env && *env) return env;
  return PFX_DEFAULT_FIXTURES_DIR;
}
std::filesystem::path project_fixtures_dir() {
  if (const char* env = std::getenv("PFX_PROJECT_FIXTURES"); env && *env) return env;
  return PFX_DEFAULT_PROJECT_FIXTURES_DIR;
}
}  // namespace pfx
