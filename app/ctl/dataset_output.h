// How sealtrainctl shows one dataset (`dataset show`): its record in the control plane, its
// readers and what its signed manifest says, as JSON or as one "key: value" line each.
#pragma once

#include "sealtrain/api/client.h"

#include <nlohmann/json.hpp>

#include <iosfwd>

namespace sealtrain::ctl {

// The record, its readers and, when the control plane could read it, the manifest's facts.
[[nodiscard]] nlohmann::json describeDataset(const api::DatasetDetails& details);

// `description` as indented JSON when `json`, else one "key: value" line a key.
void printDescription(std::ostream& out, const nlohmann::json& description, bool json);

}  // namespace sealtrain::ctl
