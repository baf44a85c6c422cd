// Opening and creating a data directory: the keyring, the database, the sealed platform keys,
// the audit key, the witness file and the control plane over them.
#include "sealtrain/core/data_directory/data_directory.h"
#include "sealtrain/core/registry/exports/export_folder.h"

#include "audit/witnesses.h"
#include "keys.h"
#include "platform/starts.h"
#include "registry/base_models.h"
#include "registry/exports/model_signing_key.h"
#include "sealtrain/audit/forward_spool.h"
#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/base/folder_cleanup.h"
#include "sealtrain/base/logging.h"
#include "sealtrain/base/paths.h"
#include "sealtrain/core/identity/password.h"
#include "sealtrain/core/keys/key_release.h"
#include "sealtrain/core/store/sql_audit_store.h"
#include "sealtrain/crypto/hkdf.h"
#include "sealtrain/crypto/key_file.h"
#include "sealtrain/crypto/model_signing.h"
#include "sealtrain/crypto/random.h"
#include "sealtrain/crypto/sealed.h"
#include "sealtrain/formats/checkpoint.h"
#include "store/files.h"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>

namespace sealtrain::core {
namespace {

using internal::createKeyring;
using internal::createPlatformKeys;
using internal::createPurposeKeys;
using internal::deriveAuditKey;
using internal::file;
using internal::makeTemporarySibling;
using internal::readPublicFile;
using internal::sealSecret;
using internal::unsealSecret;

constexpr std::string_view kOrigin = "sealtrain.local/control";
constexpr std::string_view kDatabaseKekId = "database";  // also seals the CLI session

Error notInitialised(const std::filesystem::path& dataDir)
{
    return Error(ErrorCode::NotFound,
                 fmt::format("There is no initialised data directory at '{}'; create one with "
                             "'sealtrainctl init --data-dir {}' or pass the right --data-dir.",
                             dataDir.string(), dataDir.string()));
}

Result<crypto::Keyring> unlockKeyring(const std::filesystem::path& dataDir,
                                      const KeyringUnlock& unlock)
{
    const auto path = file(dataDir, datadir::kKeyring);
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        return notInitialised(dataDir);
    return internal::unlockKeyringFile(path, unlock);
}

}  // namespace

// An exclusive lock on DATA/lock for as long as a process has the data directory open: one
// writer at a time (the daemon, or one command in the workstation mode).
class DirectoryLock {
public:
    [[nodiscard]] static Result<DirectoryLock> take(const std::filesystem::path& dataDir)
    {
        const auto path = file(dataDir, datadir::kLock);
        const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0)
            return Error(ErrorCode::Io, fmt::format("Cannot open the lock file '{}': {}; check "
                                                    "the data directory's permissions.",
                                                    path.string(), std::strerror(errno)));
        DirectoryLock lock(fd);
        if (::flock(fd, LOCK_EX | LOCK_NB) != 0)
            return Error(ErrorCode::Io,
                         fmt::format("The data directory '{}' is open in another process "
                                     "(sealtrain-control serving it, or another command); while "
                                     "it serves, use sealtrainctl as its client, or stop it "
                                     "first (`sealtrainctl stop` on a workstation).",
                                     dataDir.string()));
        return lock;
    }

    DirectoryLock(DirectoryLock&& other) noexcept
        : fd_(std::exchange(other.fd_, -1))
    {
    }
    DirectoryLock& operator=(DirectoryLock&&) = delete;
    DirectoryLock(const DirectoryLock&) = delete;
    DirectoryLock& operator=(const DirectoryLock&) = delete;
    ~DirectoryLock()
    {
        if (fd_ >= 0)
            ::close(fd_);  // releases the lock
    }

private:
    explicit DirectoryLock(int fd)
        : fd_(fd)
    {
    }
    int fd_;
};

