// Where the real test models and reference outputs live: $PFX_FIXTURES if set, else the
// build's PFX_FIXTURES_DIR (default ../shared/fixtures beside the project).
#pragma once
#include <filesystem>

namespace pfx {
std::filesystem::path fixtures_dir();
}
