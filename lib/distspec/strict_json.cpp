#include "distspec/strict_json.h"

#include <cmath>
#include <cstdio>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "distspec/error.h"
#include "distspec/utf8.h"

namespace distspec {
namespace {

using Json = nlohmann::ordered_json;

std::string where(std::string_view bytes, std::size_t offset) {
  std::size_t line = 1, line_start = 0;
  for (std::size_t i = 0; i < offset && i < bytes.size(); ++i) {
    if (bytes[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return "at byte " + std::to_string(offset) + " (line " + std::to_string(line) + ", column " +
         std::to_string(offset - line_start + 1) + ")";
}

// nlohmann's explanation without its "[json.exception...] parse error at line L, column C: "
// prefix (we give our own position) and without "; last read: '...'", which quotes raw input.
std::string nlohmann_reason(const std::string& what) {
  std::string text = what;
  if (const auto close = text.find("] "); close != std::string::npos) text.erase(0, close + 2);
  if (text.rfind("parse error", 0) == 0) {
    const auto column = text.find("column ");
    const auto colon = text.find(": ", column == std::string::npos ? 0 : column);
    if (colon != std::string::npos) text.erase(0, colon + 2);
  }
  if (const auto read = text.find("; last read: '"); read != std::string::npos) {
    const auto expected = text.find("'; expected ", read);
    text = text.substr(0, read) +
           (expected == std::string::npos ? std::string() : text.substr(expected + 1));
  }
  return text;
}

// "NaN", "Infinity" or "-Infinity" where the parser stopped, or "". JSON has no such numbers,
// but Python's json.dumps writes them for non-finite floats, so a generated file may hold them.
std::string non_finite_literal(std::string_view bytes, std::size_t offset) {
  const std::string_view rest = bytes.substr(std::min(offset, bytes.size()));
  if (rest.rfind("NaN", 0) == 0) return "NaN";
  if (rest.rfind("Infinity", 0) == 0) return offset > 0 && bytes[offset - 1] == '-' ? "-Infinity" : "Infinity";
  if (rest.rfind("-Infinity", 0) == 0) return "-Infinity";
  return {};
}

// SAX handler that builds an ordered_json while tracking the JSON pointer of the value being
// read, so duplicate keys, excess depth and overflow can be reported where they occur. On a
// problem it records the Error and returns false, which stops nlohmann's parser cleanly.
class TreeBuilder {
 public:
  explicit TreeBuilder(std::string_view bytes) : bytes_(bytes) {}

  bool null() { return put(Json(nullptr)); }
  bool boolean(bool v) { return put(Json(v)); }
  bool number_integer(Json::number_integer_t v) { return put(Json(v)); }
  bool number_unsigned(Json::number_unsigned_t v) { return put(Json(v)); }
  bool number_float(Json::number_float_t v, const Json::string_t& raw) {
    if (!std::isfinite(v)) {
      return fail(error_id::parse, pointer_of_next(), "number " + raw + " is out of range");
    }
    return put(Json(v));
  }
  bool string(Json::string_t& v) { return put(Json(std::move(v))); }
  bool binary(Json::binary_t&) {
    return fail(error_id::parse, pointer_of_next(), "binary values are not JSON");
  }

  bool start_object(std::size_t) { return open(Json::object()); }
  bool start_array(std::size_t) { return open(Json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(Json::string_t& k) {
    Frame& f = stack_.back();
    if (!f.keys.insert(k).second) {
      return fail(error_id::duplicate_key, f.pointer + "/" + json_pointer_token(k),
                  "duplicate key " + quote(k), "each key may appear once in an object");
    }
    f.key = std::move(k);
    return true;
  }

  bool parse_error(std::size_t position, const std::string&, const nlohmann::json::exception& ex) {
    // nlohmann reports how many bytes it consumed; the byte it stopped at is the one before,
    // or the end of input when it ran out.
    std::size_t offset = position == 0 ? 0 : std::min(position - 1, bytes_.size());
    const std::string pointer = stack_.empty() ? std::string() : stack_.back().pointer;
    // Every byte before the stop was accepted, so invalid UTF-8 at or before it is the cause
    // (inside a string nlohmann stops one byte late, outside one it calls it a bad literal).
    const std::size_t bad = first_invalid_utf8(bytes_);
    if (bad != std::string_view::npos && bad <= offset) {
      char byte[8];
      std::snprintf(byte, sizeof byte, "0x%02x", static_cast<unsigned char>(bytes_[bad]));
      return fail(error_id::parse, pointer,
                  "invalid UTF-8 " + where(bytes_, bad) + ": byte " + byte,
                  "the file must be UTF-8 encoded");
    }
    // nlohmann rejects an overflowing number before number_float() sees it: name its pointer too.
    constexpr std::string_view kOverflow = "number overflow parsing '";
    const std::string reason = nlohmann_reason(ex.what());
    if (const auto at = reason.find(kOverflow); at != std::string::npos) {
      const auto start = at + kOverflow.size();
      const std::string number = reason.substr(start, reason.find('\'', start) - start);
      return fail(error_id::parse, pointer_of_next(),
                  "number " + number + " " + where(bytes_, offset) + " is out of range",
                  "the value must be a finite number a double can hold");
    }
    if (const std::string literal = non_finite_literal(bytes_, offset); !literal.empty()) {
      return fail(error_id::parse, pointer_of_next(),
                  "non-finite number " + literal + " " + where(bytes_, offset) + " is not JSON",
                  "the value must be a finite number; Python's json writes NaN/Infinity for non-finite "
                  "floats, so the program that wrote this file produced them: fix or regenerate it");
    }
    return fail(error_id::parse, pointer,
                "invalid JSON " + where(bytes_, offset) + ": " + nlohmann_reason(ex.what()));
  }

  Json take_root() { return std::move(root_); }
  const std::optional<Error>& error() const { return error_; }

 private:
  struct Frame {
    Json* node;                  // not owning: points into root_
    std::string pointer;         // JSON pointer of this container
    std::string key;             // pending key (objects)
    std::set<std::string> keys;  // keys seen so far (objects)
  };

  std::string pointer_of_next() const {
    if (stack_.empty()) return {};
    const Frame& f = stack_.back();
    if (f.node->is_object()) return f.pointer + "/" + json_pointer_token(f.key);
    return f.pointer + "/" + std::to_string(f.node->size());
  }

  // Adds v where the parser is (root, array end, or under the pending key). The parent of the
  // innermost open container is never modified while that container is open, so the pointers
  // kept in stack_ stay valid.
  Json* place(Json v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Json& parent = *stack_.back().node;
    if (parent.is_array()) {
      parent.push_back(std::move(v));
      return &parent.back();
    }
    // key() has ruled out repeats, so append without ordered_map's linear search for the key
    // (which would make reading an object quadratic in its size).
    auto& members = static_cast<Json::object_t::Container&>(parent.get_ref<Json::object_t&>());
    members.emplace_back(std::move(stack_.back().key), std::move(v));
    return &members.back().second;
  }

  bool put(Json v) {
    place(std::move(v));
    return true;
  }

  bool open(Json container) {
    std::string pointer = pointer_of_next();
    if (stack_.size() >= kMaxJsonDepth) {
      return fail(error_id::parse, pointer,
                  "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    }
    Json* node = place(std::move(container));
    stack_.push_back(Frame{node, std::move(pointer), {}, {}});
    return true;
  }

  bool close() {
    stack_.pop_back();
    return true;
  }

  bool fail(const char* id, std::string pointer, std::string message, std::string hint = {}) {
    if (!error_) error_.emplace(id, std::move(pointer), std::move(message), std::move(hint));
    return false;
  }

  std::string_view bytes_;
  Json root_;
  std::vector<Frame> stack_;
  std::optional<Error> error_;
};

}  // namespace

std::string json_pointer_token(std::string_view key) {
  std::string token;
  token.reserve(key.size());
  for (char c : key) {
    switch (c) {
      case '~': token += "~0"; break;
      case '/': token += "~1"; break;
      default: token += c;
    }
  }
  return token;
}

nlohmann::ordered_json parse_json_strict(std::string_view bytes, const std::string& file) {
  if (bytes.empty()) {
    throw Error(error_id::parse, "", "empty input", "expected a JSON object", file);
  }
  TreeBuilder builder(bytes);
  bool ok = false;
  try {
    ok = Json::sax_parse(bytes.data(), bytes.data() + bytes.size(), &builder);
  } catch (const nlohmann::json::exception& e) {
    // sax_parse reports through parse_error(); this is a safety net for anything it throws.
    throw Error(error_id::parse, "", std::string("invalid JSON: ") + nlohmann_reason(e.what()), {},
                file);
  }
  if (!ok) {
    if (builder.error()) throw builder.error()->with_file(file);
    throw Error(error_id::parse, "", "invalid JSON", {}, file);
  }
  return builder.take_root();
}

}  // namespace distspec
