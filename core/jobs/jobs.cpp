// Training jobs (jobs.h): the vetting against the policy (jobs/vetting/policy.h), and each
// transition of the state machine in one audited transaction (migration 5,
// docs/formats/database.md).
#include "sealtrain/core/jobs/jobs.h"

#include "sealtrain/core/jobs/scheduling/budgets.h"

#include "jobs/rows.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/core/access/permissions.h"
#include "sealtrain/core/datasets/datasets.h"
#include "sealtrain/core/jobs/states.h"
#include "sealtrain/core/store/database.h"
#include "sealtrain/core/store/reason_codes.h"
#include "store/audited_transaction.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <thread>
#include <utility>

namespace sealtrain::core {
namespace {

using Json = nlohmann::json;

using internal::fromMilli;
using internal::jobRequest;
using internal::JobRow;
using internal::loadJob;
using internal::reloaded;
using internal::toMilli;
using internal::wrongState;

constexpr std::string_view kJobColumns =
    "j.id, j.name, j.project, j.state, s.name, COALESCE(a.name, ''), j.spec, j.spec_hash, "
    "j.dataset_id, j.pool, j.priority, j.vetting, j.reason, j.restarts, j.max_restarts, "
    "j.gpu_millihours_limit, j.gpu_millihours_used, j.created, j.updated, j.submitter, "
    "COALESCE(j.approved_hash, x''), COALESCE(w.name, ''), j.attempt, COALESCE(j.worker_id, 0), "
    "j.gpu_millihours_earlier, j.finished IS NOT NULL, j.cpu_millihours_limit, "
    "j.cpu_millihours_used, j.cpu_millihours_earlier, j.charged_cpus, COALESCE(j.started, 0) "
    "FROM jobs j JOIN users s ON s.id = j.submitter LEFT JOIN users a ON a.id = j.approver "
    "LEFT JOIN workers w ON w.id = j.worker_id";

Result<JobState> parseState(const std::string& text)
{
    for (const JobState state : {JobState::Submitted, JobState::Vetted, JobState::Rejected,
                                 JobState::Approved, JobState::Queued, JobState::Running,
                                 JobState::Succeeded, JobState::Failed, JobState::Cancelled}) {
        if (text == jobStateName(state))
            return state;
    }
    return Error(ErrorCode::Integrity,
                 "A job's state in the database is unknown; restore the database from a backup.");
}

std::vector<VettingCheck> parseVetting(const std::string& text)
{
    std::vector<VettingCheck> checks;
    const auto json = Json::parse(text, nullptr, false);
    if (!json.is_array())
        return checks;
    for (const auto& item : json)
        checks.push_back(
            {item.value("check", ""), item.value("ok", false), item.value("detail", "")});
    return checks;
}

std::string vettingJson(const std::vector<VettingCheck>& checks)
{
    Json array = Json::array();
    for (const VettingCheck& check : checks)
        array.push_back({{"check", check.check}, {"ok", check.ok}, {"detail", check.detail}});
    return array.dump();
}

Result<JobRow> readRow(const Statement& row)
{
    JobRow job;
    JobInfo& info = job.info;
    info.id = row.integer(0);
    info.name = row.text(1);
    info.project = row.text(2);
    auto state = parseState(row.text(3));
    if (!state)
        return state.error();
    info.state = *state;
    info.submitter = row.text(4);
    info.approver = row.text(5);
    info.specJson = row.text(6);
    job.specHash = row.blob(7);
    info.specSha256 = toHex(job.specHash);
    info.datasetId = row.isNull(8) ? std::string() : row.text(8);
    info.pool = row.text(9);
    info.priority = row.integer(10);
    info.vetting = parseVetting(row.text(11));
    info.reason = row.text(12);
    info.restarts = row.integer(13);
    info.maxRestarts = row.integer(14);
    info.gpuHoursLimit = fromMilli(row.integer(15));
    info.gpuHoursUsed = fromMilli(row.integer(16));
    info.created = row.integer(17);
    info.updated = row.integer(18);
    job.submitterId = row.integer(19);
    job.approvedHash = row.blob(20);
    info.worker = row.text(21);
    info.attempt = row.integer(22);
    job.workerId = row.integer(23);
    job.earlierMilli = row.integer(24);
    job.attemptEnded = row.integer(25) != 0;
    info.cpuHoursLimit = fromMilli(row.integer(26));
    info.cpuHoursUsed = fromMilli(row.integer(27));
    job.cpuEarlierMilli = row.integer(28);
    job.chargedCpus = row.integer(29);
    job.started = row.integer(30);
    return job;
}

// What a job may use in CPU-hours, in thousandths: a GPU job is charged none.
std::int64_t cpuLimitMilli(const formats::JobSpec& spec)
{
    return spec.resources.gpusPerNode == 0 ? toMilli(spec.limits.cpuHours) : 0;
}

}  // namespace

namespace internal {

std::int64_t toMilli(double hours)
{
    return std::llround(hours * 1000.0);
}

std::int64_t cpuMilliUsedBy(const JobRow& job, std::int64_t now)
{
    const std::int64_t recorded = toMilli(job.info.cpuHoursUsed);
    if (job.chargedCpus <= 0 || job.started <= 0 || now <= job.started)
        return std::max(recorded, job.cpuEarlierMilli);
    // Thousandths of an hour: seconds × cores / 3.6, rounded down (a partial thousandth is
    // charged when it is complete).
    const std::int64_t attempt = (now - job.started) * job.chargedCpus * 10 / 36;
    return std::max(recorded, job.cpuEarlierMilli + attempt);
}

double fromMilli(std::int64_t milli)
{
    return static_cast<double>(milli) / 1000.0;
}

Result<JobRow> loadJob(const Database& database, std::int64_t id)
{
    Result<JobRow> job = Error(ErrorCode::NotFound, "There is no job " + std::to_string(id)
                                                        + "; check the number with 'job list'.");
    SEALTRAIN_TRY(database.queryOne("SELECT " + std::string(kJobColumns) + " WHERE j.id = ?", {id},
                                    [&](const Statement& row) { job = readRow(row); }));
    return job;
}

Result<JobInfo> reloaded(const Database& database, std::int64_t id)
{
    auto job = loadJob(database, id);
    if (!job)
        return job.error();
    return std::move(job->info);
}

Result<std::vector<JobRow>> loadJobs(const Database& database, std::string_view condition,
                                     SqlValues arguments, std::string_view orderBy)
{
    std::vector<JobRow> jobs;
    Result<void> failure = success();
    SEALTRAIN_TRY(database.query("SELECT " + std::string(kJobColumns) + " WHERE "
                                     + std::string(condition) + " ORDER BY " + std::string(orderBy),
                                 arguments, [&](const Statement& row) {
                                     auto job = readRow(row);
                                     if (!job)
                                         failure = job.error();
                                     else
                                         jobs.push_back(std::move(*job));
                                 }));
    if (!failure)
        return failure.error();
    return jobs;
}

AuditedRequest jobRequest(const Database& database, std::int64_t id, std::string_view verb,
                          std::string_view permission)
{
    auto peeked = loadJob(database, id);
    return {"job." + std::string(verb),
            permission,
            peeked ? peeked->info.project : std::string(),
            {"job", std::to_string(id)}};
}

bool approvedAsIs(const JobRow& job)
{
    return !job.info.approver.empty() && job.info.approver != job.info.submitter
           && job.approvedHash == job.specHash;
}

Error wrongState(const JobInfo& job, const std::string& action)
{
    return Error(ErrorCode::FailedPrecondition,
                 fmt::format("Job {} is {}, so it can not be {}; see 'job show {}'.", job.id,
                             jobStateName(job.state), action, job.id));
}

Result<JobRow> visibleJob(AuditedTransactions& gate, const Caller& caller, std::int64_t id)
{
    auto job = loadJob(gate.database(), id);
    if (!job)
        return job.error();
    if (!gate.holds(caller, permission::kJobSubmit, job->info.project)
        && !gate.holds(caller, permission::kJobApprove, job->info.project))
        return denied("The user '" + caller.name
                      + "' may neither submit nor approve jobs in project '" + job->info.project
                      + "'.");
    return job;
}

audit::Actor controlPlaneActor()
{
    return {audit::ActorKind::System, "control-plane", "", "internal"};
}

}  // namespace internal

const char* jobStateName(JobState state) noexcept
{
    switch (state) {
    case JobState::Submitted: return "submitted";
    case JobState::Vetted: return "vetted";
    case JobState::Rejected: return "rejected";
    case JobState::Approved: return "approved";
    case JobState::Queued: return "queued";
    case JobState::Running: return "running";
    case JobState::Succeeded: return "succeeded";
    case JobState::Failed: return "failed";
    case JobState::Cancelled: return "cancelled";
    }
    return "unknown";
}

bool JobInfo::vettingPassed() const
{
    return !vetting.empty()
           && std::all_of(vetting.begin(), vetting.end(),
                          [](const VettingCheck& check) { return check.ok; });
}

Jobs::Jobs(AuditedTransactions& gate, const ModelLookup& models, JobPolicy policy)
    : gate_(gate)
    , database_(gate.database())
    , models_(models)
    , policy_(std::move(policy))
{
}

void Jobs::setPolicy(JobPolicy policy)
{
    policy_ = std::move(policy);
}

namespace {

// The spec with its dataset reference (a name, or NAME@VERSION) replaced by the dataset id vetting
// resolved it to, when it resolved: what is stored, shown and approved names exactly the data that
// will be read, so a version imported after the review can not slip under an approval (issue #27).
formats::JobSpec pinnedToDataset(formats::JobSpec spec, const internal::Pins& pins)
{
    if (!pins.datasetId.empty())
        spec.dataset = pins.datasetId;
    if (!pins.init.empty())
        spec.model.init = pins.init;
    return spec;
}

void addVettingDetails(audit::EntryDraft& draft, const std::vector<VettingCheck>& checks)
{
    std::vector<std::string> failed;
    for (const VettingCheck& check : checks) {
        if (!check.ok)
            failed.push_back(check.check);
    }
    draft.details.push_back(audit::textDetail(
        "vetting",
        failed.empty() ? "passed" : "failed: " + fmt::format("{}", fmt::join(failed, ","))));
}

}  // namespace

Result<JobInfo> Jobs::submit(const std::string& session, std::string_view specText)
{
    return submit(session, formats::parseJobSpec(specText));
}

Result<JobInfo> Jobs::submit(const std::string& session, const Result<formats::JobSpec>& spec)
{
    // A malformed spec names no project; its refusal is audited in the global scope.
    const std::string project = spec ? spec->project : std::string();
    const std::string name = spec ? spec->name : std::string("(malformed)");
    std::int64_t id = 0;
    if (auto done = gate_.perform(
            session, {"job.submit", permission::kJobSubmit, project, {"job", name}},
            [&](const Caller& caller, audit::EntryDraft& draft) -> Result<void> {
                if (!spec)
                    return spec.error();
                internal::Pins pins;
                const std::string& datasetId = pins.datasetId;
                const auto checks = internal::vetSpec(database_, policy_, tokenizerOf_, models_,
                                                      *spec, caller.userId, 0, pins);
                const bool passed = std::all_of(checks.begin(), checks.end(),
                                                [](const VettingCheck& c) { return c.ok; });
                const formats::JobSpec pinned = pinnedToDataset(*spec, pins);
                const std::string canonical = formats::canonicalJobSpec(pinned);
                const crypto::Sha256Digest hash = formats::jobSpecHash(pinned);
                const std::int64_t now = gate_.now();
                SEALTRAIN_TRY(database_.run(
                    "INSERT INTO jobs (name, project, state, submitter, spec, spec_hash, "
                    "dataset_id, "
                    "pool, priority, vetting, reason, max_restarts, gpu_millihours_limit, "
                    "cpu_millihours_limit, created, updated) "
                    "VALUES (?, ?, ?, ?, ?, ?, NULLIF(?, ''), ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    {spec->name, spec->project,
                     jobStateName(passed ? JobState::Vetted : JobState::Rejected), caller.userId,
                     canonical, SqlValue::blob(hash), datasetId, spec->resources.pool,
                     spec->priority, vettingJson(checks),
                     passed ? std::string() : std::string("rejected by policy"),
                     spec->limits.maxRestarts, toMilli(spec->limits.gpuHours), cpuLimitMilli(*spec),
                     now, now}));
                id = database_.lastInsertId();
                draft.target.id = std::to_string(id);
                draft.details.push_back(audit::textDetail("name", spec->name));
                draft.details.push_back(audit::textDetail("sha256", toHex(hash)));
                addVettingDetails(draft, checks);
                return success();
            });
        !done)
        return done.error();
    return reloaded(database_, id);
}

