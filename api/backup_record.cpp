// The profile's note of its last backup (backup_record.h; docs/formats/client-profile.md).
#include "sealtrain/api/backup_record.h"

#include "sealtrain/api/profile.h"
#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/encoding.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <system_error>

namespace sealtrain::api {
namespace {

constexpr const char* kFileName = "last-backup.json";
constexpr const char* kFormat = "sealtrain-last-backup/1";
constexpr std::uint64_t kMaxNoteBytes = std::uint64_t{64} * 1024;

Error unreadable(const std::filesystem::path& path)
{
    return Error(ErrorCode::Integrity,
                 fmt::format("The note of the last backup, {}, is not one Sealtrain wrote; remove "
                             "it (the archives themselves are untouched).",
                             path.string()));
}

}  // namespace

Result<void> rememberBackup(const Profile& profile, const BackupRecord& record)
{
    std::error_code error;
    const std::filesystem::path archive = std::filesystem::absolute(record.archive, error);
    const nlohmann::ordered_json note{{"format", kFormat},
                                      {"archive", (error ? record.archive : archive).string()},
                                      {"taken_unix", record.takenUnix},
                                      {"endpoint", record.endpoint},
                                      {"audit_entries", record.facts.head},
                                      {"sha256", record.facts.sha256},
                                      {"bytes", record.facts.bytes},
                                      {"files", record.facts.files},
                                      {"referenced", record.facts.referenced},
                                      {"referenced_bytes", record.facts.referencedBytes}};
    const std::string text = note.dump(2) + "\n";
    return writeFileAtomically(profile.folder() / kFileName, asBytes(text),
                               AtomicFileSink::Overwrite::Allow);
}

Result<std::optional<BackupRecord>> lastBackup(const Profile& profile)
{
    const std::filesystem::path path = profile.folder() / kFileName;
    std::error_code error;
    if (!std::filesystem::exists(path, error))
        return std::optional<BackupRecord>();
    std::string text;
    SEALTRAIN_ASSIGN(text, readWholeFile(path, kMaxNoteBytes));
    const auto note = nlohmann::json::parse(text, nullptr, false);
    if (!note.is_object() || note.value("format", "") != kFormat)
        return unreadable(path);
    try {
        BackupRecord record;
        record.archive = note.at("archive").get<std::string>();
        record.takenUnix = note.at("taken_unix").get<std::int64_t>();
        record.endpoint = note.at("endpoint").get<std::string>();
        record.facts.head = note.at("audit_entries").get<std::uint64_t>();
        record.facts.sha256 = note.at("sha256").get<std::string>();
        record.facts.bytes = note.at("bytes").get<std::uint64_t>();
        record.facts.files = note.at("files").get<std::uint64_t>();
        record.facts.referenced = note.at("referenced").get<std::uint64_t>();
        record.facts.referencedBytes = note.at("referenced_bytes").get<std::uint64_t>();
        return std::optional<BackupRecord>(std::move(record));
    } catch (const nlohmann::json::exception&) {
        return unreadable(path);
    }
}

}  // namespace sealtrain::api
