// SHA-256 (FIPS 180-4), for the digests a model file records of the files it was exported with
// (its graph, its spec), so that a host can tell when one was replaced. Compact and dependency
// free: the project links no crypto library, and nothing here is about secrecy.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace distspec {

class Sha256 {
 public:
  Sha256();
  Sha256& update(const void* data, std::size_t size);
  Sha256& update(std::string_view bytes) { return update(bytes.data(), bytes.size()); }
  // The digest as 64 lowercase hex digits (hashlib's hexdigest()); the object is spent after it.
  std::string hex();

 private:
  void block(const unsigned char* p);

  std::array<std::uint32_t, 8> state_;
  std::array<unsigned char, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t length_ = 0;  // bytes hashed
};

std::string sha256_hex(std::string_view bytes);

// The digest of a whole file, read in chunks; throws distspec::Error (spec.io) naming `path`
// where it cannot be read.
std::string sha256_file_hex(const std::string& path);

}  // namespace distspec