Result<JobInfo> Jobs::edit(const std::string& session, std::int64_t id, std::string_view specText)
{
    return edit(session, id, formats::parseJobSpec(specText));
}

Result<JobInfo> Jobs::edit(const std::string& session, std::int64_t id,
                           const Result<formats::JobSpec>& spec)
{
    if (auto done = gate_.perform(
            session, jobRequest(database_, id, "edit", permission::kJobSubmit),
            [&](const Caller& caller, audit::EntryDraft& draft) -> Result<void> {
                auto job = loadJob(database_, id);
                if (!job)
                    return job.error();
                if (job->submitterId != caller.userId)
                    return denied(fmt::format("Only the submitter may edit job {}; submit your own "
                                              "instead.",
                                              id));
                if (!jobMayMove(job->info.state, JobState::Vetted, JobMover::Submitter, "job.edit"))
                    return wrongState(job->info, "edited");
                if (!spec)
                    return spec.error();
                if (spec->project != job->info.project)
                    return Error(ErrorCode::InvalidArgument,
                                 "A job's project can not change; submit a new job in the other "
                                 "project instead.");
                internal::Pins pins;
                const std::string& datasetId = pins.datasetId;
                const auto checks = internal::vetSpec(database_, policy_, tokenizerOf_, models_,
                                                      *spec, caller.userId, id, pins);
                const bool passed = std::all_of(checks.begin(), checks.end(),
                                                [](const VettingCheck& c) { return c.ok; });
                const formats::JobSpec pinned = pinnedToDataset(*spec, pins);
                const crypto::Sha256Digest hash = formats::jobSpecHash(pinned);
                // The edit voids every approval: approver and approved hash are cleared.
                SEALTRAIN_TRY(database_.run(
                    "UPDATE jobs SET name = ?, state = ?, spec = ?, spec_hash = ?, "
                    "dataset_id = NULLIF(?, ''), pool = ?, priority = ?, vetting = ?, reason = ?, "
                    "max_restarts = ?, gpu_millihours_limit = ?, cpu_millihours_limit = ?, "
                    "approver = NULL, "
                    "approved_hash = NULL, updated = ? WHERE id = ?",
                    {spec->name, jobStateName(passed ? JobState::Vetted : JobState::Rejected),
                     formats::canonicalJobSpec(pinned), SqlValue::blob(hash), datasetId,
                     spec->resources.pool, spec->priority, vettingJson(checks),
                     passed ? std::string() : std::string("rejected by policy"),
                     spec->limits.maxRestarts, toMilli(spec->limits.gpuHours), cpuLimitMilli(*spec),
                     gate_.now(), id}));
                draft.details.push_back(audit::textDetail("sha256", toHex(hash)));
                addVettingDetails(draft, checks);
                return success();
            });
        !done)
        return done.error();
    return reloaded(database_, id);
}

