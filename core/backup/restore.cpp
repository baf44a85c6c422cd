// Checking and restoring a backup (core/backup/backup.h): the outer archive against its signed
// manifest, the payload opened with the backup's keyring, every file against the signed index,
// referenced objects against their digests, the witness rule, and the restore's own entry.
#include "sealtrain/core/backup/backup.h"

#include "backup/format.h"
#include "backup/tar.h"
#include "sealtrain/audit/merkle_tree.h"
#include "sealtrain/audit/proof.h"
#include "sealtrain/audit/tree_head.h"
#include "sealtrain/audit/witness.h"
#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/base/folder_cleanup.h"
#include "sealtrain/core/platform/backup_audit.h"
#include "sealtrain/crypto/dsse.h"
#include "sealtrain/crypto/hash.h"
#include "sealtrain/crypto/sealed.h"
#include "store/files.h"

#include <fmt/format.h>

#include <unistd.h>

#include <array>
#include <map>
#include <memory>
#include <set>
#include <system_error>
#include <utility>
#include <vector>

namespace sealtrain::core {
namespace {

using internal::file;

constexpr std::string_view kPayloadFile = ".payload.sealed";
constexpr std::string_view kPayloadTar = ".payload.tar";
constexpr std::string_view kSupersededWitness = "audit.witness.before-restore";

Error altered(const std::string& what)
{
    return Error(ErrorCode::Integrity,
                 fmt::format("The backup archive was altered or damaged ({}); use an intact copy "
                             "of it.",
                             what));
}

// Discards what it is given: the payload when only its digest is wanted.
class NullSink final : public ByteSink {
public:
    [[nodiscard]] Result<void> write(std::span<const std::uint8_t> /*bytes*/) override
    {
        return success();
    }
};

struct Outer {
    internal::ParsedManifest parsed;
    std::string manifestText;
    crypto::DsseEnvelope envelope;
};

// Reads the outer archive: its four members in order, each against the manifest; the keyring
// and the payload are written into `folder` when one is given.
Result<Outer> readOuter(const std::filesystem::path& archive,
                        const std::optional<std::filesystem::path>& folder)
{
    auto tar = internal::TarReader::open(archive);
    if (!tar)
        return tar.error();
    Outer outer;
    const std::array<std::string_view, 4> order{internal::kManifestMember,
                                                internal::kEnvelopeMember, internal::kKeyringMember,
                                                internal::kPayloadMember};
    std::string envelopeText;
    std::vector<std::uint64_t> sizes;
    for (const std::string_view expected : order) {
        auto member = tar->next();
        if (!member)
            return member.error();
        if (!*member || (*member)->name != expected)
            return altered(fmt::format("its member '{}' is missing or out of place", expected));
        const std::uint64_t size = (*member)->size;
        sizes.push_back(size);
        if (expected == internal::kManifestMember || expected == internal::kEnvelopeMember) {
            MemorySink sink;
            auto read = tar->read(sink, internal::kMaxSmallMember);
            if (!read)
                return read.error();
            const auto& bytes = sink.bytes();
            (expected == internal::kManifestMember ? outer.manifestText : envelopeText)
                .assign(bytes.begin(), bytes.end());
            if (expected == internal::kManifestMember) {
                auto parsed = internal::parseManifest(outer.manifestText);
                if (!parsed)
                    return parsed.error();
                outer.parsed = std::move(*parsed);
            }
            continue;
        }
        const bool isKeyring = expected == internal::kKeyringMember;
        std::unique_ptr<ByteSink> sink;
        if (folder) {
            auto made = AtomicFileSink::create(
                *folder / std::string(isKeyring ? datadir::kKeyring : kPayloadFile));
            if (!made)
                return made.error();
            sink = std::move(*made);
        } else {
            sink = std::make_unique<NullSink>();
        }
        auto digest = tar->read(*sink, isKeyring ? internal::kMaxSmallMember : UINT64_MAX);
        if (!digest)
            return digest.error();
        const auto& want = isKeyring ? outer.parsed.keyringSha256 : outer.parsed.payloadSha256;
        const auto wantSize = isKeyring ? outer.parsed.keyringBytes : outer.parsed.payloadBytes;
        if (toHex(*digest) != want || size != wantSize)
            return altered(fmt::format("its member '{}' does not match the SHA-256 its manifest "
                                       "names",
                                       expected));
        if (folder)
            SEALTRAIN_TRY(static_cast<AtomicFileSink&>(*sink).commit());
    }
    auto extra = tar->next();
    if (!extra)
        return extra.error();
    if (*extra)
        return altered(fmt::format("it holds the unexpected member '{}'", (*extra)->name));
    SEALTRAIN_TRY(internal::checkCanonicalTar(archive, sizes));
    auto envelope = crypto::DsseEnvelope::fromJson(envelopeText);
    if (!envelope)
        return altered("its signature envelope is not DSSE JSON");
    if (envelope->payloadType != kBackupPayloadType
        || std::string(envelope->payload.begin(), envelope->payload.end()) != outer.manifestText)
        return altered("its signature envelope does not carry its manifest");
    outer.envelope = std::move(*envelope);
    return outer;
}

Result<void> checkSignature(const Outer& outer, const crypto::PublicKey& trusted)
{
    if (!crypto::verifyDsse(outer.envelope, trusted))
        return Error(ErrorCode::Unauthenticated,
                     "The backup's manifest is not signed by the platform's audit key; the "
                     "archive was altered or is another platform's: use an intact copy, and the "
                     "signing.pub.pem of the platform that wrote it.");
    return success();
}

// The signed head the manifest names, checked under `trusted`.
Result<audit::TreeHead> checkHead(const BackupManifest& manifest, const crypto::PublicKey& trusted)
{
    auto note = audit::parseSignedNote(manifest.headNote);
    if (!note)
        return altered("its head note is malformed");
    auto text = audit::parseTreeHeadText(note->text);
    if (!text)
        return altered("its head note is malformed");
    auto head = audit::verifyTreeHead(manifest.headNote, {text->origin, trusted});
    if (!head)
        return altered("its head note is not signed by the platform's audit key");
    if (head->size != manifest.head || toBase64(head->root) != manifest.headRoot)
        return altered("its head note does not match its manifest");
    return head;
}

struct Extracted {
    std::uint64_t size = 0;
    std::string sha256;
};

class Restore {
public:
    explicit Restore(const RestoreRequest& request)
        : request_(request)
    {
    }

