// DSSE v1 envelopes (github.com/secure-systems-lab/dsse): a payload and its type, signed with
// Ed25519 over the pre-authentication encoding (PAE), serialised as JSON. Used for the
// statements Sealtrain signs (checkpoints, exports). docs/formats/keys.md has the details.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/crypto/signing.h"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sealtrain::crypto {

// "DSSEv1" SP LEN(type) SP type SP LEN(payload) SP payload, LEN in ASCII decimal.
[[nodiscard]] std::vector<std::uint8_t> dssePae(std::string_view payloadType,
                                                std::span<const std::uint8_t> payload);

struct DsseSignature {
    std::string keyid;  // a hint only (PublicKey::keyId()); never trusted for verification
    std::vector<std::uint8_t> sig;
};

struct DsseEnvelope {
    std::string payloadType;
    std::vector<std::uint8_t> payload;
    std::vector<DsseSignature> signatures;

    // {"payload":<base64>,"payloadType":...,"signatures":[{"keyid":...,"sig":<base64>}]}
    [[nodiscard]] std::string toJson() const;
    // Accepts standard or URL-safe base64 as the DSSE spec allows; InvalidArgument otherwise.
    [[nodiscard]] static Result<DsseEnvelope> fromJson(std::string_view json);
};

[[nodiscard]] DsseEnvelope signDsse(std::string_view payloadType,
                                    std::span<const std::uint8_t> payload, const SigningKey& key);

// Success when at least one signature verifies under `trusted` over the envelope's PAE;
// Unauthenticated otherwise. Key ids are not consulted.
[[nodiscard]] Result<void> verifyDsse(const DsseEnvelope& envelope, const PublicKey& trusted);

}  // namespace sealtrain::crypto
