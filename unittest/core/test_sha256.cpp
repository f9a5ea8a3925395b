// SHA-256 against the known answers of FIPS 180-4's examples (and hashlib at the padding's edges),
// and the canonical JSON bytes a spec digest is taken over, as Python's json.dumps(sort_keys=True,
// separators=(",", ":"), ensure_ascii=False) writes them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "distspec/error.h"
#include "distspec/strict_json.h"
#include "distspec/util/canonical_json.h"
#include "distspec/util/sha256.h"

namespace {

using distspec::sha256_hex;

TEST(Sha256, KnownAnswers) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// 55 bytes leave room for the length in the last block, 56 do not, 64 fill a block exactly.
TEST(Sha256, PaddingEdges) {
  EXPECT_EQ(sha256_hex(std::string(55, 'a')), "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(sha256_hex(std::string(56, 'a')), "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(sha256_hex(std::string(64, 'a')), "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

TEST(Sha256, PiecesHashAsTheWhole) {
  const std::string text(1000, 'x');
  distspec::Sha256 h;
  for (std::size_t at = 0; at < text.size(); at += 7) h.update(std::string_view(text).substr(at, 7));
  EXPECT_EQ(h.hex(), sha256_hex(text));
}

TEST(Sha256, FileAsItsBytes) {
  const std::filesystem::path path = std::filesystem::path(::testing::TempDir()) / "distspec_sha256_file.bin";
  std::string bytes(3 << 20, '\0');  // more than one read chunk
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7919 % 251);
  std::ofstream(path, std::ios::binary) << bytes;
  EXPECT_EQ(distspec::sha256_file_hex(path.string()), sha256_hex(bytes));
  std::filesystem::remove(path);
  EXPECT_THROW(distspec::sha256_file_hex(path.string()), distspec::Error);
}

TEST(CanonicalJson, SortedCompactAsPythonWritesIt) {
  const auto v = distspec::parse_json_strict(
      "{\"z\": [1, 2.5, 1e-05, 1e+16, 1.0, -0.0], \"a\": {\"y\": null, \"b\": true},\n"
      "  \"\xc3\xa9t\xc3\xa9\": \"tab\\tq\\\"\\u0001\", \"A\": 0.1}");
  // json.dumps(json.loads(same), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
  EXPECT_EQ(distspec::canonical_json(v),
            "{\"A\":0.1,\"a\":{\"b\":true,\"y\":null},\"z\":[1,2.5,1e-05,1e+16,1.0,-0.0],"
            "\"\xc3\xa9t\xc3\xa9\":\"tab\\tq\\\"\\u0001\"}");
}

TEST(CanonicalJson, OrderAndWhitespaceDoNotCount) {
  const auto a = distspec::parse_json_strict(R"({"version": 2, "core": {"policy": {"kind": "halo"}}})");
  const auto b = distspec::parse_json_strict("{\n  \"core\": {\"policy\": {\"kind\": \"halo\"}},\n  \"version\": 2\n}");
  EXPECT_EQ(distspec::canonical_json(a), distspec::canonical_json(b));
  const auto c = distspec::parse_json_strict(R"({"version": 2, "core": {"policy": {"kind": "local"}}})");
  EXPECT_NE(distspec::canonical_json(a), distspec::canonical_json(c));
}

}  // namespace
