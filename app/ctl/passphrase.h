// Reading a passphrase for a command: from a file (scripts, the quickstart) or from the
// terminal without echo. The passphrase only ever lives in SecretBytes.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/crypto/secret_bytes.h"

#include <filesystem>
#include <string>
#include <string_view>

namespace sealtrain::ctl {

// The file's first line (without its line ending). Refuses a file other users can read.
[[nodiscard]] Result<crypto::SecretBytes> readPassphraseFile(const std::filesystem::path& path);

// The options that answer a prompt instead: the keyring passphrase's, and a user password's.
inline constexpr std::string_view kPassphraseFileOption = "--passphrase-file FILE";
inline constexpr std::string_view kPasswordFileOption = "--password-file FILE";

// Asks on the controlling terminal with echo off; with `confirm`, asks twice and compares.
// Fails with one sentence when there is no terminal, naming `answeredBy` (the option and its
// argument, "--password-file FILE"), the command's own way to give the answer instead.
[[nodiscard]] Result<crypto::SecretBytes>
promptPassphrase(const std::string& prompt, bool confirm,
                 std::string_view answeredBy = kPassphraseFileOption);

// The file when one is given, the terminal otherwise.
[[nodiscard]] Result<crypto::SecretBytes>
obtainPassphrase(const std::string& passphraseFile, const std::string& prompt, bool confirm,
                 std::string_view answeredBy = kPassphraseFileOption);

}  // namespace sealtrain::ctl
