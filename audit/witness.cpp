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

Result<void> FileWitness::record(const std::string& signedNote, std::size_t /*storedHeads*/)
{
    return appendWitness(file_, signedNote);
}

Result<void> FileWitness::check(const WitnessedLog& log)
{
    const std::string name = "The audit witness file '" + file_.string() + "'";
    const std::string lost = " but the database holds " + std::to_string(log.storedHeads)
                             + " signed heads; put back its newest copy, or accept the loss as "
                               "docs/operations/data-directory.md#witnesses says (audited).";
    std::error_code ec;
    if (!std::filesystem::exists(file_, ec))
        return log.storedHeads == 0
                   ? success()
                   : Result<void>(
                       Error(ErrorCode::Integrity, name + " is missing" + lost).because(kMissing));
    auto notes = readWitness(file_);
    if (!notes)
        return notes.error();
    if (notes->empty())
        return log.storedHeads == 0
                   ? success()
                   : Result<void>(
                       Error(ErrorCode::Integrity, name + " is empty" + lost).because(kEmpty));
    // The newest witnessed head is the one with the largest size; the others are consistent
    // with it, because the log never signs a head inconsistent with an earlier one.
    std::size_t newest = 0;
    std::uint64_t newestSize = 0;
    for (std::size_t i = 0; i < notes->size(); ++i) {
        const std::string where = "Line " + std::to_string(i + 1) + " of the audit witness file";
        auto parsed = parseSignedNote((*notes)[i]);
        if (!parsed)
            return parsed.error().withContext(where);
        auto head = parseTreeHeadText(parsed->text);
        if (!head)
            return head.error().withContext(where);
        if (i == 0 || head->size >= newestSize) {
            newest = i;
            newestSize = head->size;
        }
    }
    auto witnessed = verifyTreeHead((*notes)[newest], log.verifier);
    if (!witnessed)
        return Error(ErrorCode::Integrity,
                     "Line " + std::to_string(newest + 1)
                         + " of the audit witness file is not a head signed by this log; the "
                           "witness file was altered, compare it with its copies.")
            .because(kDiffers);
    if (witnessed->size > log.tree.size())
        return Error(ErrorCode::Integrity,
                     "The database holds " + std::to_string(log.tree.size())
                         + " audit entries but its witness file recorded a signed head of "
                         + std::to_string(witnessed->size) + " on "
                         + formatUtcSeconds(witnessed->timeSeconds)
                         + ", so the database is an older copy (a restored backup would bring "
                           "back revoked sessions and grants); restore the newest database, or "
                           "see docs/operations/data-directory.md to accept the loss.")
            .because(kAhead);
    auto root = log.tree.rootAt(witnessed->size);
    if (!root || *root != witnessed->root)
        return Error(ErrorCode::Integrity,
                     "The database's audit log differs from the head its witness file recorded "
                     "at size "
                         + std::to_string(witnessed->size)
                         + ", so the log was rewritten; restore the database from a backup and "
                           "verify it.")
            .because(kDiffers);
    return success();
}

}  // namespace sealtrain::audit
