// Progress lines on stderr while landing runs ("[landing +12s] gate parity: case 2/5 ..."), so a
// person or a CI log can see which build, which gate and how far. stdout stays for results.
#pragma once
#include <chrono>
#include <string>

namespace pfx::gates {

class Progress {
 public:
  explicit Progress(bool quiet = false) : quiet_(quiet), t0_(std::chrono::steady_clock::now()) {}
  void say(const std::string& message) const;
  bool quiet() const { return quiet_; }

 private:
  bool quiet_;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace pfx::gates
