// Where the real test models and reference outputs live: $PFX_FIXTURES if set, else the
// build's PFX_FIXTURES_DIR (default ../shared/fixtures beside the project). The project's own
// small fixtures (tests/fixtures: llama3 / qwen2 models made by scripts/fixtures/, same layout:
// models/, llama.cpp/, oracle/) are at project_fixtures_dir(): $PFX_PROJECT_FIXTURES if set, else
// tests/fixtures of the source tree the build was configured from.
#pragma once
#include <filesystem>

namespace pfx {
std::filesystem::path fixtures_dir();
std::filesystem::path project_fixtures_dir();
}
