// The offline check of a model version's lineage document (docs/formats/registry.md): every
// signature in it and every link between them, with only the registry's public key. Used by
// `sealtrainctl model verify-lineage`; no control plane, no other key.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/crypto/signing.h"

#include <string>
#include <string_view>
#include <vector>

namespace sealtrain::ctl {

struct LineageVerdict {
    std::string model;  // NAME@VERSION
    std::string digest;
    // One line per signature checked and per link between them, in the order checked.
    std::vector<std::string> checked;
};

// Integrity (or Unauthenticated for a signature that does not verify), naming what failed, when
// any signature or link does not hold.
[[nodiscard]] Result<LineageVerdict> verifyLineage(std::string_view document,
                                                   const crypto::PublicKey& registryKey);

}  // namespace sealtrain::ctl
