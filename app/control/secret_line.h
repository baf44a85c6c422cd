// A secret handed to sealtrain-control on its standard input, one a line: the keyring passphrase
// (serving, init, restore) and the first admin's password (init). Never in argv, the environment
// or a file (docs/operations/control-daemon.md, "The data directory tools").
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/crypto/secret_bytes.h"

#include <string_view>

namespace sealtrain::control {

// The next line of standard input, read byte by byte with read(2) so that no stdio buffer keeps a
// copy, without its newline (and a carriage return before it). InvalidArgument naming `what` when
// the line is empty, missing or longer than 4095 bytes, with `instead` (what else to give) after.
[[nodiscard]] Result<crypto::SecretBytes> readSecretLine(std::string_view what,
                                                         std::string_view instead);

}  // namespace sealtrain::control
