// The client library's handle on the Runs service, ControlClient::runs() (docs/api.md). Runs and
// their metrics history (runs.proto). Every call returns a Result whose error is the server's one
// sentence, or the client's own for a transport failure; no gRPC type crosses this header.
#pragma once

#include "sealtrain/api/client_call.h"
#include "sealtrain/api/job_views.h"
#include "sealtrain/base/result.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace sealtrain::api {

class RunsClient final : public client_internal::Handle {
public:
    using Handle::Handle;

    // Runs (client_runs.cpp): one page of the runs the caller may see, newest first; all of
    // them; one run whole; a page of its history from after `afterStep` (1 to 20000 steps); the
    // whole history, page by page.
    [[nodiscard]] Result<Page<RunView>> listRunsPage(std::int64_t before, std::uint32_t limit);
    [[nodiscard]] Result<std::vector<RunView>> listRuns();
    [[nodiscard]] Result<RunView> showRun(std::int64_t id);
    [[nodiscard]] Result<std::pair<std::vector<RunPointView>, std::int64_t>>
    runMetricsPage(std::int64_t id, std::int64_t afterStep, std::uint32_t limit);
    [[nodiscard]] Result<std::vector<RunPointView>> runMetrics(std::int64_t id);
};

}  // namespace sealtrain::api
