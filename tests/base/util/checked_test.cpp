// Checked arithmetic (util/checked.h): exact results in range, nullopt / pfx::Error past it.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "util/checked.h"
#include "util/error.h"

TEST(Checked, MulAndAddInRange) {
  EXPECT_EQ(pfx::checked_mul<int64_t>(1 << 20, 1 << 20), int64_t{1} << 40);
  EXPECT_EQ(pfx::checked_add<uint64_t>(3, 4), 7u);
  EXPECT_EQ(pfx::checked_mul<int64_t>(-3, 4), -12);
}

TEST(Checked, OverflowIsNullopt) {
  const int64_t big = int64_t{1} << 40;
  EXPECT_FALSE(pfx::checked_mul<int64_t>(big, big));  // the q_dim() case: 2^40 * 2^40
  EXPECT_FALSE(pfx::checked_add<int64_t>(std::numeric_limits<int64_t>::max(), 1));
  EXPECT_FALSE(pfx::checked_mul<uint64_t>(uint64_t{1} << 32, uint64_t{1} << 32));
}

TEST(Checked, OrFailNamesTheContext) {
  try {
    (void)pfx::mul_or_fail<int64_t>(int64_t{1} << 40, int64_t{1} << 40, "model.gguf", ": q_dim");
    FAIL() << "expected an error";
  } catch (const pfx::Error& e) {
    EXPECT_STREQ(e.what(), "model.gguf: q_dim: 1099511627776 x 1099511627776 overflows a 64-bit integer");
  }
  EXPECT_THROW((void)pfx::add_or_fail<uint32_t>(UINT32_MAX, 1u, "x"), pfx::Error);
  EXPECT_EQ(pfx::add_or_fail<uint32_t>(1u, 1u, "x"), 2u);
}

TEST(Checked, AlignUp) {
  EXPECT_EQ(pfx::checked_align_up<uint64_t>(33, 32), 64u);
  EXPECT_EQ(pfx::checked_align_up<uint64_t>(64, 32), 64u);
  EXPECT_FALSE(pfx::checked_align_up<uint64_t>(UINT64_MAX - 3, 32));
}