struct DataDirectory::State {
    std::optional<DirectoryLock> lock;  // first in, last out
    std::filesystem::path dataDir;
    audit::SystemClock systemClock;
    const audit::Clock* clock = nullptr;
    std::optional<crypto::Keyring> keyring;
    std::unique_ptr<Database> database;
    std::unique_ptr<SqlAuditStore> store;
    std::optional<crypto::SigningKey> signingKey;
    std::optional<crypto::SigningKey> manifestsKey;
    std::optional<crypto::SigningKey> checkpointsKey;
    std::optional<crypto::SigningKey> registryKey;
    std::optional<audit::AuditKey> auditKey;
    std::optional<crypto::CertificateAuthority> ca;
    std::optional<crypto::CertificateAuthority> artefactRoot;
    bool artefactRootCreated = false;  // here, for a data directory from before issue #48
    std::optional<internal::ModelSigningIdentity> modelSigning;
    // The forwarder reads the log through a connection of its own, on its own thread; it
    // outlives the plane's log.
    std::unique_ptr<Database> forwardDatabase;
    std::unique_ptr<SqlAuditStore> forwardStore;
    std::unique_ptr<audit::DurableForwarder> forwarder;
    std::optional<internal::Witnesses> witnesses;  // outlive the plane's log
    std::unique_ptr<ControlPlane> plane;

    // Everything but the keyring, which the caller has unlocked or created.
    Result<void> openRest(const DataDirectoryOptions& options)
    {
        clock = options.clock != nullptr ? options.clock : &systemClock;
        const auto dbPath = file(dataDir, datadir::kDatabase);
        std::error_code ec;
        if (!std::filesystem::exists(dbPath, ec))
            return notInitialised(dataDir);
        auto opened = Database::openWithKeyring(dbPath, *keyring);
        if (!opened)
            return opened.error();
        database = std::move(*opened);
        store = std::make_unique<SqlAuditStore>(*database);
        SEALTRAIN_TRY(loadKeys());
        audit::LogOptions logOptions;
        logOptions.origin = std::string(kOrigin);
        logOptions.policy = options.headPolicy;
        logOptions.witnessFile = file(dataDir, datadir::kWitness);
        const auto normalised =
            [&](const std::vector<std::string>& given) -> Result<std::vector<std::string>> {
            std::vector<std::string> all;
            for (const auto& location : given) {
                auto normal = internal::normaliseWitnessLocation(location, dataDir);
                if (!normal)
                    return normal.error();
                all.push_back(std::move(*normal));
            }
            return all;
        };
        std::vector<std::string> configured;
        std::vector<std::string> detached;
        SEALTRAIN_ASSIGN(configured, normalised(options.auditWitnesses));
        SEALTRAIN_ASSIGN(detached, normalised(options.detachWitnesses));
        std::shared_ptr<const crypto::SecretBytes> tpmOwnerAuth;
        if (!options.tpmOwnerAuthFile.empty()) {
            auto read = internal::readTpmOwnerAuth(options.tpmOwnerAuthFile);
            if (!read)
                return read.error();
            tpmOwnerAuth = std::move(*read);
        }
        auto recorded = options.restoring
                            ? Result<internal::Witnesses>(internal::Witnesses())
                            : internal::Witnesses::recorded(*database, std::move(tpmOwnerAuth));
        if (!recorded)
            return recorded.error();
        witnesses.emplace(std::move(*recorded));
        logOptions.witnesses = witnesses->forLog();
        logOptions.acceptWitnessLoss = options.acceptWitnessLoss;
        if (!options.auditForward.empty()) {
            SEALTRAIN_TRY(startForwarder(options, dbPath));
            logOptions.forwarder = forwarder.get();
        }
        auto openedPlane = ControlPlane::open(*database, *store, *signingKey, &*auditKey, *clock,
                                              options.controlPlane, std::move(logOptions));
        if (!openedPlane)
            return openedPlane.error();
        plane = std::move(*openedPlane);
        SEALTRAIN_TRY(witnesses->settle(
            *database, plane->platformChanges(), configured, options.acceptWitnessLoss,
            std::chrono::duration_cast<std::chrono::seconds>(clock->now().time_since_epoch())
                .count(),
            detached));
        SEALTRAIN_TRY(recordTrustRootChanges());
        return loadJobPolicy();
    }

