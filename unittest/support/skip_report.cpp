#include "skip_report.h"

#include <cstdio>
#include <cstdlib>
#include <set>

namespace distspec::testing {
namespace {

// The message a test skipped with, on one line ("" if it did not skip).
std::string skip_reason(const ::testing::TestResult& result)
{
  if (!result.Skipped()) return "";
  std::string why;
  for (int i = 0; i < result.total_part_count(); ++i)
    if (result.GetTestPartResult(i).skipped()) why += result.GetTestPartResult(i).message();
  for (char& c : why)
    if (c == '\n' || c == '\r') c = ' ';
  // A bare GTEST_SKIP() is a skip no allow-list can match: it says so.
  return why.empty() ? "(skipped without a reason)" : why;
}

}  // namespace

void SkipReport::OnTestEnd(const ::testing::TestInfo& info)
{
  const ::testing::TestResult& result = *info.result();
  // "F" or "P", then "S<reason>" when skipped: each process's outcome, since ranks may differ.
  const std::string mine = std::string(result.Failed() ? "F" : "P") + (result.Skipped() ? "S" + skip_reason(result) : "");
  const std::vector<std::string> all = gather_(mine);
  if (!prints_) return;
  ++ran_;
  std::set<std::string> reasons;
  bool failed = false;
  for (const std::string& outcome : all) {
    failed = failed || outcome[0] == 'F';
    if (outcome.size() > 1) reasons.insert(outcome.substr(2));
  }
  failed_ += failed;
  skipped_ += !reasons.empty();
  const std::string name = std::string(info.test_suite_name()) + "." + info.name();
  for (const std::string& why : reasons) std::printf("DISTSPEC-SKIP %s: %s\n", name.c_str(), why.c_str());
  for (int i = 0; i < result.test_property_count(); ++i)
    if (std::string(result.GetTestProperty(i).key()) == "comparisons")
      comparisons_ += std::strtol(result.GetTestProperty(i).value(), nullptr, 10);
  std::fflush(stdout);
}

void SkipReport::OnTestProgramEnd(const ::testing::UnitTest&)
{
  if (!prints_) return;
  std::printf("DISTSPEC-COUNTS tests %ld skipped %ld failed %ld comparisons %ld\n", ran_, skipped_, failed_, comparisons_);
  std::fflush(stdout);
}

}  // namespace distspec::testing
