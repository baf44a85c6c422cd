// Secrets meant for one person, written to a new private file or printed (secret_output.h).
#include "secret_output.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <ostream>

namespace sealtrain::ctl {

Result<void> writeNewSecretFile(const std::filesystem::path& path, const std::string& secret,
                                std::string_view what)
{
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return Error(ErrorCode::Io, fmt::format("Cannot create '{}' (it must not exist yet); "
                                                "choose a new file for the {}.",
                                                path.string(), what));
    const std::string line = secret + "\n";
    const bool written = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size())
                         && ::fsync(fd) == 0;
    ::close(fd);
    if (!written)
        return Error(ErrorCode::Io,
                     fmt::format("Writing '{}' failed; check the disk.", path.string()));
    return success();
}

Result<void> showSecret(std::ostream& out, const std::string& secret, const std::string& file,
                        std::string_view what, const std::string& printed,
                        const std::string& written)
{
    if (file.empty()) {
        out << printed << "\n  " << secret << "\n";
        return success();
    }
    SEALTRAIN_TRY(writeNewSecretFile(file, secret, what));
    out << written << "\n";
    return success();
}

Result<void> showEnrollment(std::ostream& out, const std::string& user,
                            const std::string& otpauthUri, const std::string& uriFile)
{
    return showSecret(out, otpauthUri, uriFile, "TOTP URI",
                      fmt::format("Add this to {}'s authenticator app (it holds the TOTP secret; "
                                  "do not share it):",
                                  user),
                      fmt::format("Wrote {}'s TOTP enrollment URI to {} (mode 0600); import it "
                                  "into an authenticator app, then delete the file.",
                                  user, uriFile));
}

}  // namespace sealtrain::ctl
