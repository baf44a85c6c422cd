// The model a fine-tuning job starts from (its spec's model.init, pinned to a version by its
// vetting): found in the registry and its files checked as the registry checks them, for the key
// release that hands it to the trainer (dispatch/). Here and not in keys/, which is below the
// registry (issue #50). Both read the database: call them inside the call's group.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/core/keys/key_release.h"
#include "sealtrain/core/registry/base_model_store.h"

#include <optional>
#include <string>

namespace sealtrain::formats {
struct JobSpec;
}  // namespace sealtrain::formats

namespace sealtrain::core {

class Database;
class Scheduler;

// The starting model of `spec`, its files checked (Integrity, saying which, when altered); none
// for a job trained from scratch.
[[nodiscard]] Result<std::optional<StartingModel>>
startingModel(Database& database, Scheduler& scheduler, const KeyRelease& keys,
              const BaseModelStore& store, const formats::JobSpec& spec);

// The plaintext SHA-256 (hex) of the model `spec` starts from, empty for none: what a
// fine-tuning job's checkpoints must name as their base (KeyRelease::verifyUpload).
[[nodiscard]] Result<std::string> startingDigest(const Database& database,
                                                 const formats::JobSpec& spec);

}  // namespace sealtrain::core
