// The control plane's own trainer (issue #50, item 2; docs/runs.md): an approved job run here
// rather than on a worker, and sampling of a verified checkpoint within the job policy's caps,
// each one call of core for the Training service. The caller is checked first (Jobs::admitRun,
// Jobs::admitSample: a refusal audited with the caller), then the dataset's read release
// (Datasets::authorizeRead), then the key release hands the trainer exactly its keys
// (keys/key_release.h).
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/core/datasets/datasets.h"
#include "sealtrain/core/jobs/jobs.h"
#include "sealtrain/core/jobs/vetting/policy.h"
#include "sealtrain/core/keys/key_release.h"
#include "sealtrain/core/store/commit_group.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace sealtrain::core {

class DataDirectory;
class Registry;
class Scheduler;
class Workers;

// How a run of the control plane's own trainer ended.
struct OwnRunEnd {
    std::string runId;
    int exitCode = -1;
    std::size_t checkpoints = 0;  // written by the run
};

// What a sampler wrote, and the step of the checkpoint it read.
struct SampleText {
    std::string text;
    std::uint64_t step = 0;
};

// The parts of the control plane an own run reads and writes.
struct OwnRunParts {
    Jobs& jobs;
    Scheduler& scheduler;
    Datasets& datasets;
    Registry& registry;
    Workers& workers;
};

class OwnRuns final {
public:
    // `platform` and `parts` must outlive this object; `trainer` is the sealtrain-train to run
    // (empty: this control plane runs none, and every call says so).
    OwnRuns(DataDirectory& platform, OwnRunParts parts, InGroup inGroup,
            std::filesystem::path trainer);

    // Runs the approved job `jobId` here (Jobs::admitRun), its submitter's read grant checked
    // again now: each line the trainer writes goes to `onLine`, and its metrics into the run's
    // history a batch at a time; the job ends succeeded when the trainer exits 0, else failed,
    // with the GPU-hours its spec charges for the time it ran.
    [[nodiscard]] Result<OwnRunEnd> runJob(const std::string& session, std::int64_t jobId,
                                           const std::function<void(const std::string&)>& onLine);

    // Samples from `target` (a job's checkpoint, a registered version or a run's checkpoint)
    // with the caller's `options` within the policy's sampling caps; the sampler is stopped once
    // `callerGone` says so or after the policy's max_seconds.
    [[nodiscard]] Result<SampleText> sample(const std::string& session, const SampleTarget& target,
                                            const std::vector<std::string>& options,
                                            const std::function<bool()>& callerGone);

private:
    [[nodiscard]] Result<void> configuredTrainer() const;
    [[nodiscard]] Result<DatasetInfo> authorizeRead(const std::string& session,
                                                    const std::string& reference,
                                                    const std::string& purpose);
    // Runs the trainer on `info`'s dataset with its scoped keys and `arguments` (the job's
    // settings), each line to `onLine`.
    [[nodiscard]] Result<OwnRunEnd> train(const DatasetInfo& info,
                                          const std::optional<StartingModel>& start,
                                          const std::vector<std::string>& arguments,
                                          const std::function<void(const std::string&)>& onLine);
    // The checkpoint a job's sample reads: its newest, or the one at `step`, verified.
    [[nodiscard]] Result<VerifiedCheckpoint> jobCheckpoint(std::int64_t job, std::uint64_t step);
    // The checkpoint a registered version's sample reads (model.use audited by the registry).
    [[nodiscard]] Result<VerifiedCheckpoint> modelCheckpoint(const std::string& session,
                                                             const std::string& reference);
    // Runs `sealtrain-train sample` on a verified checkpoint once its dataset's read release is
    // authorised, with the keys the key release gives a sampler for it, checking that it reads
    // exactly that file.
    [[nodiscard]] Result<SampleText> sampleFrom(const std::string& session,
                                                const VerifiedCheckpoint& checkpoint,
                                                const SamplerCall& call,
                                                const JobPolicy::Sampling& limits,
                                                const std::function<bool()>& callerGone);

    DataDirectory& platform_;
    OwnRunParts parts_;
    InGroup inGroup_;
    std::filesystem::path trainer_;
    KeyRelease keys_;
    ReturnedCheckpoints returned_;
};

}  // namespace sealtrain::core
