// Opening and creating a local data directory: the keyring, the database, the sealed platform
// keys, the witness file and the control plane over them.
#include "local_platform.h"

#include "commands.h"
#include "ctl.h"
#include "passphrase.h"

#include "sealtrain/base/encoding.h"
#include "sealtrain/base/paths.h"
#include "sealtrain/base/byte_io.h"
#include "sealtrain/crypto/hkdf.h"
#include "sealtrain/crypto/key_file.h"
#include "sealtrain/crypto/random.h"
#include "sealtrain/crypto/sealed.h"

#include <fmt/format.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <ostream>
#include <system_error>

namespace sealtrain::ctl {
namespace {

constexpr std::string_view kOrigin = "sealtrain.local/control";
constexpr std::string_view kCaName = "Sealtrain platform CA";
constexpr std::chrono::seconds kCaValidity{std::chrono::hours(24 * 365 * 10)};
constexpr std::string_view kAuditKeyLabel = "sealtrain audit hmac key v1";
constexpr std::string_view kSigningKekId = "signing";
constexpr std::string_view kDatabaseKekId = "database";  // also seals the CLI session
constexpr std::string_view kAuditKekId = "audit";

std::filesystem::path file(const std::filesystem::path& dataDir, std::string_view name)
{
    return dataDir / std::string(name);
}

Error notInitialised(const std::filesystem::path& dataDir)
{
    return Error(ErrorCode::NotFound,
                 fmt::format("There is no initialised data directory at '{}'; create one with "
                             "'sealtrainctl init --data-dir {}' or pass the right --data-dir.",
                             dataDir.string(), dataDir.string()));
}

// A small secret as a sealed object under `kek` (written atomically, mode 0600).
Result<void> sealSecret(const std::filesystem::path& path, const crypto::Kek& kek,
                        std::string_view contentType, std::span<const std::uint8_t> secret,
                        AtomicFileSink::Overwrite overwrite)
{
    auto writer =
        crypto::SealedWriter::create(path, kek, {std::string(contentType), "{}"}, overwrite);
    if (!writer)
        return writer.error();
    SEALTRAIN_TRY(writer->write(secret));
    return writer->finish();
}

// The plaintext of a small sealed object (one chunk), only ever in SecretBytes.
Result<crypto::SecretBytes> unsealSecret(const std::filesystem::path& path,
                                         const crypto::KekResolver& resolver, const char* what)
{
    auto reader = crypto::SealedReader::open(path, resolver);
    if (!reader)
        return reader.error().withContext(fmt::format("Cannot open the {}", what));
    if (reader->chunkCount() != 1)
        return Error(ErrorCode::Integrity,
                     fmt::format("The {} file '{}' is not a single-chunk sealed secret; restore "
                                 "the data directory from a backup.",
                                 what, path.string()));
    auto secret = crypto::SecretBytes::allocate(reader->chunkPlaintextSize(0));
    if (!secret)
        return secret.error();
    auto read = reader->readChunk(0, secret->mutableBytes());
    if (!read)
        return read.error();
    return secret;
}

Result<void> writePublicFile(const std::filesystem::path& path, const std::string& text)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out)
        return Error(ErrorCode::Io, fmt::format("Cannot write '{}'; check that the data directory "
                                                "is writable.",
                                                path.string()));
    return success();
}

Result<std::string> readPublicFile(const std::filesystem::path& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return Error(ErrorCode::NotFound,
                     fmt::format("Cannot read '{}'; restore the data directory from a backup.",
                                 path.string()));
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

Result<audit::AuditKey> deriveAuditKey(const crypto::Keyring& keyring)
{
    auto kek = keyring.activeKek(std::string(kAuditKekId));
    if (!kek)
        return kek.error();
    auto key = crypto::hkdf(crypto::HkdfHash::Sha256, (*kek)->key.bytes(), {},
                            asBytes(kAuditKeyLabel), 32);
    if (!key)
        return key.error();
    return audit::AuditKey::create(std::move(*key), fmt::format("audit-hmac-v{}", (*kek)->version));
}

}  // namespace

