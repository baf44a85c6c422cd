// A data directory (docs/operations/data-directory.md), opened or created: the one way the CLI,
// and later the daemon, the GUI's local mode and the worker, get a control plane over local
// files. It holds:
//   keyring.json        the wrapped KEKs (docs/formats/keyring.md); the master key is never written
//   control.db          the SQLCipher database (docs/formats/database.md), with -wal/-shm beside it
//   signing.key.sealed  the audit log's Ed25519 signing key (its heads), sealed under `signing`
//   signing.pub.pem     its public key, for reviewers (`audit verify --key`)
//   manifests.key.sealed, manifests.pub.pem      the key that signs dataset manifests
//   checkpoints.key.sealed, checkpoints.pub.pem  the key that signs checkpoints (the only one a
//                       trainer is ever given)
//   registry.key.sealed, registry.pub.pem        the key that signs the model registry's statements
//   model-signing.key.sealed, model-signing.crt  the P-256 key and certificate that sign
//                       exported models (OpenSSF model-signing), issued by the artefact root
//   ca.crt              the platform CA's certificate (public): the identity root, for TLS only
//   ca.key.sealed       the CA's private key (PKCS#8 PEM), sealed under the `signing` KEK
//   artefact-ca.crt     the artefact root (public): its only leaves are the platform's signing
//                       certificates; what reviewers pin (docs/decisions/0011-trust-roots.md)
//   artefact-ca.key.sealed  its private key, sealed under the `signing` KEK
//   audit.witness       every signed audit head, one line each, outside the database
//   session             the CLI's session token, sealed under the `database` KEK, mode 0600
//   datasets/           one folder per dataset id (docs/formats/dataset.md)
//   runs/               the daemon's training runs (sealed, signed checkpoints)
//   downloads/          exports staged for a download under way, sealed with a key held in
//                       memory only (registry/exports/staging.h); emptied when the directory is
//                       opened
//   lock                held (flock) by the one process that has the directory open
//   job-policy.json     the job policy an admin edits (optional; read at open)
//
// Opening unlocks the keyring, opens the database (re-keying it first when a rotation of the
// `database` KEK was interrupted before the re-key), unseals the signing key and the CA, derives
// the audit key and opens the control plane with the witness file. Whoever changed anything calls
// signPendingEntries() before closing, so that a head is signed over its entries.
#pragma once

