// Comparing runs and exporting their histories (issue #30; docs/runs.md,
// docs/formats/run-metrics.md): what `sealtrainctl run compare|metrics` and the GUI's runs screen
// both show. Pure functions of what the control plane returned; no call of their own.
#pragma once

#include "sealtrain/api/job_views.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace sealtrain::api {

// A run's parameters: its canonical spec flattened to dotted names ("model.layers",
// "optimizer.lr"), each value as compact JSON (strings without their quotes), in name order.
[[nodiscard]] std::vector<std::pair<std::string, std::string>>
runParameters(const std::string& specJson);

// The runs side by side: every parameter name any of them has, with each run's value ("" where a
// run lacks it), and whether the values differ.
struct ParameterRow {
    std::string name;
    std::vector<std::string> values;  // one per run, in the order given
    bool differs = false;
};
[[nodiscard]] std::vector<ParameterRow> compareParameters(const std::vector<RunView>& runs);

// The histories of runs as CSV (RFC 4180, a header line, one line per step of each run in the
// order given) or as one JSON document (docs/formats/run-metrics.md). `histories[i]` is the
// history of `runs[i]`.
[[nodiscard]] std::string metricsCsv(const std::vector<RunView>& runs,
                                     const std::vector<std::vector<RunPointView>>& histories);
[[nodiscard]] std::string metricsJson(const std::vector<RunView>& runs,
                                      const std::vector<std::vector<RunPointView>>& histories);

}  // namespace sealtrain::api
