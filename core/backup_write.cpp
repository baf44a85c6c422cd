// Taking a backup (core/backup.h): a signed head, the database copied through SQLite's backup
// API, the files and sealed objects in a sealed tar payload, and the outer archive with the
// signed manifest, all while the caller holds the control plane still.
#include "sealtrain/core/backup.h"

#include "backup_format.h"
#include "backup_tar.h"
#include "data_directory_files.h"
#include "sealtrain/audit/tree_head.h"
#include "sealtrain/audit/witness.h"
#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/base/folder_cleanup.h"
#include "sealtrain/base/version.h"
#include "sealtrain/core/backup_audit.h"
#include "sealtrain/crypto/dsse.h"
#include "sealtrain/crypto/hash.h"
#include "sealtrain/crypto/random.h"
#include "sealtrain/crypto/sealed.h"

#include <fmt/format.h>

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

class ArchiveWriter {
public:
    ArchiveWriter(DataDirectory& directory, const BackupOptions& options)
        : directory_(directory)
        , options_(options)
        , dataDir_(directory.path())
    {
    }

    Result<BackupMade> write()
    {
        SEALTRAIN_TRY(directory_.signPendingEntries());
        const auto& log = directory_.controlPlane().auditLog();
        made_.head = log.size();
        auto note = headNote(log, made_.head);
        if (!note)
            return note.error();
        auto head = audit::verifyTreeHead(*note, log.verifier());
        if (!head)
            return head.error();
        made_.folder = dataDir_ / fmt::format(".backup-{}", toHex(crypto::randomBytes(6)));
        std::error_code ec;
        if (!std::filesystem::create_directory(made_.folder, ec) || ec)
            return Error(ErrorCode::Io,
                         fmt::format("Cannot create the backup's folder in '{}' ({}); check the "
                                     "data directory's permissions and free space.",
                                     dataDir_.string(), ec.message()));
        FolderCleanup cleanup(made_.folder);
        std::filesystem::permissions(made_.folder, std::filesystem::perms::owner_all,
                                     std::filesystem::perm_options::replace, ec);
        auto key = deriveDatabaseKey(directory_.keyring());
        if (!key)
            return key.error();
        SEALTRAIN_TRY(directory_.database().snapshotTo(made_.folder / "control.db", *key));
        SEALTRAIN_TRY(writePayload());
        std::filesystem::remove(made_.folder / "control.db", ec);

        BackupManifest manifest;
        manifest.created = audit::formatUtcSeconds(std::chrono::duration_cast<std::chrono::seconds>(
                                                       directory_.clock().now().time_since_epoch())
                                                       .count());
        manifest.version = kVersion;
        manifest.head = made_.head;
        manifest.headRoot = toBase64(head->root);
        manifest.headNote = *note;
        auto ca = crypto::sha256File(file(dataDir_, datadir::kCaCertificate));
        if (!ca)
            return ca.error();
        manifest.caSha256 = toHex(*ca);
        manifest.files = made_.files;
        manifest.referenced = made_.referenced;
        manifest.referencedBytes = made_.referencedBytes;
        SEALTRAIN_TRY(writeOuter(manifest));
        cleanup.keep();
        return std::move(made_);
    }

private:
    Result<void> addFile(internal::TarWriter& tar, const std::string& name,
                         const std::filesystem::path& source)
    {
        std::error_code ec;
        const auto size = std::filesystem::file_size(source, ec);
        if (ec)
            return Error(ErrorCode::Io, fmt::format("Cannot read '{}' for the backup ({}); check "
                                                    "the data directory's permissions.",
                                                    source.string(), ec.message()));
        auto digest = tar.addFile(name, source);
        if (!digest)
            return digest.error();
        files_.push_back({name, size, toHex(*digest)});
        ++made_.files;
        return success();
    }

