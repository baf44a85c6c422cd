// Changes to the data directory's keyring (docs/operations/data-directory.md, "Key rotation"):
// rotating, retiring and re-wrapping KEK versions and changing the passphrase, each by a signed-in
// holder of keyring.manage and audited like every other change. Every entry of a change that saved
// the keyring records the keyring's new generation (detail `keyring_generation`), so that a
// keyring.json older than the log (a rolled-back copy) is refused when the data directory opens.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/core/store/list_page.h"
#include "sealtrain/crypto/keyring.h"
#include "sealtrain/crypto/secret_bytes.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace sealtrain::core {

// Keys are listed by id, each id's versions oldest first (store/list_page.h).
[[nodiscard]] inline std::string pageKey(const crypto::KekInfo& kek)
{
    return kek.id + '\n' + orderedNumber(kek.version);
}

class AuditedTransactions;

// The audit detail that carries the keyring generation a change saved.
inline constexpr std::string_view kKeyringGenerationDetail = "keyring_generation";

struct KekRetirement {
    std::string id;
    std::uint32_t version = 0;
    // Searched, with every folder under them, for sealed objects still wrapped under the
    // version: the data directory, which holds every object the platform sealed (datasets, the
    // runs' and the jobs' checkpoints, the platform keys).
    std::vector<std::filesystem::path> folders;
};

// What rewrapAll did: a line per object re-wrapped.
struct RewrapSummary {
    std::vector<std::string> lines;
    std::uint32_t rewrapped = 0;
};

class KeyringChanges final {
public:
    // `gate` must outlive this object.
    explicit KeyringChanges(AuditedTransactions& gate);

    // keyring.manage: the next version of `id`, now the active one (keyring.rotate).
    [[nodiscard]] Result<crypto::KekInfo> rotate(const std::string& session,
                                                 crypto::Keyring& keyring, const std::string& id);
    // keyring.manage: erases a decrypt-only version for good (keyring.retire). Refused while a
    // sealed object under request.folders is still wrapped under it (sessions aside: they end).
    [[nodiscard]] Result<void> retire(const std::string& session, crypto::Keyring& keyring,
                                      const KekRetirement& request);
    // keyring.manage: one page of the KEKs, their versions and states, by id and version
    // (keyring.list, detail `after`).
    [[nodiscard]] Result<KeyedPaged<crypto::KekInfo>>
    list(const std::string& session, const crypto::Keyring& keyring, const KeyedPage& page = {});
    // keyring.manage: every sealed object under `folders` (every level) wrapped under an older
    // version of `id`, re-wrapped under the active one, each audited as rewrap() audits it. The
    // permission is checked (and a refusal audited once) before anything is searched.
    [[nodiscard]] Result<RewrapSummary>
    rewrapAll(const std::string& session, const crypto::Keyring& keyring, const std::string& id,
              const std::vector<std::filesystem::path>& folders);
    // keyring.manage: re-wraps the sealed object `file`'s key under the active version of its
    // KEK (keyring.rewrap); the line that says what was done.
    [[nodiscard]] Result<std::string> rewrap(const std::string& session,
                                             const crypto::Keyring& keyring,
                                             const std::filesystem::path& file);
    // keyring.manage: re-wraps the KEKs under a new passphrase that meets the passphrase policy
    // (keyring.change-passphrase), once `currentPassphrase` is shown to open the keyring file
    // (Unauthenticated otherwise), so that a signed-in admin alone can not lock the operators
    // who know the passphrase out. The check costs an Argon2id derivation, made only for a
    // holder of the permission.
    [[nodiscard]] Result<void>
    changePassphrase(const std::string& session, crypto::Keyring& keyring,
                     const crypto::SecretBytes& currentPassphrase,
                     const crypto::SecretBytes& newPassphrase,
                     crypto::Argon2Params params = crypto::kArgon2Default);

    // The newest keyring generation the audit log records; 0 when none.
    [[nodiscard]] Result<std::uint64_t> recordedGeneration() const;
    // Integrity when `keyring` is older than the newest generation the audit log records.
    [[nodiscard]] Result<void> requireNotRolledBack(const crypto::Keyring& keyring) const;

private:
    AuditedTransactions& gate_;
};

}  // namespace sealtrain::core