    Result<RestoreDone> run()
    {
        if (request_.witness.has_value() == request_.withoutWitness)
            return Error(ErrorCode::InvalidArgument,
                         "Name the newest copy of the witness file with --witness FILE, or say "
                         "--without-witness when no copy survives; the restore records which.");
        const auto target = std::filesystem::absolute(request_.target);
        std::error_code ec;
        if (std::filesystem::exists(target, ec) && !std::filesystem::is_empty(target, ec))
            return Error(ErrorCode::AlreadyExists,
                         fmt::format("The data directory '{}' already exists and is not empty; "
                                     "restore into a new folder.",
                                     target.string()));
        auto staging = internal::makeTemporarySibling(target, "restore");
        if (!staging)
            return staging.error();
        staging_ = *staging;
        FolderCleanup cleanup(staging_);

        say(fmt::format("Reading '{}'", request_.archive.string()));
        auto outer = readOuter(request_.archive, staging_);
        if (!outer)
            return outer.error();
        done_.manifest = outer->parsed.manifest;
        SEALTRAIN_TRY(keepPassphrase());
        SEALTRAIN_TRY(unpackPayload());
        const auto trusted = trustedKey();
        if (!trusted)
            return trusted.error();
        SEALTRAIN_TRY(checkSignature(*outer, *trusted));
        auto head = checkHead(done_.manifest, *trusted);
        if (!head)
            return head.error();
        auto ca = crypto::sha256File(file(staging_, datadir::kCaCertificate));
        if (!ca || toHex(*ca) != done_.manifest.caSha256)
            return altered("its CA certificate does not match its manifest");
        SEALTRAIN_TRY(copyReferenced());
        auto witness = readGivenWitness(*trusted, head->origin);
        if (!witness)
            return witness.error();
        SEALTRAIN_TRY(openAndRecord(*head, *witness));
        std::filesystem::rename(staging_, target, ec);
        if (ec)
            return Error(ErrorCode::Io,
                         fmt::format("Cannot move the restored data directory into place at "
                                     "'{}' ({}); check that nothing else created it.",
                                     target.string(), ec.message()));
        cleanup.keep();
        return done_;
    }

private:
    void say(const std::string& line) const
    {
        if (request_.progress)
            request_.progress(line);
    }

    // The passphrase is asked for once, for unlocking the payload and opening the directory.
    Result<void> keepPassphrase()
    {
        unlock_.masterKeyFile = request_.unlock.masterKeyFile;
        if (unlock_.masterKeyFile || !request_.unlock.passphrase)
            return success();
        auto passphrase = request_.unlock.passphrase();
        if (!passphrase)
            return passphrase.error();
        auto kept = std::make_shared<crypto::SecretBytes>(std::move(*passphrase));
        unlock_.passphrase = [kept]() { return kept->copy(); };
        return success();
    }