Result<JobInfo> Jobs::vet(const std::string& session, std::int64_t id)
{
    if (auto done = gate_.perform(
            session, jobRequest(database_, id, "vet", ""),
            [&](const Caller& caller, audit::EntryDraft& draft) -> Result<void> {
                auto job = loadJob(database_, id);
                if (!job)
                    return job.error();
                const bool mayVet =
                    job->submitterId == caller.userId
                    || gate_.holds(caller, permission::kJobApprove, job->info.project);
                if (!mayVet)
                    return denied("Only the submitter or an approver may vet job "
                                  + std::to_string(id) + " again.");
                const bool rejectedByPolicy = job->info.state == JobState::Rejected
                                              && job->info.approver.empty()
                                              && job->info.reason == "rejected by policy";
                if (!jobMayMove(job->info.state, JobState::Vetted, JobMover::SubmitterOrApprover,
                                "job.vet")
                    || (job->info.state == JobState::Rejected && !rejectedByPolicy))
                    return wrongState(job->info, "vetted again");
                auto spec = formats::parseJobSpec(job->info.specJson, formats::kJobSpecCeiling);
                if (!spec)
                    return spec.error();
                internal::Pins pins;
                const std::string& datasetId = pins.datasetId;
                const auto checks = internal::vetSpec(database_, policy_, tokenizerOf_, models_,
                                                      *spec, job->submitterId, id, pins);
                const bool passed = std::all_of(checks.begin(), checks.end(),
                                                [](const VettingCheck& c) { return c.ok; });
                // A spec whose dataset first resolves now is pinned now: its hash changes, and an
                // approval of the unpinned one is refused as for another spec.
                const formats::JobSpec pinned = pinnedToDataset(*spec, pins);
                SEALTRAIN_TRY(database_.run(
                    "UPDATE jobs SET state = ?, vetting = ?, dataset_id = NULLIF(?, ''), reason = "
                    "?, spec = ?, spec_hash = ?, updated = ? WHERE id = ?",
                    {jobStateName(passed ? JobState::Vetted : JobState::Rejected),
                     vettingJson(checks), datasetId,
                     passed ? std::string() : std::string("rejected by policy"),
                     formats::canonicalJobSpec(pinned),
                     SqlValue::blob(formats::jobSpecHash(pinned)), gate_.now(), id}));
                addVettingDetails(draft, checks);
                return success();
            });
        !done)
        return done.error();
    return reloaded(database_, id);
}

