// placeholder while the header lands; replaced by the implementation
#include "gguf/writer.h"
#include "util/error.h"
namespace pfx::gguf {
File File::open(const std::filesystem::path& path) { fail(path.string(), ": GGUF reader not implemented yet"); }
File::File(File&&) noexcept = default;
File& File::operator=(File&&) noexcept = default;
File::~File() = default;
}
