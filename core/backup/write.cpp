// Taking a backup (core/backup/backup.h) in three steps: the moment (a signed head, the database
// copied through SQLite's backup API, the small files copied, the sealed objects listed) while the
// control plane is held; the sealed payload and the outer archive with its signed manifest while
// it serves; the entry.
#include "sealtrain/core/backup/backup.h"

#include "backup/format.h"
#include "backup/tar.h"
#include "sealtrain/audit/tree_head.h"
#include "sealtrain/audit/witness.h"
#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/base/folder_cleanup.h"
#include "sealtrain/base/version.h"
#include "sealtrain/core/platform/backup_audit.h"
#include "sealtrain/crypto/dsse.h"
#include "sealtrain/crypto/hash.h"
#include "sealtrain/crypto/random.h"
#include "sealtrain/crypto/sealed.h"
#include "store/files.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <system_error>
#include <utility>
#include <vector>

namespace sealtrain::core {
namespace {

using internal::file;

constexpr std::string_view kArchiveName = "sealtrain-backup.tar";

struct IndexedFile {
    std::string path;
    std::uint64_t size = 0;
    std::string sha256;
};

nlohmann::json indexJson(const std::vector<IndexedFile>& files,
                         const std::vector<IndexedFile>& referenced, std::uint64_t head)
{
    auto list = [](const std::vector<IndexedFile>& items) {
        auto array = nlohmann::json::array();
        for (const IndexedFile& item : items)
            array.push_back({{"path", item.path}, {"size", item.size}, {"sha256", item.sha256}});
        return array;
    };
    return {{"format", kBackupFormat},
            {"head", head},
            {"files", list(files)},
            {"referenced", list(referenced)}};
}

// The plaintext of the payload goes through this into its sealed object.
class SealingSink final : public ByteSink {
public:
    explicit SealingSink(crypto::SealedWriter& writer)
        : writer_(writer)
    {
    }
    [[nodiscard]] Result<void> write(std::span<const std::uint8_t> bytes) override
    {
        return writer_.write(bytes);
    }

private:
    crypto::SealedWriter& writer_;
};

// The signed head over all `size` entries, from the witness file the log appends it to.
Result<std::string> headNote(const audit::AuditLog& log, std::uint64_t size)
{
    if (!log.witnessFile())
        return Error(ErrorCode::Internal, "The audit log keeps no witness file.");
    auto notes = audit::readWitness(*log.witnessFile());
    if (!notes)
        return notes.error();
    for (auto note = notes->rbegin(); note != notes->rend(); ++note) {
        auto head = audit::verifyTreeHead(*note, log.verifier());
        if (head && head->size == size)
            return *note;
    }
    return Error(ErrorCode::Internal,
                 fmt::format("The witness file holds no signed head over {} entries.", size));
}

// Whether a file under an object folder is a backup's: not in a hidden (staging) folder, not an
// upload still waiting in jobs/incoming/.
bool isBackedUp(const std::string& relative)
{
    if (relative.rfind("jobs/incoming/", 0) == 0)
        return false;
    return relative.front() != '.' && relative.find("/.") == std::string::npos;
}

Error unreadable(const std::filesystem::path& path, const std::error_code& ec)
{
    return Error(ErrorCode::Io, fmt::format("Cannot read '{}' for the backup ({}); check the data "
                                            "directory's permissions.",
                                            path.string(), ec.message()));
}

// The plain files under DATA/`folder` a backup holds, with their sizes now.
Result<void> listObjects(const std::filesystem::path& dataDir, std::string_view folder,
                         std::vector<PreparedBackup::Object>& objects)
{
    const auto root = dataDir / std::string(folder);
    std::error_code ec;
    if (!std::filesystem::is_directory(root, ec))
        return success();
    for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
        if (it->is_symlink(ec))
            return Error(ErrorCode::Integrity,
                         fmt::format("'{}' is a link; a data directory holds only plain files, so "
                                     "move it away before the backup.",
                                     it->path().string()));
        if (!it->is_regular_file(ec))
            continue;
        const std::string relative = it->path().lexically_relative(dataDir).generic_string();
        if (!isBackedUp(relative))
            continue;
        const auto size = it->file_size(ec);
        if (ec)
            return unreadable(it->path(), ec);
        objects.push_back({relative, size});
    }
    if (ec)
        return unreadable(root, ec);
    return success();
}

Result<PreparedBackup> takeMoment(DataDirectory& directory, const BackupOptions& options)
{
    PreparedBackup prepared;
    prepared.options = options;
    const auto& dataDir = directory.path();
    SEALTRAIN_TRY(directory.signPendingEntries());
    const auto& log = directory.controlPlane().auditLog();
    prepared.head = log.size();
    auto note = headNote(log, prepared.head);
    if (!note)
        return note.error();
    auto head = audit::verifyTreeHead(*note, log.verifier());
    if (!head)
        return head.error();
    prepared.headNote = *note;
    prepared.headRoot = toBase64(head->root);
    prepared.created = audit::formatUtcSeconds(
        std::chrono::duration_cast<std::chrono::seconds>(directory.clock().now().time_since_epoch())
            .count());

    prepared.folder = dataDir / fmt::format(".backup-{}", toHex(crypto::randomBytes(6)));
    std::error_code ec;
    if (!std::filesystem::create_directory(prepared.folder, ec) || ec)
        return Error(ErrorCode::Io,
                     fmt::format("Cannot create the backup's folder in '{}' ({}); check the data "
                                 "directory's permissions and free space.",
                                 dataDir.string(), ec.message()));
    FolderCleanup cleanup(prepared.folder);
    std::filesystem::permissions(prepared.folder, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::replace, ec);
    auto key = deriveDatabaseKey(directory.keyring());
    if (!key)
        return key.error();
    SEALTRAIN_TRY(
        directory.database().snapshotTo(prepared.folder / std::string(datadir::kDatabase), *key));
    prepared.copied.emplace_back(datadir::kDatabase);
    std::vector<std::string_view> small(internal::kTopLevelFiles.begin(),
                                        internal::kTopLevelFiles.end());
    small.push_back(datadir::kKeyring);
    for (const std::string_view name : small) {
        if (name == datadir::kDatabase || !std::filesystem::exists(file(dataDir, name), ec))
            continue;
        std::filesystem::copy_file(file(dataDir, name), file(prepared.folder, name), ec);
        if (ec)
            return unreadable(file(dataDir, name), ec);
        prepared.copied.emplace_back(name);
    }
    for (const std::string_view folder : internal::kObjectFolders)
        SEALTRAIN_TRY(listObjects(dataDir, folder, prepared.objects));
    std::sort(prepared.objects.begin(), prepared.objects.end(),
              [](const auto& a, const auto& b) { return a.path < b.path; });
    cleanup.keep();
    return prepared;
}

class ArchiveWriter {
public:
    ArchiveWriter(const DataDirectory& directory, const PreparedBackup& prepared)
        : directory_(directory)
        , prepared_(prepared)
    {
        made_.folder = prepared.folder;
        made_.head = prepared.head;
    }

