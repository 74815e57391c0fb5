// Two installs of the gates' fake `prefill` (tests/gates/landing/fake/prefill.py) in a test's temp
// folder, a baseline and a candidate, each with a behaviour of its own, and a gate run over them
// with a gate profile the test writes: no git, no builds, one gate function called directly. For
// tests of what a gate does when an engine misbehaves on request (lies about what it ran, is older).
#pragma once
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run/gate_context.h"

namespace pfx::test {

// A behaviour with the keys of `more` added or replaced: one build's twist on a common behaviour.
nlohmann::json merged(nlohmann::json behaviour, const nlohmann::json& more);

class FakeBuilds {
 public:
  // Installs both builds under `root` (root/baseline, root/candidate) with the fake's default
  // behaviour, and a model file (root/model.gguf: the fake only checks that it exists).
  explicit FakeBuilds(std::filesystem::path root);

  // Replaces build `label`'s behaviour.json ("baseline" | "candidate"; the fake's keys).
  void behave(const std::string& label, const nlohmann::json& behaviour) const;

  // Runs `gate` with the gate profile `yaml`, after `models: {m: <the model file>}` (cases and
  // settings name the model m), through `run_gate` (run_parity_gate, …). `repo` of the context is
  // the temp folder (no scripts there); fixtures are `fixtures`, where given.
  pfx::gates::GateResult run(const std::string& gate, const std::string& yaml,
                             const std::function<pfx::gates::GateResult(const pfx::gates::GateContext&)>& run_gate,
                             const std::filesystem::path& fixtures = {}) const;

  // The argument lists of every call build `label` answered, in order.
  std::vector<nlohmann::json> calls(const std::string& label) const;

 private:
  std::filesystem::path root_;
};

}  // namespace pfx::test
