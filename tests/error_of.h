// The message of the pfx::Error a call throws, for tests that check what an error says.
//
//   EXPECT_NE(pfx::test::error_of([&] { File::open(path); }).find("offset 24"), std::string::npos);
#pragma once
#include <string>

#include "util/error.h"

namespace pfx::test {

// What `call` throws as a pfx::Error, or "(no error)".
template <class Call>
std::string error_of(Call&& call) {
  try {
    call();
  } catch (const pfx::Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace pfx::test
