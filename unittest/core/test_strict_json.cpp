// parse_json_strict: what it accepts beyond the catalogue of rejections in test_spec_errors.
#include <gtest/gtest.h>

#include <string>

#include "distspec/error.h"
#include "distspec/strict_json.h"

namespace {

using distspec::kMaxJsonDepth;
using distspec::parse_json_strict;

std::string nested_arrays(std::size_t depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

TEST(StrictJson, KeepsKeyOrder) {
  const auto v = parse_json_strict(R"({"z": 1, "a": {"y": 2, "b": 3}})");
  EXPECT_EQ(v.dump(), R"({"z":1,"a":{"y":2,"b":3}})");
}

TEST(StrictJson, AcceptsTheMaximumDepthAndRejectsOneMore) {
  EXPECT_NO_THROW(parse_json_strict(nested_arrays(kMaxJsonDepth)));
  EXPECT_THROW(parse_json_strict(nested_arrays(kMaxJsonDepth + 1)), distspec::Error);
}

TEST(StrictJson, SkipsAUtf8ByteOrderMark) {
  EXPECT_EQ(parse_json_strict("\xef\xbb\xbf{\"a\": 1}").at("a"), 1);
}

TEST(StrictJson, EqualKeysInDifferentObjectsAreFine) {
  EXPECT_NO_THROW(
      parse_json_strict(R"({"a": {"k": 1}, "b": {"k": 2}, "c": [{"k": 3}, {"k": 4}]})"));
}

TEST(StrictJson, ValidMultibyteUtf8OutsideAStringIsASyntaxError) {
  try {
    parse_json_strict("[\xc3\xa9]");
    FAIL() << "accepted";
  } catch (const distspec::Error& e) {
    EXPECT_EQ(e.message(),
              "invalid JSON at byte 1 (line 1, column 2): syntax error while parsing value - "
              "invalid literal");
  }
}

TEST(StrictJson, ErrorsCarryTheFileName) {
  try {
    parse_json_strict("{", "model.json");
    FAIL() << "accepted";
  } catch (const distspec::Error& e) {
    EXPECT_EQ(e.file(), "model.json");
    EXPECT_EQ(e.id(), distspec::error_id::parse);
  }
}

TEST(StrictJson, PointerTokensAreEscaped) {
  EXPECT_EQ(distspec::json_pointer_token("a/b~c"), "a~1b~0c");
}

}  // namespace
