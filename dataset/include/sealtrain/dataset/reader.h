// The trainer's side of a sealed dataset (issue #6): fixed-length sequences read at random from
// the sealed shards, shuffled by seed and epoch, split disjointly over ranks, decrypted ahead in
// a prefetch thread, with a position that can be saved and restored exactly. Plaintext stays in
// memory. The order is specified in docs/formats/dataset.md.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/crypto/kek.h"
#include "sealtrain/crypto/sealed.h"
#include "sealtrain/dataset/manifest.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

namespace sealtrain::dataset {

struct ReaderOptions {
    Split split = Split::Train;
    std::size_t context = 256;  // a sequence is context + 1 tokens (inputs and shifted targets)
    std::size_t batchSize = 8;  // sequences per batch on this rank
    std::uint64_t seed = 0;
    bool shuffle = true;
    std::uint32_t rank = 0;
    std::uint32_t worldSize = 1;
    std::size_t prefetchBatches = 4;  // 0: decrypt on the caller's thread
    // The platform's public key: when set, manifest.sig must verify under it (the trainer's
    // path always sets it; see verifyManifestSignature). Must outlive open().
    const crypto::PublicKey* signer = nullptr;
    // When set, each shard is opened with its own data key from here, and the resolver given
    // to open() is not asked (a trainer holds the shards' keys, never the datasets KEK). Must
    // outlive the reader.
    const crypto::DataKeyResolver* dataKeys = nullptr;
};

// Where a rank is: `index` sequences of this rank's share of epoch `epoch` are consumed.
struct ReaderPosition {
    std::uint64_t epoch = 0;
    std::uint64_t index = 0;
    friend bool operator==(const ReaderPosition&, const ReaderPosition&) = default;
};

struct Batch {
    ReaderPosition position;    // of the batch's first sequence
    std::size_t sequences = 0;  // batchSize, or fewer for the last batch of an epoch
    std::vector<std::uint64_t> sequenceIds;
    std::vector<std::int32_t> inputs;   // (sequences, context): tokens [0, context)
    std::vector<std::int32_t> targets;  // (sequences, context): tokens [1, context + 1)
};

class DatasetReader final {
public:
    // Loads the manifest (checked against `expectedId`, see loadManifest), checks its signature
    // when options.signer is set, opens every shard of the split with `resolver` and checks that
    // it is the shard the manifest lists (object id, header metadata, token count). Integrity
    // for a manifest edit or a shard from elsewhere, Unauthenticated for a wrong key or a
    // signature that is missing or by another key.
    [[nodiscard]] static Result<std::unique_ptr<DatasetReader>>
    open(const std::filesystem::path& folder, const std::string& expectedId,
         const crypto::KekResolver& resolver, const ReaderOptions& options);
    ~DatasetReader();
    DatasetReader(const DatasetReader&) = delete;
    DatasetReader& operator=(const DatasetReader&) = delete;

    [[nodiscard]] const Manifest& manifest() const noexcept;
    [[nodiscard]] const std::string& datasetId() const noexcept;
    // Sequence i is tokens [i * context, i * context + context + 1) of the split.
    [[nodiscard]] std::uint64_t sequenceCount() const noexcept;
    [[nodiscard]] std::uint64_t sequencesForRank() const noexcept;
    [[nodiscard]] std::uint64_t batchesPerEpoch() const noexcept;

    // The next batch of this rank; after the last of an epoch comes the first of the next.
    [[nodiscard]] Result<Batch> next();
    [[nodiscard]] ReaderPosition position() const noexcept;
    // Continues from a saved position: the batches that follow are the ones that followed it.
    [[nodiscard]] Result<void> seek(ReaderPosition position);
    // Random access to one sequence's context + 1 tokens.
    [[nodiscard]] Result<std::vector<std::int32_t>> sequence(std::uint64_t id);

private:
    struct State;
    explicit DatasetReader(std::unique_ptr<State> state);
    std::unique_ptr<State> state_;
};

// The sequence ids of epoch `epoch` in order (the permutation every rank shares).
[[nodiscard]] std::vector<std::uint64_t> epochOrder(std::uint64_t sequenceCount, std::uint64_t seed,
                                                    std::uint64_t epoch, bool shuffle);

struct VerifyReport {
    Manifest manifest;
    std::string datasetId;
    std::uint64_t shardsChecked = 0;
    std::uint64_t tokensChecked = 0;  // decrypted and authenticated (0 without a resolver)
    bool signatureChecked = false;    // manifest.sig verified under the given signer
};

// Checks the manifest against `expectedId`, its signature when `signer` is given, and every
// shard of both splits: present, the object the manifest names, the SHA-256 it lists; with a
// resolver also decrypts every chunk (which authenticates all of it) and counts the tokens. The
// first failure is the error.
[[nodiscard]] Result<VerifyReport> verifyDataset(const std::filesystem::path& folder,
                                                 const std::string& expectedId,
                                                 const crypto::KekResolver* resolver,
                                                 const crypto::PublicKey* signer = nullptr);

}  // namespace sealtrain::dataset
