// A dataset's lineage for the Datasets screen (issue #29): its versions left to right, each an
// arrow from the one it was imported after (the signed manifest's parent), and under each version
// the jobs that trained on it (for those who may see jobs), with their state; drawn by
// session/lineage_view.h.
#pragma once

#include "common/lineage_view.h"
#include "sealtrain/api/client.h"

#include <string>
#include <vector>

namespace sealtrain::gui {

// The versions of `selected`'s dataset name among `datasets`, each linked to the next, and the
// jobs among `jobs` whose dataset is one of them, under it.
[[nodiscard]] Lineage lineageOf(const std::vector<api::DatasetSummary>& datasets,
                                const std::vector<api::JobSummary>& jobs,
                                const std::string& selected);

}  // namespace sealtrain::gui
