// What the client library hands back about jobs and their runs (docs/api.md, "Jobs" and "Runs"):
// plain values, no gRPC type; included by client.h.
#pragma once

#include "sealtrain/api/client_views.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sealtrain::api {

struct VettingCheck {
    std::string check;
    bool ok = false;
    std::string detail;
};

// A training job as the control plane reports it (docs/api.md, "Jobs").
struct JobSummary {
    std::int64_t id = 0;
    std::string name;
    std::string project;
    std::string state;
    std::string submitter;
    std::string approver;
    std::string specJson;
    std::string specSha256;
    std::string datasetId;
    std::string pool;
    std::int64_t priority = 0;
    std::vector<VettingCheck> vetting;
    std::string reason;
    std::int64_t restarts = 0;
    std::int64_t maxRestarts = 0;
    double gpuHoursLimit = 0.0;
    double gpuHoursUsed = 0.0;
    double cpuHoursLimit = 0.0;  // a CPU job's; 0 for a GPU job
    double cpuHoursUsed = 0.0;
    std::int64_t createdUnix = 0;
    std::int64_t updatedUnix = 0;
    std::string worker;  // the worker running it
    std::int64_t attempt = 0;
};

// One attempt of a run (Runs.ShowRun): the first, then one more at each restart.
struct RunAttemptView {
    std::int64_t attempt = 0;
    std::string worker;  // "": the control plane's own trainer
    std::int64_t startedUnix = 0;
    std::int64_t endedUnix = 0;  // 0 while it runs
    std::string outcome;         // running, succeeded, failed, cancelled, lost
    std::string reason;
    std::int64_t resumedFromStep = 0;  // 0: from scratch
    std::int64_t firstStep = 0;        // the steps whose metrics it recorded; 0 and 0: none
    std::int64_t lastStep = 0;
};

struct RunSummaryView {
    std::int64_t stepsPlanned = 0;
    std::int64_t stepsDone = 0;
    std::optional<double> lastLoss;
    std::optional<double> lastValidationLoss;
    std::optional<double> bestValidationLoss;  // showRun only
    std::int64_t bestValidationStep = 0;
    double meanTokensPerSecond = 0.0;  // showRun only
    double meanMfu = 0.0;              // showRun only
    std::int64_t peakMemoryBytes = 0;  // showRun only
};

// A job's run: its parameters are job.specJson, its outcome job.state and job.reason.
struct RunView {
    JobSummary job;
    std::vector<RunAttemptView> attempts;
    std::vector<JobCheckpointView> checkpoints;  // showRun only
    RunSummaryView summary;
};

// One training step of a run's history.
struct RunPointView {
    std::int64_t step = 0;
    std::int64_t attempt = 0;  // 0: recorded before tracking began
    double loss = 0.0;
    std::optional<double> validationLoss;
    double learningRate = 0.0;
    double gradientNorm = 0.0;
    double tokensPerSecond = 0.0;
    double mfu = 0.0;
    std::int64_t memoryBytes = 0;
};

}  // namespace sealtrain::api
