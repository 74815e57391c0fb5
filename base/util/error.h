// pfx::Error: the one exception type the engine throws for bad input or failed I/O.
// Messages name the file, the byte offset / key / tensor, and what was expected.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace pfx {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// fail("file.gguf: offset ", off, ": expected ...") — concatenates its arguments with <<.
template <class... Args>
[[noreturn]] void fail(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  throw Error(os.str());
}

}  // namespace pfx
