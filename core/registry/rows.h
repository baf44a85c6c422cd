// The registry's rows as its calls read them (registry.cpp, registry/promotions.cpp) and the
// statements it signs (registry/statements.cpp; docs/formats/registry.md). Not installed.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/core/datasets/datasets.h"
#include "sealtrain/core/jobs/jobs.h"
#include "sealtrain/core/registry/registry.h"
#include "sealtrain/crypto/signing.h"
#include "store/audited_transaction.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sealtrain::core::internal {

// The in-toto statements' payload type and predicate types.
inline constexpr std::string_view kInTotoPayloadType = "application/vnd.in-toto+json";
inline constexpr std::string_view kVersionPredicate =
    "https://sealtrain.dev/registry/model-version/v1";
inline constexpr std::string_view kPromotionPredicate =
    "https://sealtrain.dev/registry/promotion/v1";
inline constexpr std::string_view kImportPredicate =
    "https://sealtrain.dev/registry/base-model-import/v1";

// The project of model `name`, or nullopt when it has no version yet.
[[nodiscard]] Result<std::optional<std::string>> modelProject(const Database& database,
                                                              const std::string& name);
// Whether `caller` may read the models of `project` (model.register or model.approve there).
[[nodiscard]] bool mayReadModels(AuditedTransactions& gate, const Caller& caller,
                                 const std::string& project);
// Version `version` of `name`, with its aliases; NotFound, saying what to do, when there is none.
[[nodiscard]] Result<ModelVersion> loadVersion(const Database& database, const std::string& name,
                                               std::int64_t version);
// Model `name` whole (no versions: an empty model), once the caller may read it.
[[nodiscard]] Result<ModelInfo> loadModel(AuditedTransactions& gate, const Caller& caller,
                                          const std::string& name);
// The version `reference` names, once the caller may read the model.
[[nodiscard]] Result<ModelVersion> resolveVersion(AuditedTransactions& gate, const Caller& caller,
                                                  const ModelReference& reference);
[[nodiscard]] Result<Promotion> loadPromotion(const Database& database, std::int64_t id);
[[nodiscard]] Result<ModelExport> loadExport(const Database& database, std::int64_t id);
// The datasets behind `version`: its job's, then those behind the version its job started from,
// and so on (at most kMaxLineage versions deep), once each.
inline constexpr int kMaxLineage = 64;
[[nodiscard]] Result<std::vector<std::string>> datasetsBehind(const Database& database,
                                                              const ModelVersion& version);
// The read rule of a model's data (sampling, issue #54; exports): `caller` holds dataset.read in
// `version`'s project and a read grant on every dataset behind it; those datasets as the caller
// reads them. PermissionDenied in one sentence otherwise.
[[nodiscard]] Result<std::vector<DatasetReaderView>>
requireLineageReadable(AuditedTransactions& gate, const Caller& caller,
                       const ModelVersion& version);
// The data rule of a way out (issue #48): `caller` holds dataset.read in `version`'s project and a
// read grant on every dataset behind it, and each dataset's classification is one of `allowed`
// (the policy's exports.classifications). PermissionDenied in one sentence otherwise.
[[nodiscard]] Result<void> requireDataMayLeave(AuditedTransactions& gate, const Caller& caller,
                                               const ModelVersion& version,
                                               const std::vector<std::string>& allowed);
// Every export of model `name`, oldest first.
[[nodiscard]] Result<std::vector<ModelExport>> loadExports(const Database& database,
                                                           const std::string& name);

// The registration's DSSE envelope (JSON): `version`, trained by `job`, whose checkpoint chain
// (oldest first, the version's checkpoint last) is `chain`.
[[nodiscard]] Result<std::string> registrationStatement(const ModelVersion& version,
                                                        const JobInfo& job,
                                                        const std::vector<CheckedCheckpoint>& chain,
                                                        const crypto::SigningKey& key);
// An imported base model's registration: its DSSE envelope (JSON).
[[nodiscard]] std::string importStatement(const ModelVersion& version, const StoredImport& stored,
                                          const crypto::SigningKey& key);
// An approved promotion's DSSE envelope (JSON).
[[nodiscard]] std::string promotionStatement(const Promotion& promotion,
                                             const crypto::SigningKey& key);

}  // namespace sealtrain::core::internal