    // The audit forwarder (issue #49): its target, a second connection to the database and the
    // cursor beside it.
    Result<void> startForwarder(const DataDirectoryOptions& options,
                                const std::filesystem::path& dbPath)
    {
        audit::TargetOptions targetOptions;
        targetOptions.caFile = options.auditForwardCa;
        targetOptions.certificateFile = options.auditForwardCertificate;
        targetOptions.keyFile = options.auditForwardKey;
        auto target = audit::openForwardTarget(options.auditForward, targetOptions);
        if (!target)
            return target.error();
        auto opened = Database::openWithKeyring(dbPath, *keyring);
        if (!opened)
            return opened.error();
        forwardDatabase = std::move(*opened);
        forwardStore = std::make_unique<SqlAuditStore>(*forwardDatabase);
        auto started = audit::DurableForwarder::start(std::move(*target), *forwardStore,
                                                      file(dataDir, datadir::kForwardCursor),
                                                      std::string(kOrigin));
        if (!started)
            return started.error();
        forwarder = std::move(*started);
        return success();
    }

    // What opening changed about the trust roots, audited (issue #48): the artefact root made
    // for a data directory from before it, and a model-signing certificate issued anew.
    [[nodiscard]] Result<void> recordTrustRootChanges() const
    {
        if (artefactRootCreated) {
            auto fingerprint = crypto::certificateFingerprint(artefactRoot->certificatePem());
            if (!fingerprint)
                return fingerprint.error();
            SEALTRAIN_TRY(plane->recordPlatformChange(
                "platform.artefact_root", {audit::textDetail("fingerprint", *fingerprint)}));
        }
        if (!modelSigning->replaced.empty() && modelSigning->replaced != "first") {
            auto fingerprint = crypto::certificateFingerprint(modelSigning->certificatePem);
            if (!fingerprint)
                return fingerprint.error();
            SEALTRAIN_TRY(
                plane->recordPlatformChange("platform.model_signing_certificate",
                                            {audit::textDetail("fingerprint", *fingerprint),
                                             audit::textDetail("reason", modelSigning->replaced)}));
        }
        return success();
    }

    // The admin's job policy, when there is one; a malformed one stops the open, naming the field.
    [[nodiscard]] Result<void> loadJobPolicy() const
    {
        const auto path = file(dataDir, datadir::kJobPolicy);
        std::error_code ec;
        if (!std::filesystem::exists(path, ec))
            return success();
        auto text = readWholeFile(path);
        if (!text)
            return text.error();
        auto policy = parseJobPolicy(*text);
        if (!policy)
            return policy.error().withContext(fmt::format("In '{}'", path.string()));
        plane->scheduler().setPolicy(*policy);
        plane->jobs().setPolicy(std::move(policy).value());
        return success();
    }

    [[nodiscard]] Result<crypto::SigningKey> loadSigningKey(std::string_view keyFile,
                                                            const char* what) const
    {
        auto seed = unsealSecret(file(dataDir, keyFile), keyring->resolver(), what);
        if (!seed)
            return seed.error();
        return crypto::SigningKey::fromSeed(*seed);
    }

    Result<void> loadKeys()
    {
        const auto resolver = keyring->resolver();
        SEALTRAIN_TRY(createPurposeKeys(dataDir, *keyring));
        for (auto [slot, keyFile, what] :
             {std::tuple{&signingKey, datadir::kSigningKey, "audit signing key"},
              std::tuple{&manifestsKey, datadir::kManifestsKey, "manifest signing key"},
              std::tuple{&checkpointsKey, datadir::kCheckpointsKey, "checkpoint signing key"},
              std::tuple{&registryKey, datadir::kRegistryKey, "registry signing key"}}) {
            auto key = loadSigningKey(keyFile, what);
            if (!key)
                return key.error();
            slot->emplace(std::move(*key));
        }
        auto caKey = unsealSecret(file(dataDir, datadir::kCaKey), resolver, "platform CA key");
        if (!caKey)
            return caKey.error();
        auto caCertificate = readPublicFile(file(dataDir, datadir::kCaCertificate));
        if (!caCertificate)
            return caCertificate.error();
        auto loaded = crypto::CertificateAuthority::load(*caCertificate, *caKey);
        if (!loaded)
            return loaded.error();
        ca.emplace(std::move(*loaded));
        auto root = internal::loadArtefactRoot(dataDir, *keyring, artefactRootCreated);
        if (!root)
            return root.error();
        artefactRoot.emplace(std::move(*root));
        auto signer = internal::loadModelSigningIdentity(dataDir, *keyring, *artefactRoot);
        if (!signer)
            return signer.error();
        modelSigning.emplace(std::move(*signer));
        auto audit = deriveAuditKey(*keyring);
        if (!audit)
            return audit.error();
        auditKey.emplace(std::move(*audit));
        return success();
    }

