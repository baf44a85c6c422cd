// The model registry (issue #30; docs/registry.md): a recorded, verified checkpoint registered as
// a version of a named model, aliases (dev, staging, production, or one's own) that only a
// promotion approved by a second person moves, and every registration and approved promotion a
// signed in-toto statement in a DSSE envelope (docs/formats/registry.md), signed with the
// platform's registry key. The rules:
//
//   register   model.register in the job's project, for someone who may see the job; only a
//              checkpoint the control plane recorded, and only while its files are still the
//              ones recorded (the signature under its worker's key and the sealed file's SHA-256)
//   promote    asked by model.register; approved or rejected by model.approve, never by whoever
//              asked; an approval names the version's digest and is refused for any other; the
//              checkpoint is checked again before the alias moves
//   read       model.register or model.approve in the model's project
//
// A model belongs to the project of its first version. Every call is one audit entry (model.*),
// refusals with the real actor; what a caller can make the control plane keep is bounded
// (a description, a reason, the aliases of a model, one pending promotion per alias).
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/core/jobs/model_lookup.h"
#include "sealtrain/core/jobs/scheduling/scheduler.h"
#include "sealtrain/core/keys/key_release.h"
#include "sealtrain/core/registry/exports/export_folder.h"
#include "sealtrain/core/registry/exports/staging.h"
#include "sealtrain/crypto/signing.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace sealtrain::core {

class AuditedTransactions;

inline constexpr std::string_view kVersionFromJob = "job";
inline constexpr std::string_view kVersionImported = "import";

// One version of a model: a recorded checkpoint, or an imported GPT-2 folder, named.
struct ModelVersion {
    std::string name;
    std::int64_t version = 0;
    std::string project;
    std::string description;
    std::string source{kVersionFromJob};  // "job" or "import" (a base model)
    std::int64_t jobId = 0;               // 0 for an import
    std::int64_t step = 0;
    std::string digest;        // "sha256:" + the checkpoint plaintext's SHA-256 (its statement's)
    std::string sealedSha256;  // hex, of the sealed file as recorded
    std::string worker;        // whose key signed the checkpoint
    std::string datasetId;     // empty for an import
    // An import's tokenizer and shape (canonical JSON, docs/formats/registry.md); empty for a
    // job's version, whose are its dataset's and its spec's.
    std::string tokenizer;
    std::string shape;
    std::string base;  // "NAME@VERSION" its job started from; empty: trained from scratch
    std::string registeredBy;
    std::int64_t registered = 0;
    std::vector<std::string> aliases;  // the aliases that name it now
    std::string statement;             // the registration's DSSE envelope (JSON)

    [[nodiscard]] bool imported() const noexcept { return source == kVersionImported; }
    [[nodiscard]] std::string label() const { return name + "@" + std::to_string(version); }
};

enum class PromotionState { Pending, Approved, Rejected };

[[nodiscard]] std::string_view promotionStateName(PromotionState state);

// A request to point an alias at a version, and what became of it.
struct Promotion {
    std::int64_t id = 0;
    std::string model;
    std::int64_t version = 0;
    std::string alias;
    std::string digest;  // of the version, which an approval must name
    std::string reason;
    std::string requestedBy;
    std::int64_t requested = 0;
    PromotionState state = PromotionState::Pending;
    std::string decidedBy;
    std::int64_t decided = 0;
    std::string decisionReason;
    std::int64_t previousVersion = 0;  // the alias's version before; 0: none
    std::string statement;             // the approval's DSSE envelope (JSON); empty otherwise
};

// A request to export a version, and what became of it (docs/registry.md, "Exports").
struct ModelExport {
    std::int64_t id = 0;
    std::string model;
    std::int64_t version = 0;
    std::string digest;  // of the version, which an approval must name
    std::string reason;
    std::string requestedBy;
    std::int64_t requested = 0;
    PromotionState state = PromotionState::Pending;  // pending, approved, rejected
    std::string decidedBy;
    std::int64_t decided = 0;
    std::string decisionReason;
    std::int64_t downloads = 0;
    std::string folderDigest;  // "sha256:…" of the folder last handed over; empty before
};

struct ModelInfo {
    std::string name;
    std::string project;
    std::vector<ModelVersion> versions;  // oldest first
    std::vector<Promotion> promotions;   // oldest first
    std::vector<ModelExport> exports;    // oldest first
};

// A model, its newest version and its aliases, as a listing shows it.
struct ModelSummary {
    std::string name;
    std::string project;
    std::int64_t versions = 0;
    std::int64_t pendingPromotions = 0;
    std::vector<std::pair<std::string, std::int64_t>> aliases;  // alias, version
};