#include "sealtrain/audit/audit_log.h"
#include "sealtrain/audit/entry.h"
#include "sealtrain/audit/forward.h"
#include "sealtrain/base/result.h"
#include "sealtrain/core/control_plane.h"
#include "sealtrain/core/keys/key_vault.h"
#include "sealtrain/core/platform/platform_start.h"
#include "sealtrain/core/registry/base_model_store.h"
#include "sealtrain/core/store/data_layout.h"
#include "sealtrain/core/store/database.h"
#include "sealtrain/crypto/certificate_authority.h"
#include "sealtrain/crypto/kek.h"
#include "sealtrain/crypto/keyring.h"
#include "sealtrain/crypto/secret_bytes.h"
#include "sealtrain/crypto/signing.h"

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sealtrain::core {

// What tests, embedders and sealtrain-control's flags may change.
struct DataDirectoryOptions {
    const audit::Clock* clock = nullptr;  // null: the system clock; must outlive the directory
    ControlPlaneOptions controlPlane;
    audit::HeadPolicy headPolicy;
    // Where each committed audit entry and signed head is also written as a JSON line, at least
    // once (audit/forward_spool.h): "journal", "file:/ABSOLUTE/PATH" or
    // "syslog-tls://HOST:PORT"; empty: nowhere. The cursor is the directory's
    // audit-forward.cursor.
    std::string auditForward;
    // syslog-tls: the receiver's CA certificates (empty: the system's), and a client certificate
    // with its key when the receiver asks for one (PEM files).
    std::filesystem::path auditForwardCa;
    std::filesystem::path auditForwardCertificate;
    std::filesystem::path auditForwardKey;
    // Witnesses outside the directory that must keep every audit head ("file:/ABSOLUTE/PATH",
    // "tpm:0xINDEX[@TCTI]"; docs/operations/data-directory.md, "Witnesses"). One the database
    // does not record yet is attached (audited); the database's own list is checked whatever
    // this says.
    std::vector<std::string> auditWitnesses;
    // Open although a witness lost what it kept or the database is older than it: each such
    // witness starts again from the newest head, audited (audit.witness_reset).
    bool acceptWitnessLoss = false;
    // Recorded witnesses to detach at this start (the same forms as auditWitnesses): each is
    // checked first like every recorded witness, then forgotten, audited as
    // audit.witness_detach (reason "operator"); from then on it is neither given heads nor
    // checked.
    std::vector<std::string> detachWitnesses;
    // A file holding the TPM owner hierarchy's password (readable by its owner alone), for TPM
    // counter witnesses on a TPM whose administrator set one; empty: the owner's authorisation
    // is empty, as a distribution leaves it.
    std::filesystem::path tpmOwnerAuthFile;
    // The restore's own open of what it built (backup.h): the witnesses the restored database
    // records are the old platform's, not checked here; detachRecordedWitnesses forgets them.
    bool restoring = false;
};

// What a new data directory starts with (`sealtrainctl init`).
struct NewDataDirectory {
    std::filesystem::path path;  // empty: defaultDataDir() (base/paths.h)
    // Exactly one of these: the keyring's master key from a passphrase, or a master key file.
    std::optional<crypto::SecretBytes> passphrase;
    std::optional<std::filesystem::path> masterKeyFile;
    crypto::Argon2Params argon2 = crypto::kArgon2Default;
    std::string adminName;
    crypto::SecretBytes adminPassword;
};

class DataDirectory final {
public:
    // NotFound, in one sentence, when `path` holds no initialised data directory; a wrong
    // passphrase or key is Unauthenticated; Io when another process has it open (the daemon:
    // the directory has one writer at a time, locked until this object goes).
    [[nodiscard]] static Result<std::unique_ptr<DataDirectory>>
    open(const std::filesystem::path& path, const KeyringUnlock& unlock,
         const DataDirectoryOptions& options = {});

    // Creates a new data directory (refused when it exists and is not empty): keyring, database,
    // signing key, platform CA and the first admin. Everything is made in a temporary sibling
    // folder that is renamed into place at the end, so a failure leaves nothing behind.
    [[nodiscard]] static Result<Enrollment> create(const NewDataDirectory& request,
                                                   const DataDirectoryOptions& options = {});

    DataDirectory(const DataDirectory&) = delete;
    DataDirectory& operator=(const DataDirectory&) = delete;
    ~DataDirectory();

    [[nodiscard]] const std::filesystem::path& path() const noexcept;
    [[nodiscard]] crypto::Keyring& keyring() noexcept;
    [[nodiscard]] const crypto::Keyring& keyring() const noexcept;
    [[nodiscard]] Database& database() noexcept;
    [[nodiscard]] ControlPlane& controlPlane() noexcept;
    // The audit log's signing key (heads, export bundles). Each purpose has its own key, so that
    // the one handed to a trainer (checkpoints) can sign nothing else.
    [[nodiscard]] const crypto::SigningKey& signingKey() const noexcept;
    // Signs dataset manifests (manifest.sig).
    [[nodiscard]] const crypto::SigningKey& manifestsKey() const noexcept;
    // Signs checkpoints; the trainer gets it for one run.
    [[nodiscard]] const crypto::SigningKey& checkpointsKey() const noexcept;
    // The key that signs the model registry's statements (registrations, promotions).
    [[nodiscard]] const crypto::SigningKey& registryKey() const noexcept;
    // `statement` (an OpenSSF model-signing statement) signed with the platform's model-signing
    // key, as a Sigstore bundle carrying its certificate and the platform CA's (model_signing.h).
    [[nodiscard]] Result<std::string> signModelStatement(std::string_view statement) const;
    [[nodiscard]] const audit::AuditKey& auditKey() const noexcept;
    [[nodiscard]] const crypto::CertificateAuthority& certificateAuthority() const noexcept;
    // The artefact root (issue #48): it issues the platform's model-signing certificates and
    // nothing else, so no session's or worker's certificate chains to it.
    [[nodiscard]] const crypto::CertificateAuthority& artefactRoot() const noexcept;
    [[nodiscard]] const audit::Clock& clock() const noexcept;

    // Where the dataset folders live (datasets/).
    [[nodiscard]] std::filesystem::path datasetsRoot() const;
    // The active `datasets` KEK, which seals the shards of a new import.
    [[nodiscard]] Result<const crypto::Kek*> datasetsKek() const;
    // Unwraps only with the `datasets` KEK: a shard sealed under another key is refused.
    [[nodiscard]] crypto::KekResolver datasetsResolver() const;
    // Every version of the KEK `id` that can still unwrap (retired ones can not), for the keys
    // handed to a trainer.
    [[nodiscard]] std::vector<const crypto::Kek*> usableKeks(std::string_view id) const;
    // What the key release needs of this directory (keys/key_vault.h); it refers into this
    // object, which must outlive it.
    [[nodiscard]] KeyVault keyVault();
    // Where imported base models are kept and the KEKs that seal them, for the registry.
    [[nodiscard]] BaseModelStore baseModels() const;

    // A session token in a file sealed under the `database` KEK (written atomically, mode 0600,
    // replacing an older one), and read back.
    [[nodiscard]] Result<void> writeSessionToken(const std::filesystem::path& file,
                                                 const std::string& token) const;
    [[nodiscard]] Result<std::string> readSessionToken(const std::filesystem::path& file) const;

    // Signs an audit head over the entries appended since the last one (and appends it to the
    // witness file); nothing when there are none.
    [[nodiscard]] Result<void> signPendingEntries();

    // The witnesses outside the directory that were checked when it opened and are given every
    // head ("file:…", "tpm:…"); empty when there are none.
    [[nodiscard]] std::vector<std::string> witnessesOutside() const;

    // A stop's last step, after signPendingEntries: waits up to `timeout` for the forward target
    // to have every entry and the newest head. False when it has not (the rest follows at the
    // next start); true when it has or nothing is forwarded.
    [[nodiscard]] bool finishForwarding(std::chrono::milliseconds timeout);
    // How far the audit forward target has the log; nullopt when nothing is forwarded.
    [[nodiscard]] std::optional<audit::ForwardHealth> forwardHealth() const;

    // With DataDirectoryOptions::restoring: forgets the witnesses the restored database records,
    // each audited as audit.witness_detach; returns them.
    [[nodiscard]] Result<std::vector<std::string>> detachRecordedWitnesses();

    // The daemon's start, audited (core/platform/starts.h): platform.start, and platform.upgrade
    // when the release differs from the previous start's.
    [[nodiscard]] Result<void> recordStart(const PlatformStart& start);

private:
    struct State;
    explicit DataDirectory(std::unique_ptr<State> state);
    // Gives the registry its signing key and its check of checkpoint files (registry.h).
    void connectRegistry();
    std::unique_ptr<State> state_;
};

}  // namespace sealtrain::core