    Result<BackupMade> write()
    {
        SEALTRAIN_TRY(writePayload());
        BackupManifest manifest;
        manifest.created = prepared_.created;
        manifest.version = kVersion;
        manifest.head = prepared_.head;
        manifest.headRoot = prepared_.headRoot;
        manifest.headNote = prepared_.headNote;
        auto ca = crypto::sha256File(file(prepared_.folder, datadir::kCaCertificate));
        if (!ca)
            return ca.error();
        manifest.caSha256 = toHex(*ca);
        manifest.files = made_.files;
        manifest.referenced = made_.referenced;
        manifest.referencedBytes = made_.referencedBytes;
        SEALTRAIN_TRY(writeOuter(manifest));
        std::error_code ec;
        for (const std::string& name : prepared_.copied)
            std::filesystem::remove(file(prepared_.folder, name), ec);
        return std::move(made_);
    }

private:
    Result<void> addFile(internal::TarWriter& tar, const std::string& name,
                         const std::filesystem::path& source, std::uint64_t listedSize)
    {
        auto digest = tar.addFile(name, source);
        if (!digest)
            return digest.error();
        std::error_code ec;
        if (std::filesystem::file_size(source, ec) != listedSize || ec)
            return changed(name);
        files_.push_back({name, listedSize, toHex(*digest)});
        ++made_.files;
        return success();
    }

    static Error changed(const std::string& name)
    {
        return Error(ErrorCode::FailedPrecondition,
                     fmt::format("'{}' changed while the backup was written; take the backup "
                                 "again.",
                                 name));
    }

    Result<void> writePayload()
    {
        auto kek = directory_.keyring().activeKek(std::string(internal::kPayloadKekId));
        if (!kek)
            return kek.error();
        auto sealed = crypto::SealedWriter::create(
            prepared_.folder / std::string(internal::kPayloadMember), **kek,
            {std::string(internal::kPayloadContentType),
             nlohmann::json{{"format", kBackupFormat}, {"head", prepared_.head}}.dump()});
        if (!sealed)
            return sealed.error();
        SealingSink sink(*sealed);
        auto tar = internal::TarWriter::create(sink);
        if (!tar)
            return tar.error();
        for (const std::string& name : prepared_.copied) {
            if (name == datadir::kKeyring)
                continue;  // beside the payload, not in it
            std::error_code ec;
            const auto copy = file(prepared_.folder, name);
            SEALTRAIN_TRY(addFile(*tar, name, copy, std::filesystem::file_size(copy, ec)));
        }
        for (const PreparedBackup::Object& object : prepared_.objects) {
            const auto path = directory_.path() / object.path;
            if (object.size <= prepared_.options.referenceOver) {
                SEALTRAIN_TRY(addFile(*tar, object.path, path, object.size));
                continue;
            }
            auto digest = crypto::sha256File(path);
            std::error_code ec;
            if (!digest || std::filesystem::file_size(path, ec) != object.size || ec)
                return changed(object.path);
            referenced_.push_back({object.path, object.size, toHex(*digest)});
            ++made_.referenced;
            made_.referencedBytes += object.size;
        }
        SEALTRAIN_TRY(
            tar->addBytes(std::string(internal::kIndexMember),
                          asBytes(indexJson(files_, referenced_, prepared_.head).dump(1))));
        SEALTRAIN_TRY(tar->finish());
        return sealed->finish();
    }

