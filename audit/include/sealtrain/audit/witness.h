// The witness file: every signed head the log issues is also appended to a file outside its
// store (another disk, a WORM mount, a file a monitoring host pulls), one line per head:
// base64 of the signed note text. Restoring an old database, or rewriting the log and its heads,
// then shows up as a witness head the store no longer agrees with (docs/formats/audit.md).
#pragma once

#include "sealtrain/base/result.h"

#include <filesystem>
#include <string>
#include <vector>

namespace sealtrain::audit {

// Appends one head and flushes it to disk (O_APPEND, fsync).
[[nodiscard]] Result<void> appendWitness(const std::filesystem::path& file,
                                         const std::string& signedNote);
// Every head in the file, oldest first. Strict: a malformed line is an Integrity error.
[[nodiscard]] Result<std::vector<std::string>> readWitness(const std::filesystem::path& file);

}  // namespace sealtrain::audit
