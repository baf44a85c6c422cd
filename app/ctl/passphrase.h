// Reading a passphrase for a command: from a file (scripts, the quickstart) or from the
// terminal without echo. The passphrase only ever lives in SecretBytes.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/crypto/secret_bytes.h"

#include <filesystem>
#include <string>

namespace sealtrain::ctl {

// The file's first line (without its line ending). Refuses a file other users can read.
[[nodiscard]] Result<crypto::SecretBytes> readPassphraseFile(const std::filesystem::path& path);

// Asks on the controlling terminal with echo off; with `confirm`, asks twice and compares.
// Fails with one sentence when there is no terminal (then --passphrase-file is the way).
[[nodiscard]] Result<crypto::SecretBytes> promptPassphrase(const std::string& prompt, bool confirm);

// The file when one is given, the terminal otherwise.
[[nodiscard]] Result<crypto::SecretBytes> obtainPassphrase(const std::string& passphraseFile,
                                                           const std::string& prompt, bool confirm);

}  // namespace sealtrain::ctl