    Result<void> unpackPayload()
    {
        {
            auto keyring = internal::unlockKeyringFile(file(staging_, datadir::kKeyring), unlock_);
            if (!keyring)
                return keyring.error();
            say("Decrypting the payload");
            auto reader = crypto::SealedReader::open(staging_ / std::string(kPayloadFile),
                                                     keyring->resolver());
            if (!reader)
                return reader.error().withContext("The backup's payload does not open");
            if (reader->metadata().contentType != internal::kPayloadContentType)
                return altered("its payload is not a backup payload");
            auto sink = AtomicFileSink::create(staging_ / std::string(kPayloadTar));
            if (!sink)
                return sink.error();
            SEALTRAIN_TRY(reader->readAll(**sink));
            SEALTRAIN_TRY((*sink)->commit());
        }
        std::error_code ec;
        std::filesystem::remove(staging_ / std::string(kPayloadFile), ec);
        SEALTRAIN_TRY(extract());
        std::filesystem::remove(staging_ / std::string(kPayloadTar), ec);
        return success();
    }

    Result<void> extract()
    {
        auto tar = internal::TarReader::open(staging_ / std::string(kPayloadTar));
        if (!tar)
            return tar.error();
        std::map<std::string, Extracted> extracted;
        std::optional<std::string> index;
        for (;;) {
            auto member = tar->next();
            if (!member)
                return member.error();
            if (!*member)
                break;
            const std::string name = (*member)->name;
            if (index)
                return altered("its payload has a member after its index");
            if (name == internal::kIndexMember) {
                MemorySink sink;
                SEALTRAIN_TRY(tar->read(sink, internal::kMaxIndexMember));
                index.emplace(sink.bytes().begin(), sink.bytes().end());
                continue;
            }
            if (!internal::isRestorableName(name) || extracted.count(name) != 0)
                return altered(fmt::format("its payload names '{}', which a data directory does "
                                           "not hold",
                                           name));
            auto written = writeMember(*tar, name);
            if (!written)
                return written.error();
            extracted.emplace(name, Extracted{(*member)->size, *written});
        }
        if (!index)
            return altered("its payload has no index");
        say(fmt::format("Checked {} files", extracted.size()));
        return checkIndex(*index, extracted);
    }

    Result<std::string> writeMember(internal::TarReader& tar, const std::string& name)
    {
        const auto path = staging_ / name;
        std::error_code ec;
        std::filesystem::create_directories(path.parent_path(), ec);
        if (ec)
            return Error(ErrorCode::Io, fmt::format("Cannot create '{}' ({}); check the free "
                                                    "space and permissions.",
                                                    path.parent_path().string(), ec.message()));
        const bool isPublic =
            name.ends_with(".pem") || name.ends_with(".crt") || name == datadir::kWitness;
        auto sink = AtomicFileSink::create(path, AtomicFileSink::Overwrite::Refuse,
                                           isPublic ? 0644U : AtomicFileSink::kPrivateMode);
        if (!sink)
            return sink.error();
        auto digest = tar.read(**sink, UINT64_MAX);
        if (!digest)
            return digest.error();
        SEALTRAIN_TRY((*sink)->commit());
        return toHex(*digest);
    }

    Result<void> checkIndex(const std::string& text, const std::map<std::string, Extracted>& got)
    {
        const auto json = nlohmann::json::parse(text, nullptr, false);
        try {
            if (json.is_discarded() || json.at("head").get<std::uint64_t>() != done_.manifest.head)
                return altered("its index does not belong to its manifest");
            std::set<std::string> listed;
            for (const auto& item : json.at("files")) {
                const auto path = item.at("path").get<std::string>();
                const auto found = got.find(path);
                if (found == got.end() || found->second.size != item.at("size").get<std::uint64_t>()
                    || found->second.sha256 != item.at("sha256").get<std::string>())
                    return altered(fmt::format("'{}' does not match its index", path));
                listed.insert(path);
            }
            if (listed.size() != got.size() || listed.size() != done_.manifest.files)
                return altered("its payload holds files its index does not list");
            for (const auto& item : json.at("referenced")) {
                const auto path = item.at("path").get<std::string>();
                if (!internal::isRestorableName(path) || got.count(path) != 0)
                    return altered(fmt::format("its index references '{}'", path));
                referenced_.push_back({path, item.at("size").get<std::uint64_t>(),
                                       item.at("sha256").get<std::string>()});
            }
        } catch (const nlohmann::json::exception& e) {
            return altered("its index is malformed: " + asClause(e.what()));
        }
        if (referenced_.size() != done_.manifest.referenced)
            return altered("its index and manifest disagree on the referenced files");
        done_.files = got.size();
        return success();
    }

