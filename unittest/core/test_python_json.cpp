// dump_python_json must give exactly what Python's json.dumps(value, indent=2) gives. The
// expected texts below were produced by CPython 3.11's json module.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "distspec/error.h"
#include "distspec/spec/python_json.h"
#include "distspec/strict_json.h"

namespace {

using distspec::dump_python_json;
using distspec::python_float_repr;
using Json = nlohmann::ordered_json;

struct FloatCase {
  double value;
  const char* repr;
};

// Failure messages show the expected text rather than the bytes of the case.
void PrintTo(const FloatCase& c, std::ostream* os) { *os << c.repr; }

class PythonFloatRepr : public ::testing::TestWithParam<FloatCase> {};

TEST_P(PythonFloatRepr, MatchesCPython) {
  EXPECT_EQ(python_float_repr(GetParam().value), GetParam().repr);
}

INSTANTIATE_TEST_SUITE_P(
    Values, PythonFloatRepr,
    ::testing::Values(
        FloatCase{1.0, "1.0"}, FloatCase{0.1, "0.1"}, FloatCase{1e-05, "1e-05"},
        FloatCase{0.0001, "0.0001"}, FloatCase{1e16, "1e+16"},
        FloatCase{1e15, "1000000000000000.0"}, FloatCase{123456789.0, "123456789.0"},
        FloatCase{1.5e300, "1.5e+300"}, FloatCase{-0.0, "-0.0"}, FloatCase{0.0, "0.0"},
        FloatCase{5e-324, "5e-324"}, FloatCase{1.7976931348623157e308, "1.7976931348623157e+308"},
        FloatCase{0.1 + 0.2, "0.30000000000000004"}, FloatCase{2.5, "2.5"},
        FloatCase{100.0, "100.0"}, FloatCase{1e22, "1e+22"}, FloatCase{-1.25e-7, "-1.25e-07"},
        FloatCase{1234567890123456.7, "1234567890123456.8"},
        FloatCase{12345678901234567.0, "1.2345678901234568e+16"}, FloatCase{0.001234, "0.001234"},
        FloatCase{std::numeric_limits<double>::quiet_NaN(), "NaN"},
        FloatCase{std::numeric_limits<double>::infinity(), "Infinity"},
        FloatCase{-std::numeric_limits<double>::infinity(), "-Infinity"}),
    // Test names from the expected text: "1e-05" -> "1e_05_2".
    [](const ::testing::TestParamInfo<FloatCase>& info) {
      std::string name = info.param.repr;
      for (char& c : name) {
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      }
      return name + "_" + std::to_string(info.index);
    });

TEST(PythonJson, NestedValuesWithEveryType) {
  Json v = Json::object();
  v["b"] = Json::array({1, -2, std::numeric_limits<std::uint64_t>::max(), true, false, nullptr,
                        Json::array(), Json::object()});
  v["a"] = Json::object();
  v["a"]["x"] = "\xc3\xa9/\"\\\b\f\n\r\t\x01\x7f\xf0\x9f\x98\x80";
  v["a"][""] = Json::object();
  v["f"] = 2.0;
  EXPECT_EQ(dump_python_json(v),
            "{\n"
            "  \"b\": [\n"
            "    1,\n"
            "    -2,\n"
            "    18446744073709551615,\n"
            "    true,\n"
            "    false,\n"
            "    null,\n"
            "    [],\n"
            "    {}\n"
            "  ],\n"
            "  \"a\": {\n"
            "    \"x\": \"\\u00e9/\\\"\\\\\\b\\f\\n\\r\\t\\u0001\\u007f\\ud83d\\ude00\",\n"
            "    \"\": {}\n"
            "  },\n"
            "  \"f\": 2.0\n"
            "}");
}

TEST(PythonJson, ScalarsAndEmptyContainersAtTopLevel) {
  EXPECT_EQ(dump_python_json(Json::array()), "[]");
  EXPECT_EQ(dump_python_json(Json::object()), "{}");
  EXPECT_EQ(dump_python_json(Json("\xc3\xa9")), "\"\\u00e9\"");
  EXPECT_EQ(dump_python_json(Json(nullptr)), "null");
}

TEST(PythonJson, IndentZeroStillBreaksLines) {
  Json v = Json::object();
  v["k"] = Json::array({Json::array()});
  EXPECT_EQ(dump_python_json(v, 0), "{\n\"k\": [\n[]\n]\n}");
}

TEST(PythonJson, KeyOrderIsKept) {
  Json v = Json::object();
  v["z"] = 1;
  v["a"] = 2;
  EXPECT_EQ(dump_python_json(v), "{\n  \"z\": 1,\n  \"a\": 2\n}");
}

TEST(PythonJson, InvalidUtf8IsAnError) {
  for (const char* bad : {"\xff", "\xc3", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80"}) {
    EXPECT_THROW(dump_python_json(Json(std::string(bad))), distspec::Error) << bad;
  }
}

TEST(PythonJson, BinaryValuesAreAnError) {
  EXPECT_THROW(dump_python_json(Json::binary({1, 2})), distspec::Error);
}

// Independent of the spec types: every golden file is json.dumps output, so parsing and dumping
// it must reproduce it.
TEST(PythonJson, GoldenFilesAreFixedPoints) {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(DISTSPEC_SHARED_SPECS_DIR)) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    EXPECT_EQ(dump_python_json(distspec::parse_json_strict(bytes.str())), bytes.str())
        << entry.path();
    ++files;
  }
  EXPECT_GT(files, 0);
}

}  // namespace
