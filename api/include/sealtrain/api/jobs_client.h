// The client library's handle on the Jobs service, ControlClient::jobs() (docs/api.md). Training
// jobs: submitted, vetted, approved by a second person, watched, and their checkpoints. Every call
// returns a Result whose error is the server's one sentence, or the client's own for a transport
// failure; no gRPC type crosses this header.
#pragma once

#include "sealtrain/api/client_call.h"
#include "sealtrain/api/client_views.h"
#include "sealtrain/api/job_views.h"
#include "sealtrain/base/result.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace sealtrain::api {

// One event of a job watch (Jobs.WatchJob): the job (first, and at each change), a metrics
// line, a log line, or a checkpoint recorded.
struct JobWatchEvent {
    enum class Kind { Job, Metrics, Log, Checkpoint };
    Kind kind = Kind::Job;
    JobSummary job;                // Kind::Job
    std::string line;              // Kind::Metrics (JSON) or Kind::Log (text)
    JobCheckpointView checkpoint;  // Kind::Checkpoint
};

class JobsClient final : public client_internal::Handle {
public:
    using Handle::Handle;

    // Jobs: each returns the job as it is after the call.
    [[nodiscard]] Result<JobSummary> submitJob(const std::string& specText);
    [[nodiscard]] Result<JobSummary> editJob(std::int64_t id, const std::string& specText);
    [[nodiscard]] Result<JobSummary> vetJob(std::int64_t id);
    [[nodiscard]] Result<JobSummary> approveJob(std::int64_t id, const std::string& specSha256);
    [[nodiscard]] Result<JobSummary> rejectJob(std::int64_t id, const std::string& reason);
    [[nodiscard]] Result<JobSummary> cancelJob(std::int64_t id, const std::string& reason);
    [[nodiscard]] Result<JobSummary> showJob(std::int64_t id);
    // One page of the jobs the caller may see, newest first (as listSessionsPage; a page may
    // hold fewer than `limit` and still have a next one).
    [[nodiscard]] Result<Page<JobSummary>> listJobsPage(std::int64_t before, std::uint32_t limit);
    // Every job the caller may see, newest first, page by page.
    [[nodiscard]] Result<std::vector<JobSummary>> listJobs();
    // The job's metrics lines (`logs` false) or log lines, from `fromStep`.
    [[nodiscard]] Result<std::vector<std::string>> jobMetrics(std::int64_t id, bool logs,
                                                              std::int64_t fromStep);
    // Follows the job (audited once): each event to `onEvent`, which returns false to stop
    // watching. Returns the job as last seen: when it has ended and its last line was handed
    // over, or when `onEvent` stopped. A watch has no deadline of its own (a job may run for
    // days); it ends with the session.
    [[nodiscard]] Result<JobSummary>
    watchJob(std::int64_t id, const std::function<bool(const JobWatchEvent&)>& onEvent,
             CallCancel* cancel = nullptr);
    // The job policy and the caller's projects' budget use (client_views.cpp).
    [[nodiscard]] Result<PolicySummary> showPolicy();
    // The checkpoints recorded for job `id`, oldest first (client_views.cpp).
    [[nodiscard]] Result<std::vector<JobCheckpointView>> listCheckpoints(std::int64_t id);
    // Job `id`'s checkpoint at `step` (0: the newest), sealed, with its DSSE envelope, into
    // `folder` (which must exist and be empty); the two files' paths.
    [[nodiscard]] Result<std::vector<std::filesystem::path>>
    downloadCheckpoint(std::int64_t id, std::int64_t step, const std::filesystem::path& folder);
};

}  // namespace sealtrain::api
