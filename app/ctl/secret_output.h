// How sealtrainctl hands over a secret meant for one person (an enrolment or reset code, a TOTP
// URI): to a new file of mode 0600 that the command creates, or printed once with a warning.
#pragma once

#include "sealtrain/base/result.h"

#include <filesystem>
#include <iosfwd>
#include <string>
#include <string_view>

namespace sealtrain::ctl {

// Writes `secret` and a newline to `path`, a new file of mode 0600 (refused when it exists);
// `what` names the secret in the error ("TOTP URI").
[[nodiscard]] Result<void> writeNewSecretFile(const std::filesystem::path& path,
                                              const std::string& secret, std::string_view what);

// Shows a secret meant for one person: written to `file` (writeNewSecretFile, `what` naming it)
// and then the line `written` printed, when a file is given; else the line `printed` and the
// secret indented on the next line.
[[nodiscard]] Result<void> showSecret(std::ostream& out, const std::string& secret,
                                      const std::string& file, std::string_view what,
                                      const std::string& printed, const std::string& written);

// Shows a new enrollment's otpauth:// URI (it holds the TOTP secret): written to `uriFile`, a new
// file of mode 0600, when one is given, else printed to `out` with a warning.
[[nodiscard]] Result<void> showEnrollment(std::ostream& out, const std::string& user,
                                          const std::string& otpauthUri,
                                          const std::string& uriFile);

}  // namespace sealtrain::ctl
