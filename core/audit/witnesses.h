// The witnesses a data directory keeps its audit heads with outside itself (issue #49,
// docs/operations/data-directory.md, "Witnesses"): files on another file system or host and TPM
// counters, recorded in the database (audit_witnesses) so that a copy of the directory knows
// what must agree with it. The directory's own audit.witness is the log's (audit_log.h); it is
// reset here like the others when its loss is accepted.
#pragma once

#include "sealtrain/audit/audit_log.h"
#include "sealtrain/audit/witness.h"
#include "sealtrain/base/result.h"
#include "sealtrain/crypto/secret_bytes.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sealtrain::core {

class PlatformChanges;
class Database;

namespace internal {

// "file:/ABSOLUTE/PATH" or "tpm:0xINDEX[@TCTI]", normalised; InvalidArgument in one sentence,
// also for a file inside `dataDir` (it would be rolled back with the directory).
[[nodiscard]] Result<std::string> normaliseWitnessLocation(std::string_view location,
                                                           const std::filesystem::path& dataDir);

// The TPM owner hierarchy's password, from `file` (one line; a trailing newline is not part of
// it): readable by its owner alone, at most 64 bytes. Kept in locked memory, never written.
[[nodiscard]] Result<std::shared_ptr<const crypto::SecretBytes>>
readTpmOwnerAuth(const std::filesystem::path& file);

class Witnesses final {
public:
    // The witnesses the database records, ready to be handed to the log before it opens. A TPM
    // counter is read, incremented and defined with `tpmOwnerAuth` (null: empty).
    [[nodiscard]] static Result<Witnesses>
    recorded(const Database& database,
             std::shared_ptr<const crypto::SecretBytes> tpmOwnerAuth = nullptr);

    [[nodiscard]] std::vector<audit::HeadWitness*> forLog() const;

    // Once the log has opened: resets each witness whose check failed, the loss accepted
    // (audit.witness_reset), then attaches each of `configured` that the database does not
    // record yet (audit.witness_attach). A configured witness that already holds heads is
    // refused unless `acceptLoss`: the directory is a copy from before it was attached.
    // Last, detaches each of `detached` (a witness the operator no longer wants): only a
    // recorded one, and only once it agreed with the log at this open (a witness whose check
    // failed stopped the open before this, unless its loss was accepted); never one also
    // configured. Audited as audit.witness_detach (reason "operator", the heads it held);
    // from then on it is neither given heads nor checked.
    [[nodiscard]] Result<void> settle(Database& database, const PlatformChanges& changes,
                                      const std::vector<std::string>& configured, bool acceptLoss,
                                      std::int64_t nowUnix,
                                      const std::vector<std::string>& detached = {});

    // Every witness kept outside the data directory (all of them: a file inside is refused).
    [[nodiscard]] std::vector<std::string> locations() const;

private:
    struct Kept {
        std::string location;
        std::unique_ptr<audit::HeadWitness> witness;
    };
    [[nodiscard]] Result<void> reset(Database& database, const PlatformChanges& changes,
                                     const audit::LostWitness& lost, std::int64_t nowUnix);
    [[nodiscard]] Result<void> attach(Database& database, const PlatformChanges& changes,
                                      const std::string& location, bool acceptLoss,
                                      std::int64_t nowUnix);
    [[nodiscard]] Result<void> detach(Database& database, const PlatformChanges& changes,
                                      const std::string& location);
    std::vector<Kept> kept_;
    std::shared_ptr<const crypto::SecretBytes> tpmOwnerAuth_;
};

// A restore: the witnesses the restored database records belong to the platform it was taken
// from (the restore's --witness rule stands for them). Each is forgotten, audited as
// audit.witness_detach; the restored platform's configuration attaches its own again.
[[nodiscard]] Result<std::vector<std::string>>
detachRecordedWitnesses(Database& database, const PlatformChanges& changes);

}  // namespace internal
}  // namespace sealtrain::core
