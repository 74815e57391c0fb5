// prefill synth --profile profiles/models/<name>.yaml --out M.gguf [--seed S] [--set FIELD=VALUE ...]
// Writes a Llama-shaped GGUF with seeded random weights in the profile's tensor-type mix; --set
// edits the profile first (a dotted field, a YAML value: --set shape.n_layer=2 --set types.default=f16).
#include <chrono>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "synth/synth.h"

namespace pfx::cli {

int cmd_synth(int argc, char** argv) {
  po::options_description opts("synth options");
  opts.add_options()("profile,p", po::value<std::string>()->required(), "model profile YAML (profiles/models/*.yaml)")
      ("out,o", po::value<std::string>()->required(), "GGUF file to write")
      ("seed", po::value<uint64_t>()->default_value(1), "random seed")
      ("set", po::value<std::vector<std::string>>()->composing(),
       "FIELD=VALUE: edit the profile before writing (repeatable; e.g. shape.n_layer=2, 'types.rules=[]')")
      ("force", po::bool_switch(), "overwrite --out if it exists");
  const auto vm = parse("usage: prefill synth --profile P.yaml --out M.gguf [--seed S] [--set FIELD=VALUE ...] [--force]",
                        opts, argc, argv);
  if (!vm) return kOk;
  const std::filesystem::path out = (*vm)["out"].as<std::string>();
  if (std::filesystem::exists(out) && !(*vm)["force"].as<bool>())
    throw UsageError(out.string() + " exists; refusing to overwrite it (pass --force)");
  const std::vector<std::string> edits =
      vm->count("set") ? (*vm)["set"].as<std::vector<std::string>>() : std::vector<std::string>{};
  const auto profile = synth::load_profile((*vm)["profile"].as<std::string>(), edits);
  const auto t0 = std::chrono::steady_clock::now();
  synth::write_synthetic_model(profile, out, (*vm)["seed"].as<uint64_t>(),
                               [](std::string_view msg) { std::cerr << "synth: " << msg << "\n"; });
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cerr << "synth: wrote " << out.string() << " (" << std::filesystem::file_size(out) << " bytes) in " << s
            << " s\n";
  return kOk;
}

}  // namespace pfx::cli