    // Fills the empty folder `dir` with a new data directory and creates the first admin.
    [[nodiscard]] static Result<Enrollment> populate(const std::filesystem::path& dir,
                                                     const NewDataDirectory& request,
                                                     const DataDirectoryOptions& options)
    {
        auto keyring = createKeyring(file(dir, datadir::kKeyring), request);
        if (!keyring)
            return keyring.error();
        SEALTRAIN_TRY(createPlatformKeys(dir, *keyring));
        auto databaseKey = deriveDatabaseKey(*keyring);
        if (!databaseKey)
            return databaseKey.error();
        {
            // Creates the file, with no schema yet: the control plane's open migrates it from 0,
            // and audits that (platform.migrate) as the log's first entry.
            DatabaseOptions empty;
            empty.schemaVersion = 0;
            auto database = Database::open(file(dir, datadir::kDatabase), *databaseKey, empty);
            if (!database)
                return database.error();
        }
        State state;
        state.dataDir = dir;
        state.keyring.emplace(std::move(*keyring));
        SEALTRAIN_TRY(state.openRest(options));
        auto enrollment = state.plane->identity().init(request.adminName, request.adminPassword);
        if (!enrollment)
            return enrollment.error();
        auto head = state.plane->auditLog().signHead();
        if (!head)
            return head.error();
        return enrollment;
    }
};

DataDirectory::DataDirectory(std::unique_ptr<State> state)
    : state_(std::move(state))
{
}

DataDirectory::~DataDirectory() = default;

namespace {

// What a process killed in the middle of an upload left behind: a dataset import's staging folder
// (datasets/.import-*, sealed shards not yet registered) and checkpoint uploads not yet accepted
// (jobs/incoming/*). Nothing in them was ever recorded, so nothing refers to them. Removed when the
// directory is opened with its one-writer lock held, so no other process is using them
// (issue #27: a SIGKILL mid-import left an 83 MB folder that restarts kept), and a backup's
// folder (DATA/.backup-*) whose archive was never sent on.
void removeAbandonedUploads(const std::filesystem::path& dataDir)
{
    std::error_code ec;
    std::vector<std::filesystem::path> abandoned;
    for (const auto& entry :
         std::filesystem::directory_iterator(file(dataDir, datadir::kDatasets), ec)) {
        if (entry.path().filename().string().rfind(".import-", 0) == 0)
            abandoned.push_back(entry.path());
    }
    for (const auto& entry : std::filesystem::directory_iterator(dataDir / "jobs" / "incoming", ec))
        abandoned.push_back(entry.path());
    // An export staged for a download the daemon did not finish (core/registry/exports/staging.h).
    for (const auto& entry :
         std::filesystem::directory_iterator(file(dataDir, datadir::kDownloads), ec))
        abandoned.push_back(entry.path());
    // A backup's archive not yet sent on (core/backup/backup.h).
    for (const auto& entry : std::filesystem::directory_iterator(dataDir, ec))
        if (entry.path().filename().string().rfind(".backup-", 0) == 0)
            abandoned.push_back(entry.path());
    for (const auto& folder : abandoned) {
        std::error_code removed;
        std::filesystem::remove_all(folder, removed);
        log::info("datadir", "removed what an interrupted upload left behind",
                  {{"path", folder.string()}, {"ok", removed ? "no" : "yes"}});
    }
}

}  // namespace

