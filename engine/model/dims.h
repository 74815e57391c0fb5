// "[64, 172]": ggml dims as error messages print them (row length first).
#pragma once
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace pfx::model {

inline std::string dims_string(const std::vector<int64_t>& dims) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < dims.size(); ++i) os << (i ? ", " : "") << dims[i];
  os << ']';
  return os.str();
}

}  // namespace pfx::model