    Result<void> writeOuter(const BackupManifest& manifest)
    {
        const auto payloadPath = prepared_.folder / std::string(internal::kPayloadMember);
        auto payloadDigest = crypto::sha256File(payloadPath);
        if (!payloadDigest)
            return payloadDigest.error();
        std::error_code ec;
        const auto payloadBytes = std::filesystem::file_size(payloadPath, ec);
        auto keyring = readWholeFile(file(prepared_.folder, datadir::kKeyring));
        if (!keyring)
            return keyring.error();
        const std::string manifestText =
            internal::manifestJson(manifest, toHex(crypto::sha256(asBytes(*keyring))),
                                   keyring->size(), toHex(*payloadDigest), payloadBytes)
                .dump(2)
            + "\n";
        const std::string envelope =
            crypto::signDsse(kBackupPayloadType, asBytes(manifestText), directory_.signingKey())
                .toJson();

        made_.archive = prepared_.folder / std::string(kArchiveName);
        auto sink = AtomicFileSink::create(made_.archive);
        if (!sink)
            return sink.error();
        auto tar = internal::TarWriter::create(**sink, internal::TarWriter::Format::Gnu);
        if (!tar)
            return tar.error();
        SEALTRAIN_TRY(tar->addBytes(std::string(internal::kManifestMember), asBytes(manifestText)));
        SEALTRAIN_TRY(tar->addBytes(std::string(internal::kEnvelopeMember), asBytes(envelope)));
        SEALTRAIN_TRY(tar->addBytes(std::string(internal::kKeyringMember), asBytes(*keyring)));
        auto added = tar->addFile(std::string(internal::kPayloadMember), payloadPath);
        if (!added)
            return added.error();
        SEALTRAIN_TRY(tar->finish());
        SEALTRAIN_TRY((*sink)->commit());
        std::filesystem::remove(payloadPath, ec);
        auto digest = crypto::sha256File(made_.archive);
        if (!digest)
            return digest.error();
        made_.sha256 = toHex(*digest);
        made_.bytes = std::filesystem::file_size(made_.archive, ec);
        return success();
    }

    const DataDirectory& directory_;
    const PreparedBackup& prepared_;
    BackupMade made_;
    std::vector<IndexedFile> files_;
    std::vector<IndexedFile> referenced_;
};

void removeFolder(const std::filesystem::path& folder)
{
    std::error_code ec;
    if (!folder.empty())
        std::filesystem::remove_all(folder, ec);
}

}  // namespace

Result<PreparedBackup> prepareBackup(DataDirectory& directory, const std::string& session,
                                     const BackupOptions& options)
{
    BackupAudit& audit = directory.controlPlane().backups();
    SEALTRAIN_TRY(audit.admit(session));
    Result<PreparedBackup> prepared =
        options.busy ? Result<PreparedBackup>(Error(ErrorCode::ResourceExhausted,
                                                    "Another backup is being taken or sent; try "
                                                    "again when it finishes."))
                     : takeMoment(directory, options);
    if (!prepared) {
        (void)audit.record(session, prepared.error());
        return prepared.error();
    }
    return prepared;
}

Result<BackupMade> writeBackup(const DataDirectory& directory, const PreparedBackup& prepared)
{
    return ArchiveWriter(directory, prepared).write();
}

Result<BackupMade> recordBackup(DataDirectory& directory, const std::string& session,
                                const PreparedBackup& prepared, Result<BackupMade> written)
{
    Result<std::vector<audit::Detail>> facts = Error(ErrorCode::Internal, "No backup.");
    if (written)
        facts = std::vector<audit::Detail>{
            audit::textDetail("head", std::to_string(written->head)),
            audit::textDetail("archive_sha256", written->sha256),
            audit::textDetail("bytes", std::to_string(written->bytes)),
            audit::textDetail("files", std::to_string(written->files)),
            audit::textDetail("referenced", std::to_string(written->referenced))};
    else
        facts = written.error();
    auto recorded = directory.controlPlane().backups().record(session, std::move(facts));
    if (!recorded || !written) {
        removeFolder(prepared.folder);
        return recorded ? written.error() : recorded.error();
    }
    return written;
}

Result<BackupMade> takeBackup(DataDirectory& directory, const std::string& session,
                              const BackupOptions& options)
{
    auto prepared = prepareBackup(directory, session, options);
    if (!prepared)
        return prepared.error();
    return recordBackup(directory, session, *prepared, writeBackup(directory, *prepared));
}

}  // namespace sealtrain::core
