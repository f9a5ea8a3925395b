#include "distspec/error.h"

#include <cstdio>
#include <utility>

namespace distspec {

Error::Error(std::string id, std::string pointer, std::string message, std::string hint,
             std::string file)
    : std::runtime_error(compose(file, pointer, message, hint)),
      id_(std::move(id)),
      file_(std::move(file)),
      pointer_(std::move(pointer)),
      message_(std::move(message)),
      hint_(std::move(hint)) {}

Error Error::with_file(std::string file) const {
  return Error(id_, pointer_, message_, hint_, std::move(file));
}

Error Error::with_pointer_prefix(const std::string& prefix) const {
  return Error(id_, prefix + pointer_, message_, hint_, file_);
}

std::string Error::compose(const std::string& file, const std::string& pointer,
                           const std::string& message, const std::string& hint) {
  std::string text;
  for (const std::string* part : {&file, &pointer}) {
    if (!part->empty()) text += *part + ": ";
  }
  text += message;
  if (!hint.empty()) text += "; " + hint;
  return text;
}

std::string quote(std::string_view text) {
  constexpr std::size_t kMaxBytes = 64;
  std::string out = "'";
  for (std::size_t i = 0; i < text.size() && i < kMaxBytes; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7F && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  if (text.size() > kMaxBytes) out += "...";
  return out + "'";
}

}  // namespace distspec