// --- options -----------------------------------------------------------------------------------

std::filesystem::path UnlockOptions::resolvedDataDir() const
{
    return dataDir.empty() ? defaultDataDir() : dataDir;
}

Result<crypto::Keyring> UnlockOptions::unlockKeyring() const
{
    const auto dir = resolvedDataDir();
    const auto path = file(dir, datadir::kKeyring);
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        return notInitialised(dir);
    if (masterKeyFile) {
        auto master = crypto::readKekFile(*masterKeyFile);
        if (!master)
            return master.error();
        return crypto::Keyring::unlockWithMasterKey(path, *master);
    }
    auto passphrase = obtainPassphrase(passphraseFile ? passphraseFile->string() : std::string(),
                                       "Keyring passphrase", false);
    if (!passphrase)
        return passphrase.error();
    return crypto::Keyring::unlockWithPassphrase(path, *passphrase);
}

void addUnlockOptions(CLI::App* command, UnlockOptions& options)
{
    command->add_option_function<std::string>(
        "--data-dir", [&options](const std::string& value) { options.dataDir = value; },
        "Data directory (default: " + defaultDataDir().string() + ")");
    auto* passphrase = command->add_option_function<std::string>(
        "--passphrase-file",
        [&options](const std::string& value) { options.passphraseFile = value; },
        "Read the keyring passphrase from this file's first line (mode 0600) instead of asking");
    auto* master = command->add_option_function<std::string>(
        "--master-key-file",
        [&options](const std::string& value) { options.masterKeyFile = value; },
        "Unlock with a master key file instead of a passphrase (headless daemons)");
    passphrase->excludes(master);
}

void addSessionOption(CLI::App* command, std::optional<std::filesystem::path>& sessionFile)
{
    command->add_option_function<std::string>(
        "--session-file", [&sessionFile](const std::string& value) { sessionFile = value; },
        "The session file from 'session sign-in' (default: the data directory's 'session')");
}

// --- the platform ------------------------------------------------------------------------------

struct LocalPlatform::State {
    std::filesystem::path dataDir;
    audit::SystemClock systemClock;
    const audit::Clock* clock = nullptr;
    std::optional<crypto::Keyring> keyring;
    std::unique_ptr<core::Database> database;
    std::unique_ptr<core::SqlAuditStore> store;
    std::optional<crypto::SigningKey> signingKey;
    std::optional<audit::AuditKey> auditKey;
    std::optional<crypto::CertificateAuthority> ca;
    std::unique_ptr<core::ControlPlane> plane;

    // Everything but the keyring, which the caller has unlocked or created.
    Result<void> openRest(LocalPlatformOptions& options)
    {
        clock = options.clock != nullptr ? options.clock : &systemClock;
        const auto dbPath = file(dataDir, datadir::kDatabase);
        std::error_code ec;
        if (!std::filesystem::exists(dbPath, ec))
            return notInitialised(dataDir);
        auto opened = core::Database::openWithKeyring(dbPath, *keyring);
        if (!opened)
            return opened.error();
        database = std::move(*opened);
        store = std::make_unique<core::SqlAuditStore>(*database);
        SEALTRAIN_TRY(loadKeys());
        audit::LogOptions logOptions;
        logOptions.origin = std::string(kOrigin);
        logOptions.policy = options.headPolicy;
        logOptions.witnessFile = file(dataDir, datadir::kWitness);
        auto plane_ = core::ControlPlane::open(*database, *store, *signingKey, &*auditKey, *clock,
                                               options.controlPlane, std::move(logOptions));
        if (!plane_)
            return plane_.error();
        plane = std::move(*plane_);
        return success();
    }

    Result<void> loadKeys()
    {
        const auto resolver = keyring->resolver();
        auto seed = unsealSecret(file(dataDir, datadir::kSigningKey), resolver, "signing key");
        if (!seed)
            return seed.error();
        auto key = crypto::SigningKey::fromSeed(*seed);
        if (!key)
            return key.error();
        signingKey.emplace(std::move(*key));
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
        auto audit = deriveAuditKey(*keyring);
        if (!audit)
            return audit.error();
        auditKey.emplace(std::move(*audit));
        return success();
    }

