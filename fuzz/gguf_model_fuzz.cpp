// libFuzzer target: arbitrary bytes as a GGUF model file, through everything that opening an
// untrusted model does: the reader, the llama binding and its checks, the non-finite weight scan,
// the tokenizer vocabulary and, for models small enough, a two-token forward pass of the CPU
// reference. Bad input must end as a pfx::Error; anything else (a sanitizer report, another
// exception type, a timeout, an allocation past -malloc_limit_mb) is a finding.
//
// Build and run: scripts/fuzz.sh N_SECONDS (clang, -fsanitize=fuzzer,address,undefined).
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "cpu/cpu_backend.h"
#include "model/checks.h"
#include "model/llama.h"
#include "tokenizer/spm.h"
#include "tokenizer/vocab.h"
#include "util/error.h"

namespace {

// Forward passes only on models whose weights total at most this many elements (~ms per run).
constexpr int64_t kMaxForwardElements = int64_t{1} << 18;

// The input goes into one memory file, opened by path like any model (the reader maps it).
const std::filesystem::path& input_path() {
  static const std::filesystem::path path = [] {
    const int fd = ::memfd_create("fuzz-input.gguf", MFD_CLOEXEC);
    if (fd < 0) std::abort();
    return std::filesystem::path("/proc/self/fd/" + std::to_string(fd));
  }();
  return path;
}

void set_input(const uint8_t* data, size_t size) {
  static const int fd = std::stoi(input_path().filename().string());
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) std::abort();
}

void exercise(const pfx::model::Model& model) {
  (void)pfx::model::nonfinite_weights(model, 1);
  try {
    const pfx::tok::SpmTokenizer tokenizer(pfx::tok::vocab_from_gguf(model.file()));
    const auto ids = tokenizer.encode("Hello world", /*add_bos=*/true);
    (void)tokenizer.decode(ids);
  } catch (const pfx::Error&) {
  }
  int64_t elements = 0;
  for (const auto& t : model.file().tensors()) elements += t.n_elements;
  if (elements > kMaxForwardElements) return;
  pfx::cpu::CpuBackend cpu(model, /*max_ctx=*/2, /*threads=*/1);
  const int32_t first = 0, second = static_cast<int32_t>(model.config().n_vocab - 1);
  (void)cpu.forward({&first, 1}, /*all_logits=*/true);
  (void)cpu.forward({&second, 1}, /*all_logits=*/false);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  set_input(data, size);
  try {
    const auto model = pfx::model::Model::load(input_path());
    exercise(model);
  } catch (const pfx::Error&) {
    // the expected outcome for almost every input: a clear error
  }
  return 0;
}
