// The dataset manifest (docs/formats/dataset.md): what a sealed dataset holds and where it came
// from. Its canonical JSON bytes (sorted keys, no white space) are hashed into the dataset id,
// which the control plane signs; any edit of the manifest changes the id.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/crypto/signing.h"
#include "sealtrain/dataset/tokenizer.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace sealtrain::dataset {

inline constexpr const char* kManifestFormat = "sealtrain-dataset/v1";
inline constexpr const char* kManifestFileName = "manifest.json";
inline constexpr const char* kManifestSignatureFileName = "manifest.sig";
inline constexpr const char* kShardContentType = "application/x-sealtrain-tokens";

enum class Split { Train, Validation };
[[nodiscard]] const char* splitName(Split split) noexcept;  // "train", "validation"

struct ShardEntry {
    std::string file;      // relative to the dataset folder, e.g. "train-00000.sealed"
    std::string objectId;  // the sealed object's id, 32 lowercase hex digits
    std::string sha256;    // SHA-256 of the sealed header and payload (not the key block)
    std::uint64_t tokens = 0;
};

struct SplitEntry {
    std::uint64_t records = 0;
    std::uint64_t tokens = 0;
    std::vector<ShardEntry> shards;
};

struct SourceEntry {
    std::string path;  // as the import named it: the input's name, then the path inside it
    std::string sha256;
    std::uint64_t bytes = 0;
};

struct Manifest {
    std::string name;
    std::string classification;  // e.g. "public", "internal", "phi"
    std::string creator;
    std::string createdAt;    // RFC 3339 UTC, as the caller gave it (may be empty)
    std::string parent;       // the parent dataset's id for a new version, else empty
    std::string inputFormat;  // "text-files", "text-records", "jsonl", "csv"
    std::string inputField;   // the JSONL field or CSV column; empty for text
    TokenizerInfo tokenizer;
    std::uint32_t tokenBytes = 2;  // 2 (uint16) when the vocabulary has at most 65536 ids, else 4
    std::uint64_t tokensPerShard = 0;
    std::uint32_t validationBasisPoints = 0;  // the split rule's share of validation, 0-10000
    bool piiRedacted = false;
    std::vector<SourceEntry> sources;
    std::map<std::string, std::uint64_t>
        counts;  // records_read, duplicates, skipped, pii_email, ...
    SplitEntry train;
    SplitEntry validation;

    [[nodiscard]] const SplitEntry& split(Split which) const noexcept
    {
        return which == Split::Train ? train : validation;
    }
    // The canonical bytes: JSON with keys sorted by their UTF-8 bytes, no insignificant white
    // space, integers only, strings with only '"', '\\' and control characters escaped.
    [[nodiscard]] std::string canonicalJson() const;
    // "sha256:" + lowercase hex SHA-256 of canonicalJson().
    [[nodiscard]] std::string id() const;
};

// Parses manifest bytes; Integrity when they are not canonical or not a v1 manifest.
[[nodiscard]] Result<Manifest> parseManifest(std::string_view bytes);

// The sealed header metadata a shard carries (canonical JSON), which binds it to its place.
[[nodiscard]] std::string shardMetadata(Split split, std::uint64_t index, std::uint32_t tokenBytes);
[[nodiscard]] std::string shardFileName(Split split, std::uint64_t index);

// Reads `folder`/manifest.json and checks that its bytes hash to `expectedId` ("sha256:…"). An
// empty `expectedId` means the folder's own name, which an import sets to the id's hex digits.
// Integrity (with what to do) when the manifest was edited or is not canonical.
[[nodiscard]] Result<Manifest> loadManifest(const std::filesystem::path& folder,
                                            const std::string& expectedId);

// The control plane's signature over a dataset: Ed25519 over the exact bytes of
// `folder`/manifest.json, written beside it as manifest.sig (standard base64 of the 64 bytes and
// a newline), replacing an older one atomically.
[[nodiscard]] Result<void> signManifest(const std::filesystem::path& folder,
                                        const crypto::SigningKey& key);
// Checks manifest.sig over manifest.json under `trusted` (the platform's public key).
// Unauthenticated, in one sentence, when the signature is missing, malformed or by another key.
[[nodiscard]] Result<void> verifyManifestSignature(const std::filesystem::path& folder,
                                                   const crypto::PublicKey& trusted);

}  // namespace sealtrain::dataset