    // Fills the empty folder `dir` with a new data directory and creates the first admin.
    [[nodiscard]] static Result<void> populate(const std::filesystem::path& dir,
                                               const InitRequest& request,
                                               LocalPlatformOptions& platformOptions,
                                               core::Enrollment& enrollment);

    [[nodiscard]] std::filesystem::path
    sessionPath(const std::optional<std::filesystem::path>& sessionFile) const
    {
        return sessionFile ? *sessionFile : file(dataDir, datadir::kSession);
    }
};

LocalPlatform::LocalPlatform(std::unique_ptr<State> state)
    : state_(std::move(state))
{
}

LocalPlatform::~LocalPlatform() = default;

Result<std::unique_ptr<LocalPlatform>> LocalPlatform::open(const UnlockOptions& options,
                                                           LocalPlatformOptions platformOptions)
{
    auto state = std::make_unique<State>();
    state->dataDir = options.resolvedDataDir();
    auto keyring = options.unlockKeyring();
    if (!keyring)
        return keyring.error();
    state->keyring.emplace(std::move(*keyring));
    SEALTRAIN_TRY(state->openRest(platformOptions));
    return std::unique_ptr<LocalPlatform>(new LocalPlatform(std::move(state)));
}

namespace {

// Removes a half-made data directory unless dismissed.
class RemoveOnFailure final {
public:
    explicit RemoveOnFailure(std::filesystem::path path)
        : path_(std::move(path))
    {
    }
    RemoveOnFailure(const RemoveOnFailure&) = delete;
    RemoveOnFailure& operator=(const RemoveOnFailure&) = delete;
    ~RemoveOnFailure()
    {
        if (!path_.empty()) {
            std::error_code ec;
            std::filesystem::remove_all(path_, ec);
        }
    }
    void dismiss() { path_.clear(); }

private:
    std::filesystem::path path_;
};

}  // namespace

Result<void> LocalPlatform::State::populate(const std::filesystem::path& dir,
                                            const InitRequest& request,
                                            LocalPlatformOptions& platformOptions,
                                            core::Enrollment& enrollment)
{
    const auto keyringPath = file(dir, datadir::kKeyring);
    Result<crypto::Keyring> keyring = Error(ErrorCode::InvalidArgument, "No key was given.");
    if (request.masterKeyFile) {
        auto master = crypto::readKekFile(*request.masterKeyFile);
        if (!master)
            return master.error();
        keyring = crypto::Keyring::createWithMasterKey(keyringPath, *master);
    } else if (request.passphrase) {
        keyring =
            crypto::Keyring::createWithPassphrase(keyringPath, *request.passphrase, request.argon2);
    }
    if (!keyring)
        return keyring.error();

    auto signingKek = keyring->activeKek(std::string(kSigningKekId));
    if (!signingKek)
        return signingKek.error();
    auto signingKey = crypto::SigningKey::generate();
    if (!signingKey)
        return signingKey.error();
    SEALTRAIN_TRY(sealSecret(file(dir, datadir::kSigningKey), **signingKek,
                             "application/vnd.sealtrain.ed25519-seed", signingKey->seed().bytes(),
                             AtomicFileSink::Overwrite::Refuse));
    SEALTRAIN_TRY(
        writePublicFile(file(dir, datadir::kSigningPublicKey), signingKey->publicKey().toPem()));
    auto ca = crypto::CertificateAuthority::create(kCaName, kCaValidity);
    if (!ca)
        return ca.error();
    SEALTRAIN_TRY(sealSecret(file(dir, datadir::kCaKey), **signingKek,
                             "application/vnd.sealtrain.pkcs8-pem", ca->privateKeyPem().bytes(),
                             AtomicFileSink::Overwrite::Refuse));
    SEALTRAIN_TRY(writePublicFile(file(dir, datadir::kCaCertificate), ca->certificatePem()));

    auto databaseKey = core::deriveDatabaseKey(*keyring);
    if (!databaseKey)
        return databaseKey.error();
    {
        // Creates the file and its schema; closed again before the platform opens it.
        auto database = core::Database::open(file(dir, datadir::kDatabase), *databaseKey);
        if (!database)
            return database.error();
    }

    State state;
    state.dataDir = dir;
    state.keyring.emplace(std::move(*keyring));
    SEALTRAIN_TRY(state.openRest(platformOptions));
    auto made = state.plane->init(request.adminName, request.adminPassword);
    if (!made)
        return made.error();
    enrollment = std::move(*made);
    auto head = state.plane->auditLog().signHead();
    if (!head)
        return head.error();
    return success();
}