Result<JobInfo> Jobs::approve(const std::string& session, std::int64_t id,
                              const std::string& specSha256)
{
    if (auto done = gate_.perform(
            session, jobRequest(database_, id, "approve", permission::kJobApprove),
            [&](const Caller& caller, audit::EntryDraft& draft) -> Result<void> {
                draft.details.push_back(audit::textDetail("sha256", specSha256));
                auto job = loadJob(database_, id);
                if (!job)
                    return job.error();
                if (job->submitterId == caller.userId)
                    return denied("Nobody may approve their own job; ask another approver.")
                        .because(reason::kOwnApproval);
                // Not a refusal of the approver: the spec moved on (FailedPrecondition), so that
                // a client tells it from a missing role and shows the new spec (issue #29).
                if (job->info.specSha256 != specSha256)
                    return Error(
                        ErrorCode::FailedPrecondition,
                        fmt::format(
                            "The approval is for a spec that differs from job {}'s current one "
                            "(SHA-256 "
                            "{}); review the current spec with 'job show {}' and approve that.",
                            id, job->info.specSha256, id));
                if (!jobMayMove(job->info.state, JobState::Approved, JobMover::Approver,
                                "job.approve"))
                    return wrongState(job->info, "approved (only a vetted job can be)");
                return database_.run(
                    "UPDATE jobs SET state = ?, approver = ?, approved_hash = spec_hash, "
                    "updated = ? WHERE id = ?",
                    {jobStateName(JobState::Approved), caller.userId, gate_.now(), id});
            });
        !done)
        return done.error();
    return reloaded(database_, id);
}

