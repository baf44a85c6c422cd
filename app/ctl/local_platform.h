// A local control plane opened from a data directory: the one entry point for every sealtrainctl
// command that works on one (user, role, grant, session, audit export, dataset, train).
//
// The data directory (docs/operations/data-directory.md) holds:
//   keyring.json        the wrapped KEKs (docs/formats/keyring.md); the master key is never written
//   control.db          the SQLCipher database (docs/formats/database.md), with -wal/-shm beside it
//   signing.key.sealed  the platform's Ed25519 signing key, a sealed object under the `signing` KEK
//   signing.pub.pem     its public key, for reviewers (`audit verify --key`)
//   ca.crt              the platform CA's certificate (public)
//   ca.key.sealed       the CA's private key (PKCS#8 PEM), sealed under the `signing` KEK
//   audit.witness       every signed audit head, one line each, outside the database
//   session             the CLI's session token, sealed under the `database` KEK, mode 0600
//
// How a command gets the caller's session: it adds the unlock options and the session option to
// its subcommand (addUnlockOptions, addSessionOption), opens the platform with
// LocalPlatform::open, then calls platform->session(sessionFile) for the token that
// `sealtrainctl session sign-in` stored, and passes it to the ControlPlane call. Every check
// (expiry, revocation, permission) happens inside the ControlPlane, never here. Before it returns,
// a command that changed anything calls platform->finish() so a head is signed over its entries
// and appended to the witness file.
#pragma once

#include "sealtrain/audit/audit_log.h"
#include "sealtrain/audit/entry.h"
#include "sealtrain/base/result.h"
#include "sealtrain/core/control_plane.h"
#include "sealtrain/core/database.h"
#include "sealtrain/core/sql_audit_store.h"
#include "sealtrain/crypto/certificate_authority.h"
#include "sealtrain/crypto/keyring.h"
#include "sealtrain/crypto/secret_bytes.h"
#include "sealtrain/crypto/signing.h"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace sealtrain::ctl {

// File names inside a data directory.
namespace datadir {
inline constexpr std::string_view kKeyring = "keyring.json";
inline constexpr std::string_view kDatabase = "control.db";
inline constexpr std::string_view kSigningKey = "signing.key.sealed";
inline constexpr std::string_view kSigningPublicKey = "signing.pub.pem";
inline constexpr std::string_view kCaCertificate = "ca.crt";
inline constexpr std::string_view kCaKey = "ca.key.sealed";
inline constexpr std::string_view kWitness = "audit.witness";
inline constexpr std::string_view kSession = "session";
inline constexpr std::string_view kDatasets = "datasets";  // one folder per dataset id
// The keyring KEK that seals dataset shards.
inline constexpr std::string_view kDatasetsKekId = "datasets";
}  // namespace datadir

// How to find and unlock a data directory.
struct UnlockOptions {
    std::filesystem::path dataDir;  // empty: defaultDataDir() (base/paths.h)
    std::optional<std::filesystem::path> passphraseFile;
    std::optional<std::filesystem::path> masterKeyFile;

    [[nodiscard]] std::filesystem::path resolvedDataDir() const;
    // The master key file's KEK or the passphrase (from the file, else asked without echo), then
    // the keyring. A wrong passphrase is Unauthenticated, in one sentence.
    [[nodiscard]] Result<crypto::Keyring> unlockKeyring() const;
};

// Adds --data-dir, --passphrase-file and --master-key-file to `command`; `options` must outlive
// the parse.
void addUnlockOptions(CLI::App* command, UnlockOptions& options);
// Adds --session-file (default: the data directory's `session` file).
void addSessionOption(CLI::App* command, std::optional<std::filesystem::path>& sessionFile);

// What tests and embedders may change; the command line always uses the defaults.
struct LocalPlatformOptions {
    const audit::Clock* clock = nullptr;  // null: the system clock; must outlive the platform
    core::ControlPlaneOptions controlPlane;
    audit::HeadPolicy headPolicy;
};

