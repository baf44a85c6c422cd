// Training checkpoints (docs/architecture.md, "The trainer"; bytes in docs/formats/checkpoint.md):
//
//   plaintext  a safetensors file: the model's tensors under GPT-2 names, AdamW's two moments
//              under "optimizer.m." / "optimizer.v." + the same names, and in __metadata__ the
//              training configuration, step, optimizer step, loader position, run, job, dataset
//   sealed     that plaintext as a sealed object under the checkpoints KEK (crypto/sealed.h)
//   signed     an in-toto Statement v1 whose subject is the plaintext's file name and SHA-256
//              (so it survives re-encryption) with a lineage predicate (job, run, step, config
//              SHA-256, dataset, parent checkpoint), in a DSSE envelope signed with Ed25519
//
// A run's checkpoints live in one folder, each as <base>.sealed beside <base>.dsse.json, written
// atomically (the envelope last, so a checkpoint exists only once both are there) and pruned to
// the newest K. Loading verifies the signature before anything else and refuses, saying which,
// an untrusted signer, a statement that does not match the file, a broken chain, a tampered or
// truncated file, a wrong key, another configuration or another dataset.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/crypto/hash.h"
#include "sealtrain/crypto/kek.h"
#include "sealtrain/crypto/signing.h"
#include "sealtrain/dataset/reader.h"
#include "sealtrain/formats/gpt_config.h"
#include "sealtrain/formats/optimizer_settings.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sealtrain::trainer {

inline constexpr const char* kCheckpointFormat = "sealtrain-checkpoint/v1";
inline constexpr const char* kCheckpointContentType = "application/x-sealtrain-checkpoint";
inline constexpr const char* kInTotoPayloadType = "application/vnd.in-toto+json";
inline constexpr const char* kInTotoStatementType = "https://in-toto.io/Statement/v1";
inline constexpr const char* kLineagePredicateType = "https://sealtrain.dev/checkpoint-lineage/v1";
inline constexpr const char* kCheckpointsKekId = "checkpoints";

// Everything that decides the numbers a run computes. A run resumes only from a checkpoint
// with the same configuration, so that resuming gives the bits an uninterrupted run gives.
struct TrainingConfig {
    GptConfig model;            // the sequence length is model.contextLength
    std::size_t batch = 0;      // sequences per micro-batch on each rank
    std::size_t gradAccum = 1;  // micro-batches per optimizer step
    std::size_t worldSize = 1;  // ranks
    LearningRateSchedule schedule;
    AdamWParams adamw;
    double maxGradientNorm = 1.0;  // <= 0: no clipping
    std::uint64_t seed = 0;        // initialisation and data order

    // Canonical JSON: sorted keys, no white space, doubles in shortest round-trip form.
    [[nodiscard]] std::string toJson() const;
    // Integrity when `json` is not a configuration this build writes.
    [[nodiscard]] static Result<TrainingConfig> fromJson(std::string_view json);
    // The name of the first field (in toJson's order) whose value differs, or "" when none.
    [[nodiscard]] std::string firstDifference(const TrainingConfig& other) const;
};

// What a checkpoint records besides its tensors.
struct CheckpointState {
    TrainingConfig config;
    std::uint64_t step = 0;           // optimizer steps completed
    std::uint64_t optimizerStep = 0;  // AdamW's t
    dataset::ReaderPosition loader;   // where every rank's training reader continues
    std::string runId;                // [A-Za-z0-9._-]{1,64}
    std::string jobId;                // the control plane's job, or empty
    std::string datasetId;            // "sha256:…", the dataset manifest's id
    std::string tokenizer;            // the manifest's tokenizer id ("byte", "gpt2-bpe")
};

// Flat arrays in ParameterLayout order, each ParameterLayout::totalSize() long.
struct CheckpointTensors {
    std::span<const float> parameters;
    std::span<const float> firstMoment;
    std::span<const float> secondMoment;
};

// The safetensors plaintext of a checkpoint.
[[nodiscard]] Result<std::vector<std::uint8_t>> encodeCheckpoint(const CheckpointState& state,
                                                                 const CheckpointTensors& tensors);

struct DecodedCheckpoint {
    CheckpointState state;
    // In the padded layout; the padding rows of wte (not stored) are zero.
    std::vector<float> parameters;
    std::vector<float> firstMoment;
    std::vector<float> secondMoment;
};

// Integrity, naming what is missing or wrong, for plaintext that is not a v1 checkpoint.
[[nodiscard]] Result<DecodedCheckpoint> decodeCheckpoint(std::span<const std::uint8_t> plaintext);

// A checkpoint as a lineage link: its plaintext file name and the hex SHA-256 of its bytes.
struct CheckpointReference {
    std::string name;
    std::string sha256;
    friend bool operator==(const CheckpointReference&, const CheckpointReference&) = default;
};

// The signed statement's content.
struct CheckpointLineage {
    CheckpointReference subject;
    std::string job;
    std::string run;
    std::uint64_t step = 0;
    std::string configSha256;  // hex SHA-256 of TrainingConfig::toJson()
    std::string dataset;
    std::optional<CheckpointReference> parent;
    // The model the run started from (a fine-tuning run): "NAME@VERSION" and the SHA-256 of its
    // plaintext; every checkpoint of such a run names it. Absent for a run from scratch.
    std::optional<CheckpointReference> base;
};

