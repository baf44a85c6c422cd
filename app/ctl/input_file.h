// Reading a file a command was given (a bundle, a signature, a trusted key): the whole of it, and
// when it is missing, a sentence that names what the file was meant to be. Writing a file a
// command makes (a bundle, a report): private and whole, or not at all.
#pragma once

#include "sealtrain/base/result.h"

#include <cstdint>
#include <span>
#include <string>

namespace sealtrain::ctl {

// The file's bytes (base/byte_io.h's readWholeFile). NotFound reads "Cannot read the <what>
// '<path>'; check the path."; other errors are readWholeFile's, which name the file too.
[[nodiscard]] Result<std::string> readInputFile(const std::string& path, const std::string& what);

// A --key argument for an audit verifier: a file (a PEM public key or a verifier key) is read,
// without its final newline; anything else (a fingerprint, a verifier key inline, nothing) is
// the key text itself.
[[nodiscard]] Result<std::string> readTrustedKey(const std::string& value);

// Replaces `path` with `bytes` atomically and readable by the owner only (0600): audit bundles,
// reports and import reports name users and data. A failure leaves no partial file and reads
// "Cannot write the <what> '<path>': <why>".
[[nodiscard]] Result<void> writeOutputFile(const std::string& path,
                                           std::span<const std::uint8_t> bytes,
                                           const std::string& what);

}  // namespace sealtrain::ctl