Result<core::Enrollment> LocalPlatform::create(const InitRequest& request,
                                               LocalPlatformOptions platformOptions)
{
    if (request.passphrase.has_value() == request.masterKeyFile.has_value())
        return Error(ErrorCode::InvalidArgument,
                     "Give either a passphrase or a master key file for the new keyring.");
    const std::filesystem::path target =
        request.dataDir.empty() ? defaultDataDir() : std::filesystem::absolute(request.dataDir);
    std::error_code ec;
    if (std::filesystem::exists(target, ec) && !std::filesystem::is_empty(target, ec))
        return Error(ErrorCode::AlreadyExists,
                     fmt::format("The data directory '{}' already exists and is not empty; choose "
                                 "another --data-dir or move it away first.",
                                 target.string()));
    const auto parent = target.parent_path();
    std::filesystem::create_directories(parent, ec);
    if (ec)
        return Error(ErrorCode::Io, fmt::format("Cannot create the folder '{}' ({}); check its "
                                                "permissions.",
                                                parent.string(), ec.message()));
    const auto temporary =
        parent
        / fmt::format(".{}.init-{}", target.filename().string(), toHex(crypto::randomBytes(6)));
    if (!std::filesystem::create_directory(temporary, ec) || ec)
        return Error(ErrorCode::Io, fmt::format("Cannot create a folder in '{}' ({}); check its "
                                                "permissions.",
                                                parent.string(), ec.message()));
    RemoveOnFailure cleanup(temporary);
    std::filesystem::permissions(temporary, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::replace, ec);
    core::Enrollment enrollment;
    SEALTRAIN_TRY(State::populate(temporary, request, platformOptions, enrollment));
    std::filesystem::rename(temporary, target, ec);
    if (ec)
        return Error(ErrorCode::Io, fmt::format("Cannot move the new data directory into place "
                                                "at '{}' ({}); check that nothing else created it.",
                                                target.string(), ec.message()));
    cleanup.dismiss();
    return enrollment;
}

const std::filesystem::path& LocalPlatform::dataDir() const noexcept
{
    return state_->dataDir;
}

crypto::Keyring& LocalPlatform::keyring() noexcept
{
    return *state_->keyring;
}

core::Database& LocalPlatform::database() noexcept
{
    return *state_->database;
}

core::ControlPlane& LocalPlatform::controlPlane() noexcept
{
    return *state_->plane;
}

const crypto::SigningKey& LocalPlatform::signingKey() const noexcept
{
    return *state_->signingKey;
}

const audit::AuditKey& LocalPlatform::auditKey() const noexcept
{
    return *state_->auditKey;
}

const crypto::CertificateAuthority& LocalPlatform::certificateAuthority() const noexcept
{
    return *state_->ca;
}

const audit::Clock& LocalPlatform::clock() const noexcept
{
    return *state_->clock;
}