Result<std::unique_ptr<DataDirectory>> DataDirectory::open(const std::filesystem::path& path,
                                                           const KeyringUnlock& unlock,
                                                           const DataDirectoryOptions& options)
{
    auto state = std::make_unique<State>();
    state->dataDir = path;
    std::error_code ec;
    if (std::filesystem::exists(file(path, datadir::kKeyring), ec)) {
        auto lock = DirectoryLock::take(path);
        if (!lock)
            return lock.error();
        state->lock.emplace(std::move(lock).value());
    }
    auto keyring = unlockKeyring(path, unlock);
    if (!keyring)
        return keyring.error();
    state->keyring.emplace(std::move(*keyring));
    SEALTRAIN_TRY(state->openRest(options));
    SEALTRAIN_TRY(state->plane->keyringChanges().requireNotRolledBack(*state->keyring));
    if (state->lock)
        removeAbandonedUploads(path);
    auto opened = std::unique_ptr<DataDirectory>(new DataDirectory(std::move(state)));
    opened->connectRegistry();
    return opened;
}

Result<Enrollment> DataDirectory::create(const NewDataDirectory& request,
                                         const DataDirectoryOptions& options)
{
    if (request.passphrase.has_value() == request.masterKeyFile.has_value())
        return Error(ErrorCode::InvalidArgument,
                     "Give either a passphrase or a master key file for the new keyring.");
    const std::filesystem::path target =
        request.path.empty() ? defaultDataDir() : std::filesystem::absolute(request.path);
    std::error_code ec;
    if (std::filesystem::exists(target, ec) && !std::filesystem::is_empty(target, ec))
        return Error(ErrorCode::AlreadyExists,
                     fmt::format("The data directory '{}' already exists and is not empty; choose "
                                 "another --data-dir or move it away first.",
                                 target.string()));
    auto temporary = makeTemporarySibling(target, "init");
    if (!temporary)
        return temporary.error();
    FolderCleanup cleanup(*temporary);
    auto enrollment = State::populate(*temporary, request, options);
    if (!enrollment)
        return enrollment.error();
    std::filesystem::rename(*temporary, target, ec);
    if (ec)
        return Error(ErrorCode::Io, fmt::format("Cannot move the new data directory into place "
                                                "at '{}' ({}); check that nothing else created it.",
                                                target.string(), ec.message()));
    cleanup.keep();
    return enrollment;
}

const std::filesystem::path& DataDirectory::path() const noexcept
{
    return state_->dataDir;
}

crypto::Keyring& DataDirectory::keyring() noexcept
{
    return *state_->keyring;
}

const crypto::Keyring& DataDirectory::keyring() const noexcept
{
    return *state_->keyring;
}

Database& DataDirectory::database() noexcept
{
    return *state_->database;
}

ControlPlane& DataDirectory::controlPlane() noexcept
{
    return *state_->plane;
}

const crypto::SigningKey& DataDirectory::signingKey() const noexcept
{
    return *state_->signingKey;
}

void DataDirectory::connectRegistry()
{
    Registry& registry = state_->plane->registry();
    registry.setSigningKey(&*state_->registryKey);
    registry.setCheckpointCheck(
        [this](const JobCheckpoint& recorded, const std::string& signerPem) -> Result<std::string> {
            return ReturnedCheckpoints(keyVault()).checkedJobCheckpoint(recorded, signerPem);
        });
    registry.setExportBuilder(
        [this](const JobCheckpoint& recorded, const std::string& signerPem,
               const std::string& modelName) -> Result<ExportFolder> {
            return buildExportFolder(
                ReturnedCheckpoints(keyVault()), baseModels(),
                [this](std::string_view statement) { return signModelStatement(statement); },
                recorded, signerPem, modelName);
        },
        file(path(), datadir::kDownloads));
    registry.setImportStore(
        [this](const ImportModel& upload, const std::string& name, std::int64_t version,
               const ImportAccept& accept) {
            return storeImport(baseModels(), upload, name, version, accept);
        },
        [this](const ModelVersion& version) { return checkImport(baseModels(), version); });
    state_->plane->jobs().setTokenizerLookup(
        [this](const std::string& datasetId) { return datasetTokenizer(baseModels(), datasetId); });
}

