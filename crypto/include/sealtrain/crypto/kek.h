// A key-encryption key as the layers above see it: its identity (purpose id and version) and
// its 32 bytes of AES-256 key material. The keyring (keyring.h) creates, versions and retires
// them; sealed objects wrap their per-object DEK under one.
#pragma once

#include "sealtrain/crypto/secret_bytes.h"

#include <cstdint>
#include <functional>
#include <string>

namespace sealtrain::crypto {

struct Kek {
    std::string id;             // the purpose, e.g. "datasets", "checkpoints"; [a-z0-9._-]{1,64}
    std::uint32_t version = 1;  // starts at 1, grows with each rotation
    SecretBytes key;            // 32 bytes
};

// Finds the KEK a key block names. Returns PermissionDenied for a retired version and
// NotFound for an unknown id or version.
using KekResolver = std::function<Result<const Kek*>(const std::string& id, std::uint32_t version)>;

}  // namespace sealtrain::crypto
