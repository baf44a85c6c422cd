// The witness file: one base64 signed note per line, appended with O_APPEND and fsync.
#include "sealtrain/audit/witness.h"

#include "sealtrain/base/encoding.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>

namespace sealtrain::audit {

Result<void> appendWitness(const std::filesystem::path& file, const std::string& signedNote)
{
    const std::string line = toBase64(asBytes(signedNote)) + "\n";
    const int fd = ::open(file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
    if (fd < 0)
        return Error(ErrorCode::Io, "Cannot open the audit witness file '" + file.string()
                                        + "'; check that its folder exists and is writable.");
    std::size_t written = 0;
    while (written < line.size()) {
        const ssize_t n = ::write(fd, line.data() + written, line.size() - written);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            ::close(fd);
            return Error(ErrorCode::Io, "Cannot write the audit witness file '" + file.string()
                                            + "'; check the disk.");
        }
        written += static_cast<std::size_t>(n);
    }
    const bool synced = ::fsync(fd) == 0;
    ::close(fd);
    if (!synced)
        return Error(ErrorCode::Io, "Cannot flush the audit witness file '" + file.string()
                                        + "' to disk; check the disk.");
    return success();
}

Result<std::vector<std::string>> readWitness(const std::filesystem::path& file)
{
    std::ifstream in(file, std::ios::binary);
    if (!in)
        return Error(ErrorCode::NotFound,
                     "Cannot read the witness file '" + file.string() + "'; check the path.");
    std::vector<std::string> notes;
    std::string line;
    std::size_t number = 0;
    while (std::getline(in, line)) {
        ++number;
        const auto note = fromBase64(line);
        if (!note)
            return Error(ErrorCode::Integrity, "Line " + std::to_string(number)
                                                   + " of the witness file is not base64; the "
                                                     "file was altered.");
        notes.emplace_back(note->begin(), note->end());
    }
    return notes;
}

}  // namespace sealtrain::audit