    [[nodiscard]] Result<crypto::PublicKey> trustedKey() const
    {
        auto inArchive = crypto::PublicKey::fromPemFile(file(staging_, datadir::kSigningPublicKey));
        if (!inArchive)
            return altered("it holds no audit public key");
        if (request_.trustedKey && !(*request_.trustedKey == *inArchive))
            return Error(ErrorCode::Unauthenticated,
                         "The backup is another platform's: its audit key is not the one given "
                         "with --key; restore the right archive, or give its platform's "
                         "signing.pub.pem.");
        return inArchive;
    }

    Result<void> copyReferenced()
    {
        if (referenced_.empty())
            return success();
        if (!request_.objectsFrom)
            return Error(ErrorCode::InvalidArgument,
                         fmt::format("The backup references {} large files by digest (such as "
                                     "'{}'); name the folder that holds them with --objects-from "
                                     "DIR (the old data directory, or a copy of its datasets/, "
                                     "runs/, jobs/ and models/).",
                                     referenced_.size(), referenced_.front().path));
        for (const Reference& reference : referenced_) {
            const auto source = *request_.objectsFrom / reference.path;
            auto opened = FileSource::open(source);
            if (!opened)
                return Error(ErrorCode::NotFound,
                             fmt::format("The backup references '{}' by digest and '{}' does not "
                                         "hold it; point --objects-from at a folder that does.",
                                         reference.path, request_.objectsFrom->string()));
            const auto target = staging_ / reference.path;
            std::error_code ec;
            std::filesystem::create_directories(target.parent_path(), ec);
            auto sink = AtomicFileSink::create(target);
            if (!sink)
                return sink.error();
            crypto::Sha256 hash;
            std::vector<std::uint8_t> piece(std::size_t{1} << 16U);
            for (std::uint64_t at = 0; at < (*opened)->size();) {
                const auto n = static_cast<std::size_t>(
                    std::min<std::uint64_t>(piece.size(), (*opened)->size() - at));
                const std::span<std::uint8_t> view(piece.data(), n);
                SEALTRAIN_TRY((*opened)->readAt(at, view));
                hash.update(view);
                SEALTRAIN_TRY((*sink)->write(view));
                at += n;
            }
            if ((*opened)->size() != reference.size || toHex(hash.finish()) != reference.sha256)
                return Error(ErrorCode::Integrity,
                             fmt::format("'{}' is not the file the backup references (its SHA-256 "
                                         "differs); find the copy that matches, nothing was "
                                         "restored.",
                                         source.string()));
            SEALTRAIN_TRY((*sink)->commit());
        }
        done_.referenced = referenced_.size();
        say(fmt::format("Checked {} referenced files", referenced_.size()));
        return success();
    }

    // The newest head of the witness file given, checked under the platform's key.
    Result<std::optional<audit::TreeHead>> readGivenWitness(const crypto::PublicKey& trusted,
                                                            const std::string& origin)
    {
        if (!request_.witness)
            return std::optional<audit::TreeHead>();
        auto notes = audit::readWitness(*request_.witness);
        if (!notes)
            return notes.error();
        std::optional<audit::TreeHead> newest;
        for (std::size_t i = 0; i < notes->size(); ++i) {
            auto head = audit::verifyTreeHead((*notes)[i], {origin, trusted});
            if (!head)
                return Error(ErrorCode::Integrity,
                             fmt::format("Line {} of the witness file '{}' is not a head signed "
                                         "by this platform's audit key; give this platform's "
                                         "witness file.",
                                         i + 1, request_.witness->string()));
            if (!newest || head->size > newest->size)
                newest = *head;
            givenHeads_.push_back(*head);
        }
        if (newest && newest->size > done_.manifest.head && !request_.acceptLoss)
            return Error(ErrorCode::FailedPrecondition,
                         fmt::format("The witness file recorded a signed head of {} entries, newer "
                                     "than this backup's {}: restoring it would lose the {} "
                                     "entries after it; restore a newer backup, or pass "
                                     "--accept-loss to restore this one anyway (audited).",
                                     newest->size, done_.manifest.head,
                                     newest->size - done_.manifest.head));
        return newest;
    }

