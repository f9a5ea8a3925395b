// The one exception type of the DISTSPEC core. Everything the core rejects (a malformed spec,
// an unreadable file, a bad model parameter) is reported as a distspec::Error that says where
// (file, JSON pointer), what (message) and how to fix it (hint), so the LAMMPS glue can hand
// the text to error->all() unchanged and tests can pin it.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace distspec {

// Stable ids: callers may branch on them and tests pin them; texts may be reworded, ids not.
namespace error_id {
inline constexpr char parse[] = "spec.parse";                  // bytes are not acceptable JSON
inline constexpr char duplicate_key[] = "spec.duplicate_key";  // an object repeats a key
inline constexpr char type[] = "spec.type";                    // a value has the wrong JSON type
inline constexpr char missing_key[] = "spec.missing_key";      // a required key is absent
inline constexpr char value[] = "spec.value";                  // right type, unacceptable value
inline constexpr char version[] = "spec.version";              // not MLIPSpec version 2
inline constexpr char io[] = "spec.io";                        // a file cannot be read
}  // namespace error_id

class Error : public std::runtime_error {
 public:
  // `pointer` is a JSON pointer (RFC 6901) to the offending value, e.g. "/core/policy/kind";
  // any of pointer, hint and file may be empty and are then left out of what().
  Error(std::string id, std::string pointer, std::string message, std::string hint = {},
        std::string file = {});

  const std::string& id() const noexcept { return id_; }
  const std::string& file() const noexcept { return file_; }
  const std::string& pointer() const noexcept { return pointer_; }
  const std::string& message() const noexcept { return message_; }
  const std::string& hint() const noexcept { return hint_; }

  // Copies with one part replaced: the reader of a file learns the file name only after a
  // nested parser threw, and a spec embedded in a model file lives under a prefix (/spec).
  Error with_file(std::string file) const;
  Error with_pointer_prefix(const std::string& prefix) const;

 private:
  // what() = "FILE: POINTER: MESSAGE; HINT", empty parts left out.
  static std::string compose(const std::string& file, const std::string& pointer,
                             const std::string& message, const std::string& hint);

  std::string id_;
  std::string file_;
  std::string pointer_;
  std::string message_;
  std::string hint_;
};

// `text` in single quotes for a message: printable ASCII kept, other bytes as \xNN, cut after
// 64 bytes ("..."), so a hostile name cannot garble a terminal or a log line.
std::string quote(std::string_view text);

}  // namespace distspec
