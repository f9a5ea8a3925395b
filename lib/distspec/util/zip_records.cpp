#include "distspec/util/zip_records.h"

#include <cstdint>

namespace distspec {
namespace {

constexpr std::size_t kEndRecord = 22;          // end of central directory, without its comment
constexpr std::size_t kMaxComment = 65535;      // the comment length is 16 bits
constexpr std::size_t kCentralHeader = 46;      // central file header, without name, extra, comment
constexpr std::size_t kLocalHeader = 30;        // local file header, without name and extra
constexpr std::size_t kMaxRecords = 1u << 20;   // more is no archive a model comes in
constexpr std::uint32_t kUnset32 = 0xffffffffu; // the field's value is in the zip64 extra field

// Little-endian fields at `at`; zero past the end (callers check the bounds that matter).
std::uint64_t le(std::string_view b, std::size_t at, int size) {
  if (at > b.size() || b.size() - at < static_cast<std::size_t>(size)) return 0;
  std::uint64_t v = 0;
  for (int i = size - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[at + i]);
  return v;
}

bool signature(std::string_view b, std::size_t at, const char* sig) {
  return at <= b.size() && b.size() - at >= 4 && b.substr(at, 4) == std::string_view(sig, 4);
}

struct Directory {
  std::uint64_t offset = 0, entries = 0;
};

// The end-of-central-directory record, searched backwards over the comment it may carry, and
// its zip64 counterpart where the 32-bit fields say so.
std::optional<Directory> directory(std::string_view b) {
  if (b.size() < kEndRecord) return std::nullopt;
  const std::size_t last = b.size() - kEndRecord;
  const std::size_t first = last > kMaxComment ? last - kMaxComment : 0;
  for (std::size_t at = last + 1; at-- > first;) {
    if (!signature(b, at, "PK\x05\x06")) continue;
    Directory d{le(b, at + 16, 4), le(b, at + 10, 2)};
    if ((d.offset == kUnset32 || d.entries == 0xffff) && at >= 20 && signature(b, at - 20, "PK\x06\x07")) {
      const std::uint64_t end64 = le(b, at - 20 + 8, 8);
      if (end64 < b.size() && signature(b, static_cast<std::size_t>(end64), "PK\x06\x06")) {
        d.entries = le(b, static_cast<std::size_t>(end64) + 32, 8);
        d.offset = le(b, static_cast<std::size_t>(end64) + 48, 8);
      }
    }
    return d;
  }
  return std::nullopt;
}

// The local header offset of a central header whose 32-bit field is unset: the zip64 extra
// field (id 1) lists, in this order, the sizes and then the offset, each only where unset.
std::uint64_t zip64_offset(std::string_view extra, std::uint64_t size, std::uint64_t compressed, std::uint64_t offset) {
  for (std::size_t at = 0; at + 4 <= extra.size();) {
    const auto id = le(extra, at, 2), length = le(extra, at + 2, 2);
    if (id == 1) {
      std::size_t field = at + 4;
      if (size == kUnset32) field += 8;
      if (compressed == kUnset32) field += 8;
      return field + 8 <= at + 4 + length ? le(extra, field, 8) : offset;
    }
    at += 4 + static_cast<std::size_t>(length);
  }
  return offset;
}

// A stored record's bytes, read from its local header; empty where they do not fit.
std::string_view stored_bytes(std::string_view b, std::uint64_t local, std::uint64_t size) {
  if (local >= b.size() || !signature(b, static_cast<std::size_t>(local), "PK\x03\x04")) return {};
  const std::uint64_t start = local + kLocalHeader + le(b, static_cast<std::size_t>(local) + 26, 2) +
                              le(b, static_cast<std::size_t>(local) + 28, 2);
  if (start > b.size() || size > b.size() - start) return {};
  return b.substr(static_cast<std::size_t>(start), static_cast<std::size_t>(size));
}

}  // namespace

bool looks_like_zip(std::string_view bytes) { return signature(bytes, 0, "PK\x03\x04"); }

std::optional<std::vector<ZipRecord>> zip_records(std::string_view b) {
  const auto d = directory(b);
  if (!d) return std::nullopt;
  std::vector<ZipRecord> records;
  std::uint64_t at = d->offset;
  for (std::uint64_t k = 0; k < d->entries && k < kMaxRecords; ++k) {
    if (at >= b.size() || !signature(b, static_cast<std::size_t>(at), "PK\x01\x02")) break;
    const auto h = static_cast<std::size_t>(at);
    const std::uint64_t name_length = le(b, h + 28, 2), extra_length = le(b, h + 30, 2),
                        comment_length = le(b, h + 32, 2);
    if (b.size() - h < kCentralHeader + name_length + extra_length) break;
    ZipRecord r;
    r.name = std::string(b.substr(h + kCentralHeader, static_cast<std::size_t>(name_length)));
    const std::uint64_t compressed = le(b, h + 20, 4), size = le(b, h + 24, 4);
    std::uint64_t local = le(b, h + 42, 4);
    if (local == kUnset32)
      local = zip64_offset(b.substr(h + kCentralHeader + name_length, static_cast<std::size_t>(extra_length)), size,
                           compressed, local);
    r.stored = le(b, h + 10, 2) == 0 && compressed != kUnset32;
    if (r.stored) r.data = stored_bytes(b, local, compressed);
    records.push_back(std::move(r));
    at += kCentralHeader + name_length + extra_length + comment_length;
  }
  return records;
}

}  // namespace distspec