Result<JobInfo> Jobs::reject(const std::string& session, std::int64_t id, const std::string& reason)
{
    if (auto done = gate_.perform(
            session, jobRequest(database_, id, "reject", permission::kJobApprove),
            [&](const Caller& caller, audit::EntryDraft& draft) -> Result<void> {
                if (!reason.empty())
                    draft.details.push_back(audit::textDetail("reason", reason));
                auto job = loadJob(database_, id);
                if (!job)
                    return job.error();
                if (job->submitterId == caller.userId)
                    return denied("Nobody may decide on their own job; ask another approver, or "
                                  "cancel it.")
                        .because(reason::kOwnApproval);
                if (!jobMayMove(job->info.state, JobState::Rejected, JobMover::Approver,
                                "job.reject"))
                    return wrongState(job->info, "rejected");
                return database_.run(
                    "UPDATE jobs SET state = ?, approver = ?, approved_hash = NULL, reason = ?, "
                    "updated = ? WHERE id = ?",
                    {jobStateName(JobState::Rejected), caller.userId,
                     reason.empty() ? std::string("rejected by an approver") : reason, gate_.now(),
                     id});
            });
        !done)
        return done.error();
    return reloaded(database_, id);
}

Result<JobInfo> Jobs::cancel(const std::string& session, std::int64_t id, const std::string& reason)
{
    if (auto done = gate_.perform(
            session, jobRequest(database_, id, "cancel", ""),
            [&](const Caller& caller, audit::EntryDraft& draft) -> Result<void> {
                if (!reason.empty())
                    draft.details.push_back(audit::textDetail("reason", reason));
                auto job = loadJob(database_, id);
                if (!job)
                    return job.error();
                if (job->submitterId != caller.userId
                    && !gate_.holds(caller, permission::kJobApprove, job->info.project))
                    return denied("Only the submitter or an approver may cancel job "
                                  + std::to_string(id) + ".");
                if (!jobMayMove(job->info.state, JobState::Cancelled, JobMover::SubmitterOrApprover,
                                "job.cancel"))
                    return wrongState(job->info, "cancelled");
                return database_.run(
                    "UPDATE jobs SET state = ?, reason = ?, updated = ? WHERE id = ?",
                    {jobStateName(JobState::Cancelled),
                     reason.empty() ? "cancelled by " + caller.name : reason, gate_.now(), id});
            });
        !done)
        return done.error();
    return reloaded(database_, id);
}

