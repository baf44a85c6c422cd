// What comes back from a trainer (issue #28; split from the key release by duty in issue #50):
// a checkpoint of the control plane's own run, signed by the platform's checkpoints key; a job's
// recorded checkpoint, signed by the worker that uploaded it, holding the plaintext and sealed
// file the audit log records, and opened with its job's key for an export; a worker's upload,
// accepted only when it is signed by that worker's enrolled key, sealed under its job's key and
// of its job, run and dataset (and base model), then moved into its job's folder. The bytes are
// those of docs/formats/checkpoint.md; the types here are core's.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/core/keys/key_vault.h"
#include "sealtrain/formats/checkpoint.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace sealtrain::core {

struct Dispatch;
struct JobCheckpoint;
struct WorkerInfo;

// A checkpoint's two files: the sealed plaintext and its DSSE envelope.
struct CheckpointPaths {
    std::filesystem::path sealed;
    std::filesystem::path envelope;
    std::uint64_t step = 0;
};

// A checkpoint whose signature verified, and what it says of itself.
struct VerifiedCheckpoint {
    CheckpointPaths files;
    std::string plaintextSha256;  // hex, the signed statement's subject
    std::string datasetId;        // the lineage's dataset: sampling needs its read release
    std::int64_t job = 0;         // 0: a run of the control plane's own trainer
    std::string signerPem;        // the worker's signing key, for a job's checkpoint
};

class ReturnedCheckpoints final {
public:
    // What `vault` refers to (the open data directory) must outlive this object.
    explicit ReturnedCheckpoints(KeyVault vault);

    // The checkpoint at `path` (either of its files), signed by the platform's checkpoints key.
    [[nodiscard]] Result<VerifiedCheckpoint> checkpointAt(const std::filesystem::path& path) const;
    // The checkpoint `step` of the control plane's own run `runId` (0: its newest), verified.
    // InvalidArgument for a run id that is not one; NotFound, saying which, when there is none.
    [[nodiscard]] Result<VerifiedCheckpoint> runCheckpoint(const std::string& runId,
                                                           std::uint64_t step) const;
    // A job's recorded checkpoint, signed by `signerPem` (the worker that uploaded it) and with
    // the plaintext the audit log records; Integrity when the files are not that checkpoint.
    [[nodiscard]] Result<VerifiedCheckpoint> jobCheckpoint(const JobCheckpoint& recorded,
                                                           const std::string& signerPem) const;
    // jobCheckpoint, and the sealed file's SHA-256 the one recorded too: the registry's check
    // (registry.h), which returns the envelope's bytes. Integrity, saying which, otherwise.
    [[nodiscard]] Result<std::string> checkedJobCheckpoint(const JobCheckpoint& recorded,
                                                           const std::string& signerPem) const;
    // The recorded checkpoint, checked as checkedJobCheckpoint does and decrypted with its job's
    // key: its parameters, for an export made inside the control plane
    // (registry/exports/export_folder.h).
    [[nodiscard]] Result<trainer::LoadedCheckpoint>
    openJobCheckpoint(const JobCheckpoint& recorded, const std::string& signerPem) const;
    // The files of job `job`'s checkpoint at `step` in the data directory.
    [[nodiscard]] CheckpointPaths jobCheckpointFiles(std::int64_t job, std::int64_t step) const;
    // How many checkpoints the run `runId` wrote (0 when it wrote none or its folder is gone).
    [[nodiscard]] std::size_t runCheckpointCount(const std::string& runId) const;
    // The folder a new run of the control plane's own trainer writes to.
    [[nodiscard]] std::filesystem::path runFolder(const std::string& runId) const;

    // An uploaded checkpoint: `received` names one of its two files (as the trainer named them);
    // InvalidArgument unless both are there. Then verifyUpload decides whether it is accepted,
    // and keepUpload moves it into its job's folder once the record is (Scheduler's `keep`).
    [[nodiscard]] Result<CheckpointPaths>
    uploadedCheckpoint(const std::filesystem::path& received) const;
    // `baseSha256` is startingDigest (registry/starting_model.h) of the job's spec: a fine-tuning
    // job's checkpoint must name that model as its base, any other job's none.
    [[nodiscard]] Result<JobCheckpoint>
    verifyUpload(const WorkerInfo& worker, const Dispatch& dispatch, const CheckpointPaths& upload,
                 std::uint64_t maxBytes, const std::string& baseSha256 = {}) const;
    [[nodiscard]] Result<void> keepUpload(std::int64_t job, const CheckpointPaths& upload) const;

private:
    KeyVault vault_;
};

// Whether `id` is a run id the trainer writes ([A-Za-z0-9._-]{1,64}).
[[nodiscard]] bool isValidRunId(std::string_view id);

}  // namespace sealtrain::core
