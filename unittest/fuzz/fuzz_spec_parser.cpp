// libFuzzer target for the spec reader. Findings: a crash or sanitizer report, any exception
// other than distspec::Error (it escapes and aborts), and a spec whose canonical bytes are not
// a fixed point of write -> read -> write.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "distspec/spec/python_json.h"
#include "distspec/spec/spec_json.h"
#include "distspec/strict_json.h"

namespace {

[[noreturn]] void finding(const char* what) {
  std::fprintf(stderr, "fuzz_spec_parser finding: %s\n", what);
  std::abort();
}

// Any document the strict parser accepts must survive the Python-exact writer unchanged.
void check_json_round_trip(std::string_view bytes) {
  nlohmann::ordered_json doc;
  try {
    doc = distspec::parse_json_strict(bytes);
  } catch (const distspec::Error&) {
    return;
  }
  const std::string text = distspec::dump_python_json(doc);
  if (distspec::parse_json_strict(text) != doc)
    finding("dump_python_json does not read back to the same value");
}

void check_spec_round_trip(std::string_view bytes) {
  distspec::MLIPSpec spec;
  try {
    spec = distspec::read_mlip_spec(bytes, "fuzz.json");
  } catch (const distspec::Error&) {
    return;  // rejected cleanly: fine
  }
  // What was read must be writable and read back to itself, and writing again must be stable.
  const std::string once = distspec::write_mlip_spec(spec);
  const distspec::MLIPSpec again = distspec::read_mlip_spec(once);
  if (again != spec) finding("write -> read changed the spec");
  if (distspec::write_mlip_spec(again) != once) finding("write -> read -> write changed the bytes");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  check_json_round_trip(bytes);
  check_spec_round_trip(bytes);
  return 0;
}