Result<JobInfo> Jobs::show(const std::string& session, std::int64_t id)
{
    return gate_.performReturning(session, jobRequest(database_, id, "show", ""),
                                  [&](const Caller& caller, audit::EntryDraft&) -> Result<JobInfo> {
                                      auto job = internal::visibleJob(gate_, caller, id);
                                      if (!job)
                                          return job.error();
                                      return std::move(job->info);
                                  });
}

Result<JobInfo> Jobs::admitRun(const std::string& session, std::int64_t id)
{
    return gate_.performReturning(
        session, jobRequest(database_, id, "run", ""),
        [&](const Caller& caller, audit::EntryDraft&) -> Result<JobInfo> {
            auto job = internal::visibleJob(gate_, caller, id);
            if (!job)
                return job.error();
            if (job->submitterId != caller.userId)
                return denied(fmt::format("Only job {}'s submitter ({}) runs it; ask them.", id,
                                          job->info.submitter));
            // Decided whole before the key release that follows is recorded (issue #54).
            if (!internal::approvedAsIs(*job))
                return denied(fmt::format("Job {} may not run: nobody but its submitter approved "
                                          "its current spec; it needs a second person's approval "
                                          "first.",
                                          id));
            if (!jobMayMove(job->info.state, JobState::Running, JobMover::ControlPlane,
                            "job.start"))
                return internal::wrongState(job->info, "run");
            SEALTRAIN_TRY(internal::requireReadRelease(gate_, caller, job->info.datasetId,
                                                       fmt::format("running job {}", id)));
            return std::move(job->info);
        });
}