    Result<void> openAndRecord(const audit::TreeHead& head,
                               const std::optional<audit::TreeHead>& witness)
    {
        say("Opening the restored data directory");
        DataDirectoryOptions restoring;
        restoring.restoring = true;
        auto directory = DataDirectory::open(staging_, unlock_, restoring);
        if (!directory)
            return directory.error().withContext("The restored data directory does not open");
        const auto& log = (*directory)->controlPlane().auditLog();
        auto root = log.tree().rootAt(head.size);
        if (log.size() != head.size || !root || *root != head.root)
            return altered("its database's audit log is not the one its head signed");
        std::vector<audit::Detail> details{
            audit::textDetail("backup_head", std::to_string(head.size)),
            audit::textDetail("backup_created", done_.manifest.created),
            audit::textDetail("files", std::to_string(done_.files)),
            audit::textDetail("referenced", std::to_string(done_.referenced))};
        auto archiveDigest = crypto::sha256File(request_.archive);
        if (!archiveDigest)
            return archiveDigest.error();
        details.push_back(audit::textDetail("archive_sha256", toHex(*archiveDigest)));
        if (!witness) {
            // Nothing says how far the old platform went after the backup: what may be lost is
            // everything it acknowledged from the backup's moment to this restore.
            details.push_back(audit::textDetail("witness", request_.witness ? "empty" : "none"));
            details.push_back(audit::textDetail("loss_window_from", done_.manifest.created));
            details.push_back(audit::textDetail(
                "loss_window_to",
                audit::formatUtcSeconds(std::chrono::duration_cast<std::chrono::seconds>(
                                            (*directory)->clock().now().time_since_epoch())
                                            .count())));
            details.push_back(audit::textDetail("lost_entries", "unknown"));
        }
        // Every head the witness signed within the backup's log names the backup's history, not
        // only its newest: a witness of another history is refused, --accept-loss or not.
        for (const audit::TreeHead& given : givenHeads_) {
            if (given.size > head.size)
                continue;
            auto at = log.tree().rootAt(given.size);
            if (!at || *at != given.root)
                return Error(ErrorCode::Integrity,
                             fmt::format("The witness file records a history the backup does not "
                                         "hold (its head over {} entries differs); give this "
                                         "platform's witness file.",
                                         given.size));
        }
        if (witness && witness->size <= head.size) {
            details.push_back(audit::textDetail("witness_head", std::to_string(witness->size)));
        } else if (witness) {
            done_.lostEntries = witness->size - head.size;
            details.push_back(audit::textDetail("witness_head", std::to_string(witness->size)));
            details.push_back(audit::textDetail("lost_entries", std::to_string(done_.lostEntries)));
            details.push_back(audit::textDetail("accepted_loss", "yes"));
            std::error_code ec;
            std::filesystem::copy_file(*request_.witness,
                                       staging_ / std::string(kSupersededWitness), ec);
            if (ec)
                return Error(ErrorCode::Io, fmt::format("Cannot keep the newer witness file in the "
                                                        "restored data directory ({}).",
                                                        ec.message()));
        }
        if (witness)
            done_.witnessHead = witness->size;
        std::array<char, 256> host{};
        if (::gethostname(host.data(), host.size() - 1) == 0)
            details.push_back(audit::textDetail("host", host.data()));
        SEALTRAIN_TRY(
            (*directory)
                ->controlPlane()
                .backups()
                .recordRestore(request_.operatorName.empty() ? "operator" : request_.operatorName,
                               std::move(details), !witness || done_.lostEntries > 0));
        done_.restoreEntry = log.size() - 1;
        auto detached = (*directory)->detachRecordedWitnesses();
        if (!detached)
            return detached.error();
        done_.detachedWitnesses = std::move(*detached);
        return (*directory)->signPendingEntries();
    }

    struct Reference {
        std::string path;
        std::uint64_t size = 0;
        std::string sha256;
    };

    const RestoreRequest& request_;
    KeyringUnlock unlock_;
    std::filesystem::path staging_;
    std::vector<Reference> referenced_;
    RestoreDone done_;
    std::vector<audit::TreeHead> givenHeads_;  // every head of the witness file given
};

}  // namespace

Result<BackupManifest> verifyBackup(const std::filesystem::path& archive,
                                    const crypto::PublicKey& trusted)
{
    auto outer = readOuter(archive, std::nullopt);
    if (!outer)
        return outer.error();
    SEALTRAIN_TRY(checkSignature(*outer, trusted));
    SEALTRAIN_TRY(checkHead(outer->parsed.manifest, trusted));
    return outer->parsed.manifest;
}

Result<RestoreDone> restoreBackup(const RestoreRequest& request)
{
    return Restore(request).run();
}

}  // namespace sealtrain::core
