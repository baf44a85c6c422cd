// The control plane's own trainer (own_runs.h): an approved job run here, and sampling.
#include "sealtrain/core/dispatch/own_runs.h"
#include "sealtrain/core/registry/starting_model.h"

#include "sealtrain/base/encoding.h"
#include "sealtrain/core/data_directory/data_directory.h"
#include "sealtrain/core/datasets/datasets.h"
#include "sealtrain/core/jobs/scheduling/budgets.h"
#include "sealtrain/core/jobs/scheduling/scheduler.h"
#include "sealtrain/core/registry/registry.h"
#include "sealtrain/core/workers/workers.h"
#include "sealtrain/crypto/random.h"
#include "sealtrain/formats/job_spec.h"
#include "sealtrain/node/trainer_launcher.h"

#include <fmt/format.h>

#include <chrono>
#include <map>
#include <utility>

namespace sealtrain::core {
namespace {

// The control plane's own run records its metrics lines this many at a time (and its last ones
// when it ends): one write per 50 steps rather than one per step.
constexpr std::size_t kRecordEvery = 50;

}  // namespace

OwnRuns::OwnRuns(DataDirectory& platform, OwnRunParts parts, InGroup inGroup,
                 std::filesystem::path trainer)
    : platform_(platform)
    , parts_(parts)
    , inGroup_(std::move(inGroup))
    , trainer_(std::move(trainer))
    , keys_(platform.keyVault())
    , returned_(platform.keyVault())
{
}

Result<void> OwnRuns::configuredTrainer() const
{
    if (trainer_.empty())
        return Error(ErrorCode::NotFound, "This control plane runs no trainer; its operator gives "
                                          "sealtrain-control --trainer PATH.");
    return success();
}

Result<DatasetInfo> OwnRuns::authorizeRead(const std::string& session, const std::string& reference,
                                           const std::string& purpose)
{
    return inGroupResult(
        inGroup_, [&] { return parts_.datasets.authorizeRead(session, reference, purpose); });
}

Result<OwnRunEnd> OwnRuns::runJob(const std::string& session, std::int64_t jobId,
                                  const std::function<void(const std::string&)>& onLine)
{
    SEALTRAIN_TRY(configuredTrainer());
    JobInfo job;
    SEALTRAIN_ASSIGN(job,
                     inGroupResult(inGroup_, [&] { return parts_.jobs.admitRun(session, jobId); }));
    formats::JobSpec spec;
    SEALTRAIN_ASSIGN(spec, formats::parseJobSpec(job.specJson, formats::kJobSpecCeiling));
    // The submitter's read grant is checked again now (it may have been revoked since the
    // vetting), and the job starts only as approved.
    DatasetInfo info;
    SEALTRAIN_ASSIGN(info, authorizeRead(session, job.datasetId, fmt::format("job {}", job.id)));
    // A fine-tuning job's starting model, its files checked before the job starts.
    std::optional<StartingModel> start;
    std::int64_t attempt = 0;
    if (auto grouped = inGroup_([&]() -> Result<void> {
            SEALTRAIN_ASSIGN(start, startingModel(platform_.database(), parts_.scheduler, returned_,
                                                  platform_.baseModels(), spec));
            JobInfo running;
            SEALTRAIN_ASSIGN(running, parts_.jobs.start(job.id));
            attempt = running.attempt;
            return success();
        });
        !grouped)
        return grouped.error();
    std::vector<std::string> arguments = formats::trainerArguments(spec);
    arguments.insert(arguments.end(), {"--job-id", std::to_string(job.id)});
    if (start) {
        const auto more = KeyRelease::startArguments(*start, start->sealed);
        arguments.insert(arguments.end(), more.begin(), more.end());
    }
    const auto began = std::chrono::steady_clock::now();
    // The run's metrics go into its history (docs/runs.md) as a worker's would, a batch at a
    // time; a line that is not a metrics line is only streamed.
    std::vector<MetricsLine> batch;
    Result<void> recorded = success();
    const auto record = [&]() {
        if (batch.empty() || !recorded)
            return;
        recorded =
            inGroup_([&]() { return parts_.scheduler.recordOwnRun(job.id, attempt, batch); });
        batch.clear();
    };
    auto ran = train(info, start, arguments, [&](const std::string& line) {
        onLine(line);
        if (auto parsed = parseMetricsLine(line))
            batch.push_back(std::move(parsed).value());
        if (batch.size() >= kRecordEvery)
            record();
    });
    record();
    const double hours =
        std::chrono::duration<double, std::ratio<3600>>(std::chrono::steady_clock::now() - began)
            .count();
    const bool succeeded = ran && ran->exitCode == 0;
    const int exitCode = ran ? ran->exitCode : -1;
    auto finished = inGroup_([&]() -> Result<void> {
        SEALTRAIN_TRY(parts_.jobs.finish(
            job.id, succeeded, gpuHoursCharged(spec, hours),
            succeeded ? std::string()
                      : fmt::format("the trainer stopped with exit status {}", exitCode)));
        return success();
    });
    if (!ran)
        return ran.error();
    if (!finished)
        return finished.error();
    if (!recorded)
        return recorded.error();
    return ran;
}

Result<OwnRunEnd> OwnRuns::train(const DatasetInfo& info, const std::optional<StartingModel>& start,
                                 const std::vector<std::string>& arguments,
                                 const std::function<void(const std::string&)>& onLine)
{
    crypto::SecretBytes keys;
    SEALTRAIN_ASSIGN(keys, keys_.forOwnRun(info.id, start));
    OwnRunEnd end;
    end.runId = "run-" + toHex(crypto::randomBytes(8));
    const auto runFolder = returned_.runFolder(end.runId);
    std::vector<std::string> trainerArguments{
        "--dataset",
        datasetFolder(platform_.datasetsRoot(), info.id).string(),
        "--dataset-id",
        info.id,
        "--dataset-signer",
        (platform_.path() / datadir::kManifestsPublicKey).string(),
        "--out",
        runFolder.string(),
        "--run-id",
        end.runId};
    trainerArguments.insert(trainerArguments.end(), arguments.begin(), arguments.end());
    node::TrainerLaunch launch;
    launch.executable = trainer_.string();
    launch.subcommand = "train";
    launch.arguments = std::move(trainerArguments);
    SEALTRAIN_ASSIGN(end.exitCode,
                     node::runTrainer(launch, std::move(keys), [&](std::string_view line) {
                         if (!line.empty() && line.back() == '\n')
                             line.remove_suffix(1);
                         onLine(std::string(line));
                     }));
    end.checkpoints = returned_.runCheckpointCount(end.runId);
    return end;
}

Result<SampleText> OwnRuns::sample(const std::string& session, const SampleTarget& target,
                                   const std::vector<std::string>& options,
                                   const std::function<bool()>& callerGone)
{
    // One decision of core first (issue #54): the caller, the options, the object's read rule,
    // then what the object holds; a refusal is audited with the caller, and an anonymous caller
    // learns nothing of which runs or jobs have checkpoints.
    JobPolicy::Sampling limits;
    SamplerCall call;
    if (auto grouped = inGroup_([&]() -> Result<void> {
            limits = parts_.jobs.policy().sampling;
            SEALTRAIN_ASSIGN(call, parts_.jobs.admitSample(session, target, options));
            return success();
        });
        !grouped)
        return grouped.error();
    SEALTRAIN_TRY(configuredTrainer());
    // A model carries the classification of its data: sampling needs the same release as
    // reading the dataset, and only a checkpoint this platform signed counts.
    auto checkpoint = target.job != 0         ? jobCheckpoint(target.job, target.step)
                      : !target.model.empty() ? modelCheckpoint(session, target.model)
                                              : returned_.runCheckpoint(target.runId, target.step);
    if (!checkpoint)
        return checkpoint.error();
    return sampleFrom(session, *checkpoint, call, limits, callerGone);
}

// Sample from a job's checkpoint: signed by the worker that trained it (its enrolled key),
// sealed under the job's own key; the same read release as the dataset's.
Result<VerifiedCheckpoint> OwnRuns::jobCheckpoint(std::int64_t job, std::uint64_t step)
{
    std::vector<JobCheckpoint> recorded;
    std::map<std::string, std::string> signerPems;
    if (auto grouped = inGroup_([&]() -> Result<void> {
            SEALTRAIN_ASSIGN(recorded, parts_.scheduler.checkpoints(job));
            for (const JobCheckpoint& checkpoint : recorded) {
                if (signerPems.count(checkpoint.worker) > 0)
                    continue;
                WorkerInfo worker;
                SEALTRAIN_ASSIGN(worker, parts_.workers.byName(checkpoint.worker));
                signerPems[checkpoint.worker] = worker.signingKeyPem;
            }
            return success();
        });
        !grouped)
        return grouped.error();
    const JobCheckpoint* chosen = nullptr;
    for (const JobCheckpoint& checkpoint : recorded)
        if (step == 0 || checkpoint.step == static_cast<std::int64_t>(step))
            chosen = &checkpoint;
    if (chosen == nullptr)
        return Error(ErrorCode::NotFound,
                     step == 0
                         ? fmt::format("Job {} has no checkpoint yet; wait for its worker.", job)
                         : fmt::format("Job {} has no checkpoint at step {}; leave --step "
                                       "out for its newest.",
                                       job, step));
    return returned_.jobCheckpoint(*chosen, signerPems[chosen->worker]);
}

// Sample from a registered model version: the registry resolves the reference and checks its
// checkpoint's files (audited as model.use with the digest), then the job's checkpoint rule.
Result<VerifiedCheckpoint> OwnRuns::modelCheckpoint(const std::string& session,
                                                    const std::string& reference)
{
    ResolvedModel resolved;
    SEALTRAIN_ASSIGN(resolved, inGroupResult(inGroup_, [&] {
                         return parts_.registry.resolve(session, reference, "sample");
                     }));
    return returned_.jobCheckpoint(resolved.checkpoint, resolved.signerPem);
}

Result<SampleText> OwnRuns::sampleFrom(const std::string& session,
                                       const VerifiedCheckpoint& checkpoint,
                                       const SamplerCall& call, const JobPolicy::Sampling& limits,
                                       const std::function<bool()>& callerGone)
{
    DatasetInfo info;
    SEALTRAIN_ASSIGN(info, authorizeRead(session, checkpoint.datasetId, "sample"));
    crypto::SecretBytes keys;
    SEALTRAIN_ASSIGN(keys, keys_.forSampler(checkpoint));
    // The sampler is killed when the caller goes away or after the policy's max_seconds.
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(limits.maxSeconds);
    const auto stopReason = [&]() -> std::optional<std::string> {
        if (callerGone())
            return std::string("The caller went away; the sampler was stopped.");
        if (std::chrono::steady_clock::now() > deadline)
            return fmt::format("The sampler ran past the job policy's sampling.max_seconds ({} s) "
                               "and was stopped; ask for fewer tokens.",
                               limits.maxSeconds);
        return std::nullopt;
    };
    // It must read exactly the checkpoint verified here, of this dataset.
    std::vector<std::string> samplerArguments{"--checkpoint",
                                              checkpoint.files.sealed.string(),
                                              "--expect-checkpoint-sha256",
                                              checkpoint.plaintextSha256,
                                              "--expect-dataset-id",
                                              info.id};
    samplerArguments.insert(samplerArguments.end(), call.arguments.begin(), call.arguments.end());
    // The prompt goes on the sampler's standard input, never in its argv (issue #27, item 4).
    node::TrainerLaunch launch;
    launch.executable = trainer_.string();
    launch.subcommand = "sample";
    launch.arguments = std::move(samplerArguments);
    launch.stopReason = stopReason;
    launch.input = call.prompt;
    SampleText sample;
    int status = 0;
    SEALTRAIN_ASSIGN(status, node::runTrainer(launch, std::move(keys),
                                              [&](std::string_view line) { sample.text += line; }));
    if (status != 0)
        return Error(ErrorCode::Internal,
                     fmt::format("The sampler stopped with exit status {}; the control plane's "
                                 "log says why.",
                                 status));
    sample.step = checkpoint.files.step;
    return sample;
}

}  // namespace sealtrain::core