Result<JobInfo> Jobs::start(std::int64_t id)
{
    if (auto done = gate_.performWithoutSession(
            {"job.start", "", "", {"job", std::to_string(id)}},
            [&](audit::EntryDraft& draft) -> Result<void> {
                draft.actor = internal::controlPlaneActor();
                auto job = loadJob(database_, id);
                if (!job)
                    return job.error();
                const bool waiting = jobMayMove(job->info.state, JobState::Running,
                                                JobMover::ControlPlane, "job.start");
                if (!waiting || !internal::approvedAsIs(*job)) {
                    draft.outcome = audit::Outcome::Denied;
                    draft.reason = "not approved as it is";
                    return denied(
                        fmt::format("Job {} may not run: nobody but its submitter approved "
                                    "its current spec; it needs a second person's "
                                    "approval first.",
                                    id));
                }
                draft.details.push_back(audit::textDetail("sha256", job->info.specSha256));
                const std::int64_t now = gate_.now();
                auto spec = formats::parseJobSpec(job->info.specJson, formats::kJobSpecCeiling);
                if (!spec)
                    return spec.error();
                // The project's budget, as a dispatch checks it (issue #54): its used hours of
                // the job's kind below the budget.
                const bool gpu = spec->resources.gpusPerNode > 0;
                const auto budget = policy_.budgets.find(job->info.project);
                const double budgetHours = budget == policy_.budgets.end() ? 0.0
                                           : gpu                           ? budget->second.gpuHours
                                                 : budget->second.cpuHours;
                std::int64_t used = 0;
                SEALTRAIN_ASSIGN(used, projectUsedMilli(database_, job->info.project,
                                                        gpu ? Hours::Gpu : Hours::Cpu));
                if (used >= toMilli(budgetHours)) {
                    draft.outcome = audit::Outcome::Denied;
                    draft.reason = "project budget exhausted";
                    return denied(fmt::format("Job {} may not run: its project '{}' has used its "
                                              "{} budget ({:.3f} of {:.3f} hours); ask an admin "
                                              "to raise it.",
                                              id, job->info.project, gpu ? "GPU-hour" : "CPU-hour",
                                              internal::fromMilli(used), budgetHours));
                }
                // The control plane's own trainer runs on this host: its cores are the node's.
                const std::int64_t cpus =
                    chargedCpus(*spec, std::max(1U, std::thread::hardware_concurrency()));
                SEALTRAIN_TRY(internal::openAttempt(database_, id, job->info.attempt + 1, 0, now));
                return database_.run(
                    "UPDATE jobs SET state = ?, worker_id = NULL, attempt = attempt + 1, "
                    "started = ?, finished = NULL, gpu_millihours_earlier = gpu_millihours_used, "
                    "cpu_millihours_earlier = cpu_millihours_used, charged_cpus = ?, "
                    "updated = ? WHERE id = ?",
                    {jobStateName(JobState::Running), now, cpus, now, id});
            });
        !done)
        return done.error();
    return reloaded(database_, id);
}

Result<JobInfo> Jobs::finish(std::int64_t id, bool succeeded, double gpuHoursUsed,
                             const std::string& reason)
{
    if (auto done = gate_.performWithoutSession(
            {"job.finish", "", "", {"job", std::to_string(id)}},
            [&](audit::EntryDraft& draft) -> Result<void> {
                draft.actor = internal::controlPlaneActor();
                if (!reason.empty())
                    draft.details.push_back(audit::textDetail("reason", reason));
                auto job = loadJob(database_, id);
                if (!job)
                    return job.error();
                const JobState ended = succeeded ? JobState::Succeeded : JobState::Failed;
                if (!jobMayMove(job->info.state, ended, JobMover::ControlPlane, "job.finish"))
                    return wrongState(job->info, "finished (it is not running)");
                if (job->workerId != 0)
                    return wrongState(job->info, "finished here (it runs on worker '"
                                                     + job->info.worker
                                                     + "', which reports how it ends)");
                draft.details.push_back(
                    audit::textDetail("gpu_hours", fmt::format("{:.3f}", gpuHoursUsed)));
                const std::int64_t now = gate_.now();
                const std::int64_t cpuUsed = internal::cpuMilliUsedBy(*job, now);
                if (job->chargedCpus > 0)
                    draft.details.push_back(audit::textDetail(
                        "cpu_hours", fmt::format("{:.3f}", internal::fromMilli(cpuUsed))));
                SEALTRAIN_TRY(internal::closeAttempt(database_, id, job->info.attempt,
                                                     jobStateName(ended), reason, now));
                return database_.run(
                    "UPDATE jobs SET state = ?, gpu_millihours_used = gpu_millihours_earlier + ?, "
                    "cpu_millihours_used = ?, reason = ?, finished = ?, updated = ? WHERE id = ?",
                    {jobStateName(ended), toMilli(gpuHoursUsed), cpuUsed, reason, now, now, id});
            });
        !done)
        return done.error();
    return reloaded(database_, id);
}

Result<void> Jobs::refuseDirectTraining(const std::string& session, const std::string& dataset)
{
    return gate_.perform(session, {"train.direct", "", "", {"dataset", dataset}},
                         [](const Caller& /*caller*/, audit::EntryDraft& draft) -> Result<void> {
                             draft.reason = "training runs only as an approved job";
                             return denied("Training runs only as an approved job: submit a job "
                                           "spec ('sealtrainctl job submit'), have a "
                                           "second person approve it, and a worker runs it.");
                         });
}

}  // namespace sealtrain::core
