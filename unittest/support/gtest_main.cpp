// GoogleTest main of the single-process test programs: GoogleTest's own, plus the skip report
// (skip_report.h) that makes each skip and its reason visible to scripts/test_summary.py.
#include <gtest/gtest.h>

#include "skip_report.h"

int main(int argc, char** argv)
{
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::UnitTest::GetInstance()->listeners().Append(new distspec::testing::SkipReport(
      [](const std::string& mine) { return std::vector<std::string>{mine}; }, true));
  return RUN_ALL_TESTS();
}
