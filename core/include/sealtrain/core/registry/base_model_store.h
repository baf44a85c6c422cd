// Where imported base models are kept and what seals them (registry/base_models.h).
#pragma once

#include "sealtrain/crypto/kek.h"

#include <filesystem>
#include <vector>

namespace sealtrain::core {

// Where base models are kept and what seals them, as the data directory hands them down
// (DataDirectory::baseModels()): so that the registry reaches no higher than the
// files and keys it uses (issue #50).
struct BaseModelStore {
    std::filesystem::path dataDir;                   // models/ is under it
    std::filesystem::path datasetsRoot;              // a dataset's manifest names its tokenizer
    std::vector<const crypto::Kek*> checkpointKeks;  // the usable `checkpoints` KEKs
};

}  // namespace sealtrain::core
