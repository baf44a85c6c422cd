// The key release (issue #28): the one place that decides what any trainer receives, for the
// control plane's own runs, for a worker's job and for sampling (what comes back is
// keys/returned_checkpoints.h's, split from it by duty in issue #50). Every
// caller runs the audited check of core first (Datasets::authorizeRead, Jobs::start,
// Scheduler::take) and asks here only once it passed; what is handed over is then exactly:
//
//   own run    the data keys of the dataset's shards (the datasets KEK never leaves), the
//              usable `checkpoints` KEKs and the checkpoints signing key
//   worker     the data keys of the job's dataset and the job's own KEK ("job-<id>"), sealed to
//              the worker's X25519 key; when it resumes, the signer of the newest checkpoint
//   sampler    the KEK that opens one verified checkpoint and its signer's public key; nothing
//              of the dataset
//
// The bytes are those of docs/formats/trainer-keys.md; the types here are core's, so an
// adapter (api/, app/) needs no trainer/ or dataset/ header.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/core/keys/key_vault.h"
#include "sealtrain/core/keys/returned_checkpoints.h"
#include "sealtrain/crypto/secret_bytes.h"
#include "sealtrain/formats/checkpoint.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sealtrain::formats {
struct JobSpec;
}  // namespace sealtrain::formats

namespace sealtrain::core {

struct Dispatch;
struct JobCheckpoint;
struct WorkerInfo;

// What checking a dataset inside the control plane found (KeyRelease::verifyDataset).
struct DatasetCheck {
    std::uint64_t shards = 0;
    std::uint64_t tokens = 0;  // decrypted and authenticated
    std::string signer;        // the key id of the manifest's signer, the platform's
};

// The model a fine-tuning job starts from (its spec's model.init), its files checked: the sealed
// parameters (an import's, or the version's checkpoint) and the SHA-256 the trainer must find.
struct StartingModel {
    std::filesystem::path sealed;
    std::string sha256;    // hex, of the plaintext
    std::string name;      // "NAME@VERSION"
    std::int64_t job = 0;  // the job whose key sealed it; 0: an import (the checkpoints KEK)
};

// What a worker is handed for one attempt (Workers.TakeJob).
struct WorkerRelease {
    std::vector<std::uint8_t> sealedKeys;       // the trainer-keys text sealed to the worker
    std::string checkpointKek;                  // "job-<id>"
    std::vector<std::string> trainerArguments;  // the spec's, then the job's, run's and dataset's
    std::int64_t nodes = 1;
    std::int64_t gpusPerNode = 0;
    std::int64_t chargedGpus = 0;  // core::chargedGpus: what the attempt's hours are multiplied by
    std::int64_t ranksPerNode = 1;
    bool resume = false;
    bool startsFromModel = false;  // Workers.FetchInitModel, then --init-from that file
};

class KeyRelease final {
public:
    // What `vault` refers to (the open data directory) must outlive this object.
    explicit KeyRelease(KeyVault vault);

    // The keys of a run of the control plane's own trainer on `datasetId` (its release already
    // authorised): NotFound, saying what to do, when no `checkpoints` KEK is usable.
    // With `start`, the data key of that one object too.
    [[nodiscard]] Result<crypto::SecretBytes>
    forOwnRun(const std::string& datasetId,
              const std::optional<StartingModel>& start = std::nullopt) const;
    // The trainer's arguments for `start` read from `path` (--init-from, --init-sha256,
    // --init-name).
    [[nodiscard]] static std::vector<std::string> startArguments(const StartingModel& start,
                                                                 const std::filesystem::path& path);
    // A reader's check (after Datasets::authorizeRead with purpose "verify"): the manifest
    // against the dataset id and the platform's manifest key, and every shard decrypted with the
    // datasets key, which never leaves the control plane (`sealtrainctl dataset verify NAME`).
    [[nodiscard]] Result<DatasetCheck> verifyDataset(const std::string& datasetId) const;

    // The keys of one dispatch, sealed to `worker`; `resumeSignerPem` is the signer of the
    // checkpoint it resumes from (the worker that wrote it), or none for a fresh start; `start`
    // the model a fine-tuning job starts from (registry/starting_model.h, read with the dispatch).
    [[nodiscard]] Result<WorkerRelease>
    forWorker(const WorkerInfo& worker, const Dispatch& dispatch, const formats::JobSpec& spec,
              const std::optional<std::string>& resumeSignerPem,
              const std::optional<StartingModel>& start = std::nullopt) const;

    // The keys a sampler gets for `checkpoint` (its dataset's release already authorised).
    [[nodiscard]] Result<crypto::SecretBytes>
    forSampler(const VerifiedCheckpoint& checkpoint) const;

private:
    KeyVault vault_;
};

}  // namespace sealtrain::core
