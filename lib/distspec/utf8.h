// UTF-8 decoding as RFC 3629 defines it (no overlong forms, no surrogates, nothing above
// U+10FFFF), shared by the strict JSON reader and the Python-exact writer.
#pragma once

#include <cstddef>
#include <string_view>

namespace distspec {

// The code point of the sequence at s[i], advancing i past it; -1 (i unchanged) when the bytes
// there are not well-formed UTF-8.
inline long decode_utf8(std::string_view s, std::size_t& i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  const std::size_t len = b0 < 0x80             ? 1
                          : (b0 & 0xE0) == 0xC0 ? 2
                          : (b0 & 0xF0) == 0xE0 ? 3
                          : (b0 & 0xF8) == 0xF0 ? 4
                                                : 0;
  if (len == 0 || i + len > s.size()) return -1;
  long cp = len == 1 ? b0 : b0 & (0x7F >> len);
  for (std::size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return -1;
    cp = (cp << 6) | (b & 0x3F);
  }
  constexpr long kMinForLength[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMinForLength[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return -1;
  i += len;
  return cp;
}

// Offset of the first byte that does not start a well-formed sequence, or npos.
inline std::size_t first_invalid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    if (decode_utf8(s, i) < 0) return i;
  }
  return std::string_view::npos;
}

}  // namespace distspec
