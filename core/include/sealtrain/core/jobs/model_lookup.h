// What the jobs read of the model registry, which sits above them in core/'s order (issue #50;
// docs/architecture.md, "core/ by concept"): a fine-tuning spec's starting model for its vetting,
// the datasets behind the version a job starts from for its key release, and the read rule of
// sampling a registered model. The registry implements it (registry/starting_model.h's
// RegistryModelLookup) and the control plane hands it to Jobs and the Scheduler, so that jobs/
// never includes the registry's rows.
#pragma once

#include "sealtrain/base/result.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sealtrain::core {

struct Caller;
class AuditedTransactions;
class Database;

// A version as a caller names it: "NAME@VERSION", "NAME@ALIAS", or "NAME" (its newest version).
struct ModelReference {
    std::string name;
    std::int64_t version = 0;  // 0: by alias, or the newest when the alias is empty too
    std::string alias;
};
[[nodiscard]] Result<ModelReference> parseModelReference(std::string_view text);

// A registered version as a job that starts from it needs it.
struct StartingVersion {
    std::string label;  // "NAME@VERSION"
    std::string project;
    std::string digest;      // "sha256:" + the plaintext's SHA-256
    bool imported = false;   // a base model imported from a Hugging Face folder
    std::int64_t jobId = 0;  // the job that trained it; 0 for an import
    std::string datasetId;   // its job's dataset; empty for an import
    // An import's tokenizer and shape (canonical JSON); a job's version's are its dataset's and
    // its job's spec's.
    std::string tokenizer;
    std::string shape;
};

class ModelLookup {
public:
    ModelLookup() = default;
    ModelLookup(const ModelLookup&) = delete;
    ModelLookup& operator=(const ModelLookup&) = delete;
    virtual ~ModelLookup() = default;

    // The version number that alias `alias` of model `name` names now; 0 when none does.
    [[nodiscard]] virtual Result<std::int64_t> aliasVersion(const Database& database,
                                                            const std::string& name,
                                                            const std::string& alias) const = 0;
    // Version `version` of model `name`; NotFound, saying what to do, when there is none.
    [[nodiscard]] virtual Result<StartingVersion>
    version(const Database& database, const std::string& name, std::int64_t version) const = 0;
    // The datasets behind version `version` of model `name`: its job's, then those behind the
    // version its job started from, and so on, once each.
    [[nodiscard]] virtual Result<std::vector<std::string>>
    datasetsBehind(const Database& database, const std::string& name,
                   std::int64_t version) const = 0;
    // The read rule of sampling the version `reference` names (Jobs::admitSample; issue #54):
    // `caller` may read the model (model.register or model.approve in its project), holds
    // dataset.read there and a read grant on every dataset behind the version. NotFound or
    // PermissionDenied, in one sentence, otherwise.
    [[nodiscard]] virtual Result<void>
    requireSampleReadable(AuditedTransactions& gate, const Caller& caller,
                          const ModelReference& reference) const = 0;
};

}  // namespace sealtrain::core
