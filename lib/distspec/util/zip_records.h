// The records of a zip archive held in memory, read from its central directory (PKWARE
// APPNOTE 4.3.12-4.3.16, zip64 included): names, and the bytes of those stored uncompressed, as
// PyTorch writes every record of its archives (torch.save, TorchScript, AOTInductor packages).
// Arbitrary bytes give nullopt or the records that lie wholly inside them, never a read out of
// range: the model-file reader runs this on whatever a user names (and the fuzzer on anything).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace distspec {

struct ZipRecord {
  std::string name;
  bool stored = false;    // method 0: `data` holds the record's bytes
  std::string_view data;  // into the archive's bytes; empty unless stored
};

// Whether the bytes start as a zip archive does (a local file header, "PK\3\4").
bool looks_like_zip(std::string_view bytes);

// nullopt where no end-of-central-directory record is found (not a zip, or cut short).
std::optional<std::vector<ZipRecord>> zip_records(std::string_view bytes);

}  // namespace distspec