Result<std::string>
LocalPlatform::session(const std::optional<std::filesystem::path>& sessionFile) const
{
    const auto path = state_->sessionPath(sessionFile);
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        return Error(ErrorCode::Unauthenticated,
                     fmt::format("You are not signed in to '{}'; run 'sealtrainctl session "
                                 "sign-in --data-dir {} --user NAME' first.",
                                 state_->dataDir.string(), state_->dataDir.string()));
    auto token = unsealSecret(path, state_->keyring->resolver(), "session");
    if (!token)
        return Error(ErrorCode::Unauthenticated,
                     fmt::format("The session file '{}' can not be read with this keyring; sign "
                                 "in again.",
                                 path.string()));
    const auto bytes = token->bytes();
    return std::string(bytes.begin(), bytes.end());
}

Result<void>
LocalPlatform::storeSession(const std::string& token,
                            const std::optional<std::filesystem::path>& sessionFile) const
{
    auto kek = state_->keyring->activeKek(std::string(kDatabaseKekId));
    if (!kek)
        return kek.error();
    return sealSecret(state_->sessionPath(sessionFile), **kek, "application/vnd.sealtrain.session",
                      asBytes(token), AtomicFileSink::Overwrite::Allow);
}

Result<void>
LocalPlatform::forgetSession(const std::optional<std::filesystem::path>& sessionFile) const
{
    std::error_code ec;
    std::filesystem::remove(state_->sessionPath(sessionFile), ec);
    if (ec)
        return Error(ErrorCode::Io, fmt::format("Cannot remove the session file ({}); delete it "
                                                "by hand.",
                                                ec.message()));
    return success();
}

Result<void> LocalPlatform::finish()
{
    auto& log = state_->plane->auditLog();
    SEALTRAIN_TRY(log.tick());
    const auto& head = log.lastHead();
    if (head && head->size == log.size())
        return success();
    auto signed_ = log.signHead();
    if (!signed_)
        return signed_.error();
    return success();
}

int runOnPlatform(const CommandRegistry& registry, const UnlockOptions& options,
                  const std::function<Result<void>(LocalPlatform&)>& body)
{
    auto platform = LocalPlatform::open(options);
    if (!platform) {
        registry.err() << "sealtrainctl: " << platform.error().message() << '\n';
        return kExitFailure;
    }
    auto outcome = body(**platform);
    auto finished = (*platform)->finish();
    if (!outcome) {
        registry.err() << "sealtrainctl: " << outcome.error().message() << '\n';
        return kExitFailure;
    }
    if (!finished) {
        registry.err() << "sealtrainctl: " << finished.error().message() << '\n';
        return kExitFailure;
    }
    return kExitOk;
}

int runSignedIn(const CommandRegistry& registry, const SignedInOptions& options,
                const std::function<Result<void>(LocalPlatform&, const std::string& session)>& body)
{
    return runOnPlatform(registry, options.unlock, [&](LocalPlatform& platform) -> Result<void> {
        auto session = platform.session(options.sessionFile);
        if (!session)
            return session.error();
        return body(platform, *session);
    });
}

namespace {

Result<void> writeOtpauthFile(const std::filesystem::path& path, const std::string& uri)
{
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return Error(ErrorCode::Io, fmt::format("Cannot create '{}' (it must not exist yet); "
                                                "choose a new file for the TOTP URI.",
                                                path.string()));
    const std::string line = uri + "\n";
    const bool written = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size())
                         && ::fsync(fd) == 0;
    ::close(fd);
    if (!written)
        return Error(ErrorCode::Io,
                     fmt::format("Writing '{}' failed; check the disk.", path.string()));
    return success();
}

}  // namespace

Result<void> showEnrollment(std::ostream& out, const core::Enrollment& enrollment,
                            const std::string& uriFile)
{
    if (uriFile.empty()) {
        out << fmt::format("Add this to {}'s authenticator app (it holds the TOTP secret; do not "
                           "share it):\n  {}\n",
                           enrollment.user, enrollment.otpauthUri);
        return success();
    }
    SEALTRAIN_TRY(writeOtpauthFile(uriFile, enrollment.otpauthUri));
    out << fmt::format("Wrote {}'s TOTP enrollment URI to {} (mode 0600); import it into an "
                       "authenticator app, then delete the file.\n",
                       enrollment.user, uriFile);
    return success();
}

}  // namespace sealtrain::ctl