// An uploaded Hugging Face GPT-2 folder (issue #30), its files where the control plane received
// them.
struct ImportModel {
    std::string name;
    std::string project;
    std::string description;
    std::filesystem::path config;      // config.json
    std::filesystem::path weights;     // model.safetensors
    std::filesystem::path vocabulary;  // vocab.json
    std::filesystem::path merges;      // merges.txt
};

// What the data directory made of an import (registry/base_models.h): the files it keeps, checked.
struct StoredImport {
    std::string digest;        // "sha256:" + the normalised parameters' SHA-256
    std::string sealedSha256;  // hex, of the sealed parameters file
    std::string tokenizer;     // canonical JSON: id, files by SHA-256, vocab_size
    std::string shape;         // canonical JSON: layers, heads, width, context, vocab_size
    std::vector<std::pair<std::string, std::string>> sources;  // uploaded file, hex SHA-256
};

// Checks an import, asks `accept` whether to keep what it found (nothing is written when it
// refuses), then seals and keeps it as version `version` of `name`; and checks a kept import's
// files against its row (Integrity, saying which, when they are not the ones recorded).
using ImportAccept = std::function<Result<void>(const StoredImport& found)>;
using ImportStore =
    std::function<Result<StoredImport>(const ImportModel& upload, const std::string& name,
                                       std::int64_t version, const ImportAccept& accept)>;
using ImportCheck = std::function<Result<void>(const ModelVersion& version)>;

struct RegisterModel {
    std::string name;
    std::string description;
    std::int64_t jobId = 0;
    std::int64_t step = 0;  // 0: the job's newest recorded checkpoint
};

// A version with the checkpoint it names, for a caller that uses it (sampling, lineage).
struct ResolvedModel {
    ModelVersion version;
    JobCheckpoint checkpoint;
    std::string signerPem;  // the worker's signing key
};

// What the registry asks of the data directory's files: the recorded checkpoint checked (its
// envelope signed by `signerPem` over the recorded plaintext digest, its sealed file the one
// recorded), and its envelope's JSON. Integrity, saying which, when the files are not it.
using CheckpointCheck =
    std::function<Result<std::string>(const JobCheckpoint& recorded, const std::string& signerPem)>;

// The exported folder of a checked checkpoint, signed (buildExportFolder,
// registry/exports/export_folder.h).
using ExportBuilder = std::function<Result<ExportFolder>(
    const JobCheckpoint& recorded, const std::string& signerPem, const std::string& modelName)>;

// A recorded checkpoint whose files were checked, with its envelope and its signer.
struct CheckedCheckpoint {
    JobCheckpoint recorded;
    std::string envelope;   // its DSSE envelope, the bytes of the file
    std::string signerPem;  // the worker's signing key
};

inline constexpr std::size_t kMaxModelDescription = 1000;
inline constexpr std::size_t kMaxPromotionReason = 500;
inline constexpr std::int64_t kMaxModelAliases = 32;

class Registry final {
public:
    // `gate` and `scheduler` must outlive this object.
    Registry(AuditedTransactions& gate, Scheduler& scheduler);

    // Set once the data directory is open (data_directory.cpp); until both are, registering and
    // approving are refused with a sentence. `key` must outlive this object.
    void setCheckpointCheck(CheckpointCheck check) { check_ = std::move(check); }
    void setSigningKey(const crypto::SigningKey* key) { key_ = key; }
    // Exports are built by `builder` and staged for their download under `staging`
    // (registry/exports/staging.h).
    void setExportBuilder(ExportBuilder builder, std::filesystem::path staging)
    {
        export_ = std::move(builder);
        exportStaging_ = std::move(staging);
    }
    void setImportStore(ImportStore store, ImportCheck check)
    {
        importStore_ = std::move(store);
        importCheck_ = std::move(check);
    }

    // Whether the caller may import into `project` under `name` (model.register there), before
    // the upload is received: a refusal is audited as model.import.
    [[nodiscard]] Result<void> admitImport(const std::string& session, const std::string& name,
                                           const std::string& project);
    // An import refused because every upload slot is taken, audited as model.import with the
    // caller; returns the refusal.
    [[nodiscard]] Result<void> refuseBusyImport(const std::string& session,
                                                const std::string& reason);
    // An upload turned away before its header was admitted (none sent) or after it (files that
    // are not the four of a GPT-2 folder, a stream cut short, over --max-import-bytes, stalled):
    // `why`, audited as a failed model.import of `name` in `project` ("" before a header) with
    // the caller as its actor (issue #54), or the caller's own refusal (a session, or a
    // permission, that does not hold). Never a success.
    [[nodiscard]] Error refuseImport(const std::string& session, const std::string& name,
                                     const std::string& project, const Error& why);
    // Imports a GPT-2 folder as the next version of `upload.name` (model.import, with the
    // version's digest and every uploaded file's SHA-256): checked, its parameters sealed, the
    // registration signed. Nothing is kept when any check fails.
    [[nodiscard]] Result<ModelVersion> importModel(const std::string& session,
                                                   const ImportModel& upload);