    Result<void> addObjects(internal::TarWriter& tar, std::string_view folder)
    {
        const auto root = dataDir_ / std::string(folder);
        std::error_code ec;
        if (!std::filesystem::is_directory(root, ec))
            return success();
        std::vector<std::filesystem::path> found;
        for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
             !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
            if (it->is_symlink(ec))
                return Error(ErrorCode::Integrity,
                             fmt::format("'{}' is a link; a data directory holds only plain "
                                         "files, so move it away before the backup.",
                                         it->path().string()));
            if (it->is_regular_file(ec))
                found.push_back(it->path());
        }
        if (ec)
            return Error(ErrorCode::Io, fmt::format("Cannot list '{}' for the backup ({}); check "
                                                    "the data directory's permissions.",
                                                    root.string(), ec.message()));
        std::sort(found.begin(), found.end());
        for (const auto& path : found) {
            const std::string relative = path.lexically_relative(dataDir_).generic_string();
            if (!isBackedUp(relative))
                continue;
            const auto size = std::filesystem::file_size(path, ec);
            if (ec)
                return Error(ErrorCode::Io, fmt::format("Cannot read '{}' for the backup ({}).",
                                                        path.string(), ec.message()));
            if (size <= options_.referenceOver) {
                SEALTRAIN_TRY(addFile(tar, relative, path));
                continue;
            }
            auto digest = crypto::sha256File(path);
            if (!digest)
                return digest.error();
            referenced_.push_back({relative, size, toHex(*digest)});
            ++made_.referenced;
            made_.referencedBytes += size;
        }
        return success();
    }

    Result<void> writePayload()
    {
        auto kek = directory_.keyring().activeKek(std::string(internal::kPayloadKekId));
        if (!kek)
            return kek.error();
        auto sealed = crypto::SealedWriter::create(
            made_.folder / std::string(internal::kPayloadMember), **kek,
            {std::string(internal::kPayloadContentType),
             nlohmann::json{{"format", kBackupFormat}, {"head", made_.head}}.dump()});
        if (!sealed)
            return sealed.error();
        SealingSink sink(*sealed);
        auto tar = internal::TarWriter::create(sink);
        if (!tar)
            return tar.error();
        for (const std::string_view name : internal::kTopLevelFiles) {
            const bool isDatabase = name == datadir::kDatabase;
            const auto source = isDatabase ? made_.folder / "control.db" : file(dataDir_, name);
            std::error_code ec;
            if (!std::filesystem::exists(source, ec))
                continue;
            SEALTRAIN_TRY(addFile(*tar, std::string(name), source));
        }
        for (const std::string_view folder : internal::kObjectFolders)
            SEALTRAIN_TRY(addObjects(*tar, folder));
        SEALTRAIN_TRY(tar->addBytes(std::string(internal::kIndexMember),
                                    asBytes(indexJson(files_, referenced_, made_.head).dump(1))));
        SEALTRAIN_TRY(tar->finish());
        return sealed->finish();
    }

    Result<void> writeOuter(const BackupManifest& manifest)
    {
        const auto payloadPath = made_.folder / std::string(internal::kPayloadMember);
        auto payloadDigest = crypto::sha256File(payloadPath);
        if (!payloadDigest)
            return payloadDigest.error();
        std::error_code ec;
        const auto payloadBytes = std::filesystem::file_size(payloadPath, ec);
        auto keyring = readWholeFile(file(dataDir_, datadir::kKeyring));
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

        made_.archive = made_.folder / std::string(kArchiveName);
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

    DataDirectory& directory_;
    const BackupOptions& options_;
    std::filesystem::path dataDir_;
    BackupMade made_;
    std::vector<IndexedFile> files_;
    std::vector<IndexedFile> referenced_;
};

}  // namespace

Result<BackupMade> takeBackup(DataDirectory& directory, const std::string& session,
                              const BackupOptions& options)
{
    BackupMade made;
    auto taken = directory.controlPlane().backups().take(
        session, [&]() -> Result<std::vector<audit::Detail>> {
            if (options.busy)
                return Error(ErrorCode::ResourceExhausted,
                             "Another backup is being taken or sent; try again when it "
                             "finishes.");
            auto written = ArchiveWriter(directory, options).write();
            if (!written)
                return written.error();
            made = std::move(*written);
            return std::vector<audit::Detail>{
                audit::textDetail("head", std::to_string(made.head)),
                audit::textDetail("archive_sha256", made.sha256),
                audit::textDetail("bytes", std::to_string(made.bytes)),
                audit::textDetail("files", std::to_string(made.files)),
                audit::textDetail("referenced", std::to_string(made.referenced))};
        });
    if (!taken) {
        if (!made.folder.empty()) {
            std::error_code ec;
            std::filesystem::remove_all(made.folder, ec);
        }
        return taken.error();
    }
    return made;
}

}  // namespace sealtrain::core
