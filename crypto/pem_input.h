// Reading PEM input that people hand us, for crypto/'s .cpp files only: exactly one block
// (anything but whitespace after its END line is refused, so a second key or a certificate
// smuggled behind the first is never silently ignored), and never a password prompt (OpenSSL's
// default password callback reads the terminal; ours refuses and remembers that it was asked).
#pragma once

#include "sealtrain/base/result.h"

#include "openssl_handles.h"

#include <string_view>

namespace sealtrain::crypto::pem {

// OpenSSL's pem_password_cb: gives no password, so an encrypted PEM fails to decode instead of
// prompting; `asked` (a bool*) is set to true when OpenSSL wanted one.
int refusePassword(char* buffer, int size, int encrypting, void* asked);

// A memory BIO over `text` (which must outlive it) once the text is one PEM block; InvalidArgument
// naming `what` when anything follows the first block's END line.
[[nodiscard]] Result<openssl::BioPtr> singleBlock(std::string_view text, std::string_view what);

// The private key in `text` (one PEM block), never prompting: InvalidArgument with a sentence of
// its own for an encrypted key, else with `notAKey` when OpenSSL can not read it.
[[nodiscard]] Result<openssl::PkeyPtr> readPrivateKey(std::string_view text, std::string_view what,
                                                      std::string_view notAKey);

}  // namespace sealtrain::crypto::pem
