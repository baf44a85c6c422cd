// The client library's handle on the Keyring service, ControlClient::keyring() (docs/api.md). The
// data directory's keyring, changed by the control plane while it serves (keyring.manage). Every
// call returns a Result whose error is the server's one sentence, or the client's own for a
// transport failure; no gRPC type crosses this header.
#pragma once

#include "sealtrain/api/client_call.h"
#include "sealtrain/base/result.h"
#include "sealtrain/crypto/secret_bytes.h"

#include <cstdint>
#include <string>
#include <vector>

namespace sealtrain::api {

// A KEK version of the data directory's keyring (docs/formats/keyring.md).
struct KekSummary {
    std::string id;
    std::uint32_t version = 0;
    std::string state;    // active, decrypt-only, retired
    std::string created;  // RFC 3339 UTC
    std::string retired;  // RFC 3339 UTC, when retired
};

// What a re-wrap did: a line per object re-wrapped.
struct RewrapOutcome {
    std::uint32_t rewrapped = 0;
    std::vector<std::string> lines;
};

class KeyringClient final : public client_internal::Handle {
public:
    using Handle::Handle;

    // The data directory's keyring, changed by the control plane while it serves (keyring.manage;
    // client_keyring.cpp). These calls may take minutes (a re-key, a re-wrap of every dataset).
    // Every KEK version, page by page, by id and version.
    [[nodiscard]] Result<std::vector<KekSummary>> listKeks();
    // The new active version; rotating `database` also re-keys the database.
    [[nodiscard]] Result<std::uint32_t> rotateKek(const std::string& id);
    [[nodiscard]] Result<RewrapOutcome> rewrapObjects(const std::string& id);
    [[nodiscard]] Result<void> retireKek(const std::string& id, std::uint32_t version);
    [[nodiscard]] Result<void> changePassphrase(const crypto::SecretBytes& current,
                                                const crypto::SecretBytes& next);
};

}  // namespace sealtrain::api
