// The model a fine-tuning job starts from (its spec's model.init, pinned to a version by its
// vetting): found in the registry and its files checked as the registry checks them, for the key
// release that hands it to the trainer (dispatch/). Here and not in keys/, which is below the
// registry (issue #50). Both read the database: call them inside the call's group.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/core/jobs/model_lookup.h"
#include "sealtrain/core/keys/key_release.h"
#include "sealtrain/core/registry/base_model_store.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sealtrain::formats {
struct JobSpec;
}  // namespace sealtrain::formats

namespace sealtrain::core {

class Database;
class Scheduler;

// The starting model of `spec`, its files checked (Integrity, saying which, when altered); none
// for a job trained from scratch.
[[nodiscard]] Result<std::optional<StartingModel>>
startingModel(Database& database, Scheduler& scheduler, const ReturnedCheckpoints& checkpoints,
              const BaseModelStore& store, const formats::JobSpec& spec);

// The plaintext SHA-256 (hex) of the model `spec` starts from, empty for none: what a
// fine-tuning job's checkpoints must name as their base (ReturnedCheckpoints::verifyUpload).
[[nodiscard]] Result<std::string> startingDigest(const Database& database,
                                                 const formats::JobSpec& spec);

// The model registry's rows as the jobs read them (jobs/model_lookup.h); the control plane owns
// one and hands it to Jobs and the Scheduler. It holds nothing: every call reads `database`.
class RegistryModelLookup final : public ModelLookup {
public:
    [[nodiscard]] Result<std::int64_t> aliasVersion(const Database& database,
                                                    const std::string& name,
                                                    const std::string& alias) const override;
    [[nodiscard]] Result<StartingVersion> version(const Database& database, const std::string& name,
                                                  std::int64_t version) const override;
    [[nodiscard]] Result<std::vector<std::string>>
    datasetsBehind(const Database& database, const std::string& name,
                   std::int64_t version) const override;
    [[nodiscard]] Result<void>
    requireSampleReadable(AuditedTransactions& gate, const Caller& caller,
                          const ModelReference& reference) const override;
};

}  // namespace sealtrain::core