Result<std::string> DataDirectory::signModelStatement(std::string_view statement) const
{
    return crypto::modelSigningBundle(statement, state_->modelSigning->privateKeyPem,
                                      state_->modelSigning->certificatePem,
                                      state_->artefactRoot->certificatePem());
}

const crypto::SigningKey& DataDirectory::registryKey() const noexcept
{
    return *state_->registryKey;
}

const crypto::SigningKey& DataDirectory::manifestsKey() const noexcept
{
    return *state_->manifestsKey;
}

const crypto::SigningKey& DataDirectory::checkpointsKey() const noexcept
{
    return *state_->checkpointsKey;
}

const audit::AuditKey& DataDirectory::auditKey() const noexcept
{
    return *state_->auditKey;
}

const crypto::CertificateAuthority& DataDirectory::certificateAuthority() const noexcept
{
    return *state_->ca;
}

const crypto::CertificateAuthority& DataDirectory::artefactRoot() const noexcept
{
    return *state_->artefactRoot;
}

const audit::Clock& DataDirectory::clock() const noexcept
{
    return *state_->clock;
}

std::filesystem::path DataDirectory::datasetsRoot() const
{
    return file(state_->dataDir, datadir::kDatasets);
}

Result<const crypto::Kek*> DataDirectory::datasetsKek() const
{
    return state_->keyring->activeKek(std::string(datadir::kDatasetsKekId));
}

crypto::KekResolver DataDirectory::datasetsResolver() const
{
    return core::datasetsResolver(*state_->keyring);
}

std::vector<const crypto::Kek*> DataDirectory::usableKeks(std::string_view id) const
{
    return core::usableKeks(*state_->keyring, id);
}

KeyVault DataDirectory::keyVault()
{
    return {path(), keyring(), manifestsKey(), checkpointsKey(), clock()};
}

BaseModelStore DataDirectory::baseModels() const
{
    return {path(), datasetsRoot(), usableKeks(trainer::kCheckpointsKekId)};
}

Result<void> DataDirectory::writeSessionToken(const std::filesystem::path& sessionFile,
                                              const std::string& token) const
{
    auto kek = state_->keyring->activeKek(std::string(kDatabaseKekId));
    if (!kek)
        return kek.error();
    return sealSecret(sessionFile, **kek, "application/vnd.sealtrain.session", asBytes(token),
                      AtomicFileSink::Overwrite::Allow);
}

Result<std::string> DataDirectory::readSessionToken(const std::filesystem::path& sessionFile) const
{
    auto token = unsealSecret(sessionFile, state_->keyring->resolver(), "session");
    if (!token)
        return token.error();
    const auto bytes = token->bytes();
    return std::string(bytes.begin(), bytes.end());
}

Result<void> DataDirectory::signPendingEntries()
{
    auto& log = state_->plane->auditLog();
    SEALTRAIN_TRY(log.tick());
    const auto& head = log.lastHead();
    if (head && head->size == log.size())
        return success();
    auto signedHead = log.signHead();
    if (!signedHead)
        return signedHead.error();
    return success();
}

Result<std::vector<std::string>> DataDirectory::detachRecordedWitnesses()
{
    return internal::detachRecordedWitnesses(*state_->database, state_->plane->platformChanges());
}

bool DataDirectory::finishForwarding(std::chrono::milliseconds timeout)
{
    if (state_->forwarder == nullptr)
        return true;
    auto count = state_->store->entryCount();
    return count && state_->forwarder->waitDelivered(*count, timeout, true);
}

std::optional<audit::ForwardHealth> DataDirectory::forwardHealth() const
{
    if (state_->forwarder == nullptr)
        return std::nullopt;
    return state_->forwarder->health();
}

std::vector<std::string> DataDirectory::witnessesOutside() const
{
    return state_->witnesses->locations();
}

Result<void> DataDirectory::recordStart(const PlatformStart& start)
{
    const auto now =
        std::chrono::duration_cast<std::chrono::seconds>(state_->clock->now().time_since_epoch())
            .count();
    return internal::recordPlatformStart(*state_->database, state_->plane->platformChanges(), start,
                                         now);
}

}  // namespace sealtrain::core
