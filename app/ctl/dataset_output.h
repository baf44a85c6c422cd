// How sealtrainctl shows one dataset (`dataset show`): its record in the control plane, its
// readers and what its signed manifest says, as JSON or as one "key: value" line each.
#pragma once

#include "sealtrain/api/client.h"
#include "sealtrain/core/datasets/datasets.h"

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <optional>

namespace sealtrain::ctl {

// A dataset's record as `dataset list --json` prints it.
[[nodiscard]] nlohmann::json datasetJson(const core::DatasetInfo& info);

// The record, its readers and, when given, the manifest's facts.
[[nodiscard]] nlohmann::json describeDataset(const core::DatasetInfo& info,
                                             const std::optional<api::ManifestFacts>& manifest);

// `description` as indented JSON when `json`, else one "key: value" line a key.
void printDescription(std::ostream& out, const nlohmann::json& description, bool json);

}  // namespace sealtrain::ctl