// The in-toto Statement v1 JSON (canonical: sorted keys, no white space).
[[nodiscard]] std::string lineageStatement(const CheckpointLineage& lineage);
// Integrity when `json` is not a statement with Sealtrain's lineage predicate.
[[nodiscard]] Result<CheckpointLineage> parseLineageStatement(std::string_view json);

// The files of step `step` in a run's folder.
struct CheckpointFiles {
    std::uint64_t step = 0;
    std::filesystem::path sealed;    // <folder>/checkpoint-<step, 8 digits>.sealed
    std::filesystem::path envelope;  // <folder>/checkpoint-<step, 8 digits>.dsse.json
    // "checkpoint-<step, 8 digits>.safetensors": the statement's subject name.
    [[nodiscard]] std::string plaintextName() const;
};
[[nodiscard]] CheckpointFiles checkpointFiles(const std::filesystem::path& folder,
                                              std::uint64_t step);
// The files a path names: the .sealed file or its .dsse.json envelope. InvalidArgument when the
// name is not a checkpoint's.
[[nodiscard]] Result<CheckpointFiles> checkpointFilesFor(const std::filesystem::path& path);

// The complete checkpoints (sealed file and envelope both present) in `folder`, oldest first;
// empty when the folder does not exist.
[[nodiscard]] Result<std::vector<CheckpointFiles>>
listCheckpoints(const std::filesystem::path& folder);

struct WrittenCheckpoint {
    CheckpointFiles files;
    CheckpointReference reference;  // the parent of the next checkpoint
};

// Writes the checkpoint of state.step into `folder` (created 0700 when missing): the sealed
// file, then its signed envelope, each atomically; then removes all but the newest `keep`
// checkpoints (0 keeps all). AlreadyExists when that step's checkpoint is already there; on
// any failure the checkpoints that were there are left as they were.
[[nodiscard]] Result<WrittenCheckpoint>
writeCheckpoint(const std::filesystem::path& folder, const CheckpointState& state,
                const CheckpointTensors& tensors, const std::optional<CheckpointReference>& parent,
                const crypto::Kek& kek, const crypto::SigningKey& signingKey, std::size_t keep,
                const std::optional<CheckpointReference>& base = std::nullopt);

// Checks a checkpoint's envelope without any secret: signed by one of `trusted`
// (Unauthenticated otherwise), a well-formed lineage statement whose subject is this file's
// plaintext name and whose step is the file's (Integrity otherwise).
[[nodiscard]] Result<CheckpointLineage>
verifyCheckpointSignature(const CheckpointFiles& files, std::span<const crypto::PublicKey> trusted);

struct LoadedCheckpoint {
    CheckpointLineage lineage;
    DecodedCheckpoint checkpoint;
};

// verifyCheckpointSignature, then decrypts the sealed file (Unauthenticated for a wrong key,
// Integrity for a tampered or truncated file), checks the plaintext's SHA-256 against the
// statement and that the plaintext's metadata is the statement's (run, job, step, config,
// dataset).
[[nodiscard]] Result<LoadedCheckpoint> loadCheckpoint(const CheckpointFiles& files,
                                                      std::span<const crypto::PublicKey> trusted,
                                                      const crypto::KekResolver& resolver);

// What a launcher checked before it handed a checkpoint's path to the trainer: the file the
// trainer reads must still be that one, or whoever swaps it between the check and the use
// chooses what is used. An empty field is not checked.
struct AuthorisedCheckpoint {
    std::string sha256;     // hex SHA-256 of the plaintext, the signed statement's subject
    std::string datasetId;  // "sha256:…", the dataset whose release was authorised
};

// Unauthenticated, naming both values, when `loaded` is not the checkpoint `authorised` names.
[[nodiscard]] Result<void> checkAuthorised(const LoadedCheckpoint& loaded,
                                           const AuthorisedCheckpoint& authorised);

// What a resuming run requires of the checkpoint it continues.
struct ResumeExpectations {
    TrainingConfig config;
    std::string datasetId;
    std::string runId;  // empty: the checkpoint's run is continued, whichever it is
};

// loadCheckpoint plus the chain and the run's expectations: every older checkpoint in the same
// folder must be signed by a trusted key, be of the same run and be the parent of the next one
// (Integrity "broken chain" otherwise); the configuration and the dataset must be the run's
// (InvalidArgument naming the field, or the datasets).
[[nodiscard]] Result<LoadedCheckpoint>
loadCheckpointForResume(const CheckpointFiles& files, std::span<const crypto::PublicKey> trusted,
                        const crypto::KekResolver& resolver,
                        const ResumeExpectations& expectations);

// Whether `id` may name a run: 1 to 64 characters of A-Z a-z 0-9 . _ -.
[[nodiscard]] bool isValidRunId(std::string_view id);
// Whether `text` is a SHA-256 in lowercase hex (64 digits).
[[nodiscard]] bool isSha256Hex(std::string_view text);

}  // namespace sealtrain::trainer
