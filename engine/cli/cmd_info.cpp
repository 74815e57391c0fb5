// prefill info --model M [--json]: architecture, shapes, tensor-type histogram, vocabulary; with
// --json also every tensor (name, type, dims, bytes: docs/prefill-cli.md).
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "commands.h"
#include "quant/types.h"
#include "util/escape.h"

namespace pfx::cli {

int cmd_info(int argc, char** argv) {
  po::options_description opts("info options");
  opts.add_options()("model,m", po::value<std::string>()->required(), "GGUF model file")
      ("json", po::bool_switch(), "print JSON");
  const auto vm = parse("usage: prefill info --model M [--json]", opts, argc, argv);
  if (!vm) return kOk;
  const auto model = model::Model::load((*vm)["model"].as<std::string>());
  const auto& c = model.config();
  std::map<std::string, std::pair<int64_t, int64_t>> histogram;  // type -> (tensors, bytes)
  int64_t total_bytes = 0, total_params = 0;
  for (const auto& t : model.file().tensors()) {
    auto& h = histogram[std::string(quant::type_name(t.type))];
    h.first += 1;
    h.second += t.n_bytes;
    total_bytes += t.n_bytes;
    total_params += t.n_elements;
  }
  nlohmann::json j = {
      {"file", (*vm)["model"].as<std::string>()}, {"gguf_version", model.file().version()},
      {"architecture", c.arch}, {"n_vocab", c.n_vocab}, {"n_embd", c.n_embd}, {"n_layer", c.n_layer},
      {"n_head", c.n_head}, {"n_head_kv", c.n_head_kv}, {"head_dim", c.head_dim}, {"n_ff", c.n_ff},
      {"n_ctx_train", c.n_ctx_train}, {"rms_eps", c.rms_eps}, {"rope_freq_base", c.rope_freq_base},
      {"output_tied", model.weights().output_tied}, {"n_tensors", model.file().tensors().size()},
      {"rope_style", c.rope_style == model::RopeStyle::Neox ? "neox" : "adjacent"}, {"rope_freq_scale", c.rope_freq_scale},
      {"rope_freqs", model.weights().rope_freqs.info != nullptr},
      {"qkv_bias", !model.weights().layers.empty() && model.weights().layers[0].has_qkv_bias()},
      {"tokenizer", model.file().get_string_or("tokenizer.ggml.model", "")},
      {"pre_tokenizer", model.file().get_string_or("tokenizer.ggml.pre", "")},
      {"parameters", total_params}, {"tensor_bytes", total_bytes}};
  for (const auto& [type, h] : histogram) j["tensor_types"][type] = {{"tensors", h.first}, {"bytes", h.second}};
  if ((*vm)["json"].as<bool>()) {
    // The tensor list is streamed one entry at a time: as one JSON tree, a file's 65k tensors
    // took ~55 MB (issue 12: `prefill info` stays under 64 MB of RSS beyond the mapping).
    namespace f = contract::field;
    std::string head = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);  // "{\n  ...\n}"
    head.resize(head.size() - 2);                                                            // without "\n}"
    std::cout << head << ",\n  " << nlohmann::json(f::kTensors).dump() << ": [";
    bool first = true;
    for (const auto& t : model.file().tensors()) {
      const nlohmann::json e = {{f::kTensorName, t.name}, {"type", quant::type_name(t.type)}, {f::kTensorDims, t.dims},
                                {f::kTensorBytes, t.n_bytes}};
      std::cout << (first ? "\n    " : ",\n    ") << e.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      first = false;
    }
    std::cout << (first ? "]\n}\n" : "\n  ]\n}\n");
    return kOk;
  }
  // Strings from the command line and the file are escaped: nothing reaches the terminal raw.
  std::cout << "file          " << escape_control(j["file"].get<std::string>()) << " (GGUF v" << model.file().version() << ")\n"
            << "architecture  " << c.arch << "\n"
            << "vocab         " << c.n_vocab << "\n"
            << "n_embd        " << c.n_embd << "\n"
            << "layers        " << c.n_layer << "\n"
            << "heads         " << c.n_head << " (kv " << c.n_head_kv << ", head dim " << c.head_dim << ")\n"
            << "n_ff          " << c.n_ff << "\n"
            << "context       " << c.n_ctx_train << "\n"
            << "rope base     " << c.rope_freq_base << " (" << j["rope_style"].get<std::string>() << " pairs"
            << (j["rope_freqs"].get<bool>() ? ", rope_freqs scaling" : "")
            << (c.rope_freq_scale != 1.0f ? ", linear scale " + std::to_string(c.rope_freq_scale) : "") << "), rms eps "
            << c.rms_eps << "\n"
            << "qkv bias      " << (j["qkv_bias"].get<bool>() ? "yes" : "no") << "\n"
            << "tokenizer     " << escape_control(j["tokenizer"].get<std::string>())
            << (j["pre_tokenizer"].get<std::string>().empty() ? "" : " (pre " + escape_control(j["pre_tokenizer"].get<std::string>()) + ")")
            << "\n"
            << "output        " << (model.weights().output_tied ? "tied to token_embd" : "output.weight") << "\n"
            << "parameters    " << total_params << " in " << model.file().tensors().size() << " tensors, "
            << total_bytes << " bytes\n"
            << "tensor types:\n";
  for (const auto& [type, h] : histogram)
    std::cout << "  " << type << ": " << h.first << " tensors, " << h.second << " bytes\n";
  return kOk;
}

}  // namespace pfx::cli
