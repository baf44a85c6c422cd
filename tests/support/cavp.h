// One reader for the "Key = Value" vector files of NIST CAVP (.rsp) and of the RFC test cases
// that Debian's python3-cryptography-vectors ships in the same shape (RFC 4231, RFC 5869).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace sealtrain::testing {

using CavpRecord = std::map<std::string, std::string>;

// The records of `path`, in file order. A record starts at its "Count"/"COUNT" line when the file
// numbers its records, and at a blank line when it does not; "[Name = value]" section lines apply
// to the records after them; a bare "FAIL" line adds the key "FAIL" (a record that must not
// verify); '#' lines are comments. Keys and values are trimmed of spaces.
[[nodiscard]] std::vector<CavpRecord> readCavpRecords(const std::filesystem::path& path);

}  // namespace sealtrain::testing
