// What a test program ran, in lines a script collects from its output (scripts/test_summary.py):
//
//   DISTSPEC-SKIP <Suite.Test>: <reason>    each skipped test, with the reason it gave
//   DISTSPEC-COUNTS tests <ran> skipped <n> failed <n> comparisons <n>    at the end
//
// ctest counts a skipped GoogleTest as passed, and runs an MPI test program as one test: without
// these lines a skip, or a program whose every test skipped, would read as a pass.
// `comparisons` sums the property "comparisons" that tests record (the integration cases: one per
// reference and processor grid compared).
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

namespace distspec::testing {

// Every process's string, on the process that prints (one process: its own).
using GatherStrings = std::function<std::vector<std::string>(const std::string&)>;

class SkipReport : public ::testing::EmptyTestEventListener {
 public:
  // `prints`: this process writes the lines (rank 0 of an MPI program).
  SkipReport(GatherStrings gather, bool prints) : gather_(std::move(gather)), prints_(prints) {}
  void OnTestEnd(const ::testing::TestInfo& info) override;
  void OnTestProgramEnd(const ::testing::UnitTest& unit) override;

 private:
  GatherStrings gather_;
  bool prints_;
  long ran_ = 0, skipped_ = 0, failed_ = 0, comparisons_ = 0;
};

}  // namespace distspec::testing