    // Registers a checkpoint of job `request.jobId` as the next version of `request.name`
    // (model.register).
    [[nodiscard]] Result<ModelVersion> registerVersion(const std::string& session,
                                                       const RegisterModel& request);
    // The models the caller may read (model.list).
    [[nodiscard]] Result<std::vector<ModelSummary>> list(const std::string& session);
    // One model whole: versions, aliases, promotions (model.show).
    [[nodiscard]] Result<ModelInfo> show(const std::string& session, const std::string& name);

    // Asks that `alias` name `version` of `name` (model.promote_request).
    [[nodiscard]] Result<Promotion> requestPromotion(const std::string& session,
                                                     const std::string& name, std::int64_t version,
                                                     const std::string& alias,
                                                     const std::string& reason);
    // Approves promotion `id` for exactly `digest` (model.promote_approve): the alias moves and
    // the signed statement is kept.
    [[nodiscard]] Result<Promotion> approvePromotion(const std::string& session, std::int64_t id,
                                                     const std::string& digest);
    [[nodiscard]] Result<Promotion> rejectPromotion(const std::string& session, std::int64_t id,
                                                    const std::string& reason);

    // Exports (registry/exports/exports.cpp): asked by model.register for NAME@VERSION
    // (model.export_request); approved for exactly the version's digest, or rejected, by
    // model.approve, never by whoever asked (model.export_approve, model.export_reject); and,
    // once approved, the folder built and handed to whoever asked (model.export, with the
    // folder's digest). Without an approval nothing is built.
    [[nodiscard]] Result<ModelExport> requestExport(const std::string& session,
                                                    const std::string& reference,
                                                    const std::string& reason);
    [[nodiscard]] Result<ModelExport> approveExport(const std::string& session, std::int64_t id,
                                                    const std::string& digest);
    [[nodiscard]] Result<ModelExport> rejectExport(const std::string& session, std::int64_t id,
                                                   const std::string& reason);
    // The folder, staged sealed on disk for one download (registry/exports/staging.h), so that
    // streaming it holds one piece in memory at a time.
    [[nodiscard]] Result<StagedExport> exportModel(const std::string& session, std::int64_t id);
    // A download refused because every download slot is taken, audited as model.export of
    // export `id` with the caller; returns the refusal.
    [[nodiscard]] Result<void> refuseBusyDownload(const std::string& session, std::int64_t id,
                                                  const std::string& reason);

    // The version `reference` names, its checkpoint checked, for `purpose` ("sample"; audited as
    // model.use with the digest). The caller still needs the dataset's read release to use it.
    [[nodiscard]] Result<ResolvedModel>
    resolve(const std::string& session, const std::string& reference, const std::string& purpose);

    // The lineage document of a version (model.lineage; docs/formats/registry.md): dataset, job
    // and its approval, the checkpoint chain's envelopes, the registration, the promotions.
    [[nodiscard]] Result<std::string> lineage(const std::string& session,
                                              const std::string& reference);

private:
    [[nodiscard]] Result<std::string> checkCheckpoint(const JobCheckpoint& checkpoint,
                                                      std::string& signerPem) const;
    // A version's files checked on disk: an import's (importCheck_), or a job's checkpoint
    // chain up to its step.
    [[nodiscard]] Result<void> checkVersionFiles(const ModelVersion& version) const;
    // Every recorded checkpoint of `jobId` up to `step`, oldest first, each checked.
    [[nodiscard]] Result<std::vector<CheckedCheckpoint>> checkedChain(std::int64_t jobId,
                                                                      std::int64_t step) const;
    [[nodiscard]] Result<Promotion> decide(const std::string& session, std::int64_t id,
                                           const std::string& digest, const std::string& reason,
                                           bool approve);
    [[nodiscard]] Result<ModelExport> decideExport(const std::string& session, std::int64_t id,
                                                   const std::string& digest,
                                                   const std::string& reason, bool approve);

    AuditedTransactions& gate_;
    Scheduler& scheduler_;
    CheckpointCheck check_;
    const crypto::SigningKey* key_ = nullptr;
    ExportBuilder export_;
    std::filesystem::path exportStaging_;
    ImportStore importStore_;
    ImportCheck importCheck_;
};

}  // namespace sealtrain::core