// What `sealtrainctl init` asks for.
struct InitRequest {
    std::filesystem::path dataDir;
    // Exactly one of these: the keyring's master key from a passphrase, or a master key file.
    std::optional<crypto::SecretBytes> passphrase;
    std::optional<std::filesystem::path> masterKeyFile;
    crypto::Argon2Params argon2 = crypto::kArgon2Default;
    std::string adminName;
    crypto::SecretBytes adminPassword;
};

class LocalPlatform final {
public:
    // Unlocks the keyring, opens the database (re-keying it first when a rotation of the
    // `database` KEK was interrupted before the re-key), unseals the signing key and opens the
    // control plane with the witness file. NotFound, in one sentence, when the directory has not
    // been initialised.
    [[nodiscard]] static Result<std::unique_ptr<LocalPlatform>>
    open(const UnlockOptions& options, LocalPlatformOptions platformOptions = {});

    // Creates a new data directory (refused when it exists and is not empty): keyring, database,
    // signing key, platform CA and the first admin. Everything is made in a temporary sibling
    // folder that is renamed into place at the end, so a failure leaves nothing behind.
    [[nodiscard]] static Result<core::Enrollment> create(const InitRequest& request,
                                                         LocalPlatformOptions platformOptions = {});

    LocalPlatform(const LocalPlatform&) = delete;
    LocalPlatform& operator=(const LocalPlatform&) = delete;
    ~LocalPlatform();

    [[nodiscard]] const std::filesystem::path& dataDir() const noexcept;
    [[nodiscard]] crypto::Keyring& keyring() noexcept;
    [[nodiscard]] core::Database& database() noexcept;
    [[nodiscard]] core::ControlPlane& controlPlane() noexcept;
    [[nodiscard]] const crypto::SigningKey& signingKey() const noexcept;
    [[nodiscard]] const audit::AuditKey& auditKey() const noexcept;
    [[nodiscard]] const crypto::CertificateAuthority& certificateAuthority() const noexcept;
    [[nodiscard]] const audit::Clock& clock() const noexcept;

    // The session token `session sign-in` stored: from `sessionFile` when given, else the data
    // directory's `session` file. Unauthenticated ("sign in first") when there is none.
    [[nodiscard]] Result<std::string>
    session(const std::optional<std::filesystem::path>& sessionFile = std::nullopt) const;
    // Stores a token (sealed under the `database` KEK, mode 0600, replacing an older one).
    [[nodiscard]] Result<void>
    storeSession(const std::string& token,
                 const std::optional<std::filesystem::path>& sessionFile = std::nullopt) const;
    // Deletes the stored token; no error when there is none.
    [[nodiscard]] Result<void>
    forgetSession(const std::optional<std::filesystem::path>& sessionFile = std::nullopt) const;

    // Signs an audit head over the entries appended since the last one (and appends it to the
    // witness file). Commands call it before they return.
    [[nodiscard]] Result<void> finish();

private:
    struct State;
    explicit LocalPlatform(std::unique_ptr<State> state);
    std::unique_ptr<State> state_;
};

class CommandRegistry;

// Shows a new enrollment's otpauth:// URI (it holds the TOTP secret): written to `uriFile`, a new
// file of mode 0600, when one is given, else printed to `out` with a warning.
[[nodiscard]] Result<void> showEnrollment(std::ostream& out, const core::Enrollment& enrollment,
                                          const std::string& uriFile);

// For command implementations: opens the platform, runs `body`, then finish()es it (also after a
// refusal, so its audit entry gets a head). Prints the first error as one line and returns
// kExitFailure; kExitOk when everything succeeded.
[[nodiscard]] int runOnPlatform(const CommandRegistry& registry, const UnlockOptions& options,
                                const std::function<Result<void>(LocalPlatform&)>& body);

// The options of a command that acts as a signed-in user: the unlock options and --session-file.
struct SignedInOptions {
    UnlockOptions unlock;
    std::optional<std::filesystem::path> sessionFile;

    void addTo(CLI::App* command)
    {
        addUnlockOptions(command, unlock);
        addSessionOption(command, sessionFile);
    }
};

// runOnPlatform with the stored session token handed to `body`.
[[nodiscard]] int
runSignedIn(const CommandRegistry& registry, const SignedInOptions& options,
            const std::function<Result<void>(LocalPlatform&, const std::string& session)>& body);

}  // namespace sealtrain::ctl
