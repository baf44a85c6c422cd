// The keys a trainer process receives from its parent (docs/formats/trainer-keys.md): KEKs in
// key-file lines, the Ed25519 key that signs checkpoints and the public keys trusted for resume,
// written by the parent on a pipe (or another inherited descriptor) and never passed in argv,
// the environment or a readable file. Every byte read passes through wiped buffers.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/crypto/kek.h"
#include "sealtrain/crypto/sealed.h"
#include "sealtrain/crypto/secret_bytes.h"
#include "sealtrain/crypto/signing.h"

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace sealtrain::trainer {

inline constexpr std::string_view kTrainerKeysMagic = "sealtrain-trainer-keys-v1";

// One sealed object's data key, as the control plane hands it over in place of a KEK.
struct DataKey {
    crypto::SealedObjectId objectId{};
    crypto::SecretBytes key;
};

struct TrainerKeys {
    std::vector<crypto::Kek> keks;
    // The data keys of single objects (a dataset's shards), by object id.
    std::map<crypto::SealedObjectId, crypto::SecretBytes> dataKeys;
    std::optional<crypto::SigningKey> signingKey;
    // Keys whose checkpoints may be resumed from or sampled; the signing key's own public key is
    // always among them.
    std::vector<crypto::PublicKey> trusted;

    // The KEK with this id and version, for sealed readers (NotFound otherwise).
    [[nodiscard]] crypto::KekResolver resolver() const;
    // The data key of an object, for sealed readers (NotFound otherwise).
    [[nodiscard]] crypto::DataKeyResolver dataKeyResolver() const;
    // The newest version of the KEK `id`, or nullptr.
    [[nodiscard]] const crypto::Kek* newest(std::string_view id) const;
};

// Parses the handoff text. InvalidArgument, naming the line but never quoting it, when it is
// not the format; a second signing key, a duplicate KEK or a missing magic line are refused.
[[nodiscard]] Result<TrainerKeys> parseTrainerKeys(std::span<const std::uint8_t> text);

// Reads `fd` to its end (at most 64 KiB) and parses it. Refuses a descriptor that is a terminal
// or a regular file that group or others may access, with what to do instead.
[[nodiscard]] Result<TrainerKeys> readTrainerKeys(int fd);

// The handoff text a parent writes: the KEKs, the signing key (if any), extra trusted keys and
// the data keys of single objects.
[[nodiscard]] Result<crypto::SecretBytes>
formatTrainerKeys(std::span<const crypto::Kek* const> keks, const crypto::SigningKey* signingKey,
                  std::span<const crypto::PublicKey> trusted,
                  std::span<const DataKey> dataKeys = {});

// `keys` (handoff text that holds no signing key) with `signingKeyPem` (an Ed25519 private key,
// PKCS#8 PEM) added as its signing key: what a worker hands its trainer, so that its checkpoints
// are signed with the worker's enrolled key. InvalidArgument, quoting neither, when `keys` is not
// the format or already holds a signing key, or `signingKeyPem` is not such a key.
[[nodiscard]] Result<crypto::SecretBytes>
addSigningKey(std::span<const std::uint8_t> keys, std::span<const std::uint8_t> signingKeyPem);

}  // namespace sealtrain::trainer
