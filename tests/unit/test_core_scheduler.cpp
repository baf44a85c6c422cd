// The scheduler (issue #16): only approved jobs are queued; a worker gets the next job of its
// pool by priority then age, never one whose dataset its pool may not see (refused and audited
// once) and never one of a project without budget left (failed, audited); every call is fenced by
// the attempt, so a worker presumed lost can not report, checkpoint or finish for an attempt that
// is no longer current; a lost worker's job is queued again until max_restarts, then fails;
// metrics and GPU hours count once however often they are sent; a job cancelled while it runs is
// stopped through jobsToStop and stays cancelled.
#include "worker_world.h"

#include "sealtrain/audit/entry.h"

#include <QtTest/QtTest>

class TestCoreScheduler : public QObject {
    Q_OBJECT

private slots:
    void queueNeedsApprovalOfTheCurrentSpec();
    void dispatchByPriorityThenAge();
    void dispatchOnlyToTheJobsPool();
    void classificationRefusedAtDispatchAuditedOnce();
    void readAccessCheckedAgainAtDispatch();
    void budgetExhaustedFailsTheJob();
    void fencingRefusesAnOldAttempt();
    void lostWorkerRequeuesUntilMaxRestarts();
    void silentWorkersAreReleased();
    void metricsAndGpuHoursCountOnce();
    void cpuHoursMeasuredByTheControlPlane();
    void cpuHourBudgetBoundsTheProject();
    void cancelWhileRunningStaysCancelled();
    void checkpointsRecordedNewestFirst();
    void localRunOfAQueuedJob();
    void multiNodeOnlyWhereAnOperatorDeclaredEncryption();
};

using namespace sealtrain;
using testing::WorkerWorld;

namespace {

constexpr const char* kGpuHours = R"(, "limits": {"gpu_hours": 5})";

std::int64_t nowSeconds(const WorkerWorld& w)
{
    return std::chrono::duration_cast<std::chrono::seconds>(w.t.clock.now().time_since_epoch())
        .count();
}

// The job `worker` takes; fails the test when it gets none.
core::Dispatch taken(WorkerWorld& w, const core::WorkerInfo& worker)
{
    auto dispatched = w.scheduler().take(worker);
    if (!dispatched)
        qFatal("take failed: %s", dispatched.error().message().c_str());
    if (!*dispatched)
        qFatal("%s got no job", worker.name.c_str());
    return **dispatched;
}

// A job's CPU-hours and state as recorded, read without a session (the tests of CPU-hours move
// the clock past a session's idle time).
double cpuUsed(WorkerWorld& w, std::int64_t job)
{
    return static_cast<double>(
               w.t.database
                   ->queryInteger("SELECT cpu_millihours_used FROM jobs WHERE id = ?", {job})
                   .value())
           / 1000.0;
}

std::string columnOf(WorkerWorld& w, const char* sql, std::int64_t job)
{
    std::string text;
    if (!w.t.database->queryOne(sql, {job},
                                [&](const core::Statement& row) { text = row.text(0); }))
        qFatal("%s failed", sql);
    return text;
}

std::string stateOf(WorkerWorld& w, std::int64_t job)
{
    return columnOf(w, "SELECT state FROM jobs WHERE id = ?", job);
}

bool getsNothing(WorkerWorld& w, const core::WorkerInfo& worker)
{
    auto dispatched = w.scheduler().take(worker);
    return dispatched && !*dispatched;
}

template <typename T>
void verifyFenced(const Result<T>& result)
{
    QVERIFY(!result);
    QCOMPARE(result.error().code(), ErrorCode::PermissionDenied);
    QVERIFY(isOneSentence(result.error().message()));
}

core::JobCheckpoint checkpointAt(std::int64_t job, std::int64_t step, std::int64_t attempt,
                                 char digit = 'a')
{
    return {job,
            step,
            attempt,
            "",
            std::string(64, digit),
            std::string(64, 'b'),
            "step-" + std::to_string(step),
            0};
}

// How often recordCheckpoint moved a checkpoint's files into place (the test's keepFiles).
int gKept = 0;

Result<void> recorded(WorkerWorld& w, const core::WorkerInfo& worker,
                      const core::JobCheckpoint& checkpoint)
{
    return w.scheduler().recordCheckpoint(worker, checkpoint, []() -> Result<void> {
        ++gKept;
        return success();
    });
}

}  // namespace

void TestCoreScheduler::queueNeedsApprovalOfTheCurrentSpec()
{
    WorkerWorld w;
    auto job = w.jobs().submit(w.session("eve"), testing::jobSpec("q", "notes", "cpu")).value();
    auto refused = w.scheduler().enqueue(job.id);
    QVERIFY(!refused);
    QCOMPARE(w.last().action, std::string("job.queue"));
    QVERIFY(w.last().outcome != audit::Outcome::Ok);
    QVERIFY(w.jobs().approve(w.session("ann"), job.id, job.specSha256));
    auto queued = w.scheduler().enqueue(job.id);
    QVERIFY2(queued, queued ? "" : queued.error().message().c_str());
    QCOMPARE(queued->state, core::JobState::Queued);
    QCOMPARE(w.last().action, std::string("job.queue"));
    QCOMPARE(w.last().outcome, audit::Outcome::Ok);
    QCOMPARE(w.last().actor.id, std::string("control-plane"));
    // An edit takes it out of the queue: its approval is void.
    auto edited = w.jobs().edit(w.session("eve"), job.id,
                                testing::jobSpec("q", "notes", "cpu", R"(, "priority": 3)"));
    QVERIFY(edited);
    QCOMPARE(edited->state, core::JobState::Vetted);
    QVERIFY(getsNothing(w, w.enrolled("n1", "cpu")));
}

void TestCoreScheduler::dispatchByPriorityThenAge()
{
    WorkerWorld w;
    const auto worker = w.enrolled("n1", "cpu");
    const auto low = w.queuedJob("low", "notes", "cpu");
    const auto high = w.queuedJob("high", "notes", "cpu", R"(, "priority": 5)");
    const auto highLater = w.queuedJob("high-later", "notes", "cpu", R"(, "priority": 5)");
    for (const std::int64_t expected : {high, highLater, low}) {
        const auto dispatched = taken(w, worker);
        QCOMPARE(dispatched.job.id, expected);
        QCOMPARE(dispatched.attempt, std::int64_t{1});
        QCOMPARE(dispatched.runId, "job-" + std::to_string(expected));
        QCOMPARE(dispatched.job.state, core::JobState::Running);
        QCOMPARE(dispatched.job.worker, std::string("n1"));
        QCOMPARE(w.last().action, std::string("job.dispatch"));
        QCOMPARE(testing::detailOf(w.last(), "worker"), std::string("n1"));
        // A worker that runs a job gets no second one.
        QVERIFY(getsNothing(w, worker));
        QVERIFY(w.scheduler().finish(worker, expected, 1, true, 0.0, ""));
    }
    QVERIFY(getsNothing(w, worker));
    QCOMPARE(w.job(low).state, core::JobState::Succeeded);
}

void TestCoreScheduler::dispatchOnlyToTheJobsPool()
{
    WorkerWorld w;
    const auto id = w.queuedJob("on-gpu", "notes", "gpu");
    QVERIFY(getsNothing(w, w.enrolled("n1", "cpu")));
    QCOMPARE(w.job(id).state, core::JobState::Queued);
    QCOMPARE(taken(w, w.enrolled("g1", "gpu")).job.id, id);
}

// The policy changed after vetting: the pool may no longer see phi. The worker is refused, once
// in the audit log however often it asks, and the job waits for a pool that may see it.
void TestCoreScheduler::classificationRefusedAtDispatchAuditedOnce()
{
    WorkerWorld w;
    const auto id = w.queuedJob("phi", "records", "gpu-secure");
    auto narrowed = core::parseJobPolicy(core::defaultJobPolicyText()).value();
    narrowed.poolClassifications["gpu-secure"] = {"public", "internal"};
    w.scheduler().setPolicy(narrowed);
    const auto worker = w.enrolled("secure-1", "gpu-secure");
    const auto before = w.auditSize();
    QVERIFY(getsNothing(w, worker));
    QCOMPARE(w.auditSize(), before + 1);
    QCOMPARE(w.last().action, std::string("job.dispatch"));
    QCOMPARE(w.last().outcome, audit::Outcome::Denied);
    QVERIFY2(w.last().reason.find("'phi'") != std::string::npos, w.last().reason.c_str());
    QVERIFY(getsNothing(w, worker));
    QVERIFY(getsNothing(w, worker));
    QCOMPARE(w.auditSize(), before + 1);
    QCOMPARE(w.job(id).state, core::JobState::Queued);

    w.scheduler().setPolicy(core::parseJobPolicy(core::defaultJobPolicyText()).value());
    const auto dispatched = taken(w, w.enrolled("secure-2", "gpu-secure"));
    QCOMPARE(dispatched.job.id, id);
    QCOMPARE(dispatched.datasetId, w.job(id).datasetId);
}

// Issue #27: the submitter's read grant revoked after the approval stops the job at dispatch,
// where its data keys would be released; audited once; given back, the job runs.
void TestCoreScheduler::readAccessCheckedAgainAtDispatch()
{
    WorkerWorld w;
    const auto id = w.queuedJob("revoked", "notes", "cpu");
    QVERIFY(w.t.plane->datasets().revokeRead(w.session("sam"), "notes", "eve"));
    const auto worker = w.enrolled("n1", "cpu");
    const auto before = w.auditSize();
    QVERIFY(getsNothing(w, worker));
    QCOMPARE(w.auditSize(), before + 1);
    QCOMPARE(w.last().action, std::string("job.dispatch"));
    QCOMPARE(w.last().outcome, audit::Outcome::Denied);
    QVERIFY2(w.last().reason.find("may no longer read") != std::string::npos,
             w.last().reason.c_str());
    QVERIFY(getsNothing(w, worker));
    QCOMPARE(w.auditSize(), before + 1);
    QCOMPARE(w.job(id).state, core::JobState::Queued);

    // A role taken away counts as much as the grant.
    QVERIFY(w.t.plane->datasets().grantRead(w.session("sam"), "notes", "eve"));
    QVERIFY(w.t.plane->access().revokeRole(w.session("alice"), "eve", "engineer", ""));
    QVERIFY(getsNothing(w, w.enrolled("n2", "cpu")));
    QVERIFY(w.t.plane->access().grantRole(w.session("alice"), "eve", "engineer", ""));
    // A disabled submitter's approved job waits too (issue #48; docs/operations/scheduling.md),
    // with every grant and role still in place.
    QVERIFY(w.t.plane->identity().disableUser(w.session("alice"), "eve"));
    QVERIFY(getsNothing(w, w.enrolled("n3", "cpu")));
    QVERIFY(w.t.plane->identity().enableUser(w.session("alice"), "eve"));
    QCOMPARE(taken(w, worker).job.id, id);
}

// Project demo's budget lowered to 4 GPU hours: the running job that passes it is stopped, and
// the next one fails at dispatch; both audited.
void TestCoreScheduler::budgetExhaustedFailsTheJob()
{
    WorkerWorld w;
    const auto first = w.queuedJob("first", "notes", "cpu", kGpuHours);
    const auto second = w.queuedJob("second", "notes", "cpu", kGpuHours);
    auto lowered = core::parseJobPolicy(core::defaultJobPolicyText()).value();
    lowered.budgets["demo"].gpuHours = 4.0;
    w.scheduler().setPolicy(lowered);
    const auto worker = w.enrolled("n1", "cpu");
    QCOMPARE(taken(w, worker).job.id, first);
    QCOMPARE(w.scheduler().report(worker, first, 1, {}, 3.0).value(), false);
    QCOMPARE(w.scheduler().report(worker, first, 1, {}, 4.5).value(), true);
    QCOMPARE(w.last().action, std::string("job.finish"));
    QCOMPARE(testing::detailOf(w.last(), "reason"), std::string("project budget exhausted"));
    QCOMPARE(w.job(first).state, core::JobState::Failed);
    QCOMPARE(w.scheduler().jobsToStop(worker.id).value(), std::vector<std::int64_t>{first});
    auto finished = w.scheduler().finish(worker, first, 1, true, 4.6, "");
    QVERIFY2(finished, finished ? "" : finished.error().message().c_str());
    QCOMPARE(finished->state, core::JobState::Failed);
    QCOMPARE(finished->gpuHoursUsed, 4.6);

    QVERIFY(getsNothing(w, worker));
    const auto failed = w.job(second);
    QCOMPARE(failed.state, core::JobState::Failed);
    QCOMPARE(failed.reason, std::string("project budget exhausted"));
    bool audited = false;
    const auto size = w.auditSize();
    const auto recent = w.t.store->readEntries(size - 3, 3).value();
    for (const auto& stored : recent) {
        const auto entry = audit::decodeEntry(stored.bytes).value();
        audited = audited
                  || (entry.action == "job.dispatch" && entry.target.id == std::to_string(second)
                      && entry.reason == "project budget exhausted");
    }
    QVERIFY(audited);
}

// Issue #54: a CPU job is charged CPU-hours that the control plane measures from its dispatch:
// wall-clock time × the cores it holds (threads 0: the worker's 4 reported cores). A worker's
// report can not lower them; past the job's limit its worker's heartbeat stops it (failed by the
// control plane, audited), also when it sends no metrics; the worker's finish records the total.
void TestCoreScheduler::cpuHoursMeasuredByTheControlPlane()
{
    WorkerWorld w;
    const auto worker = w.enrolled("n1", "cpu");
    const auto id = w.queuedJob("timed", "notes", "cpu", R"(, "limits": {"cpu_hours": 2})");
    QCOMPARE(w.job(id).cpuHoursLimit, 2.0);
    QCOMPARE(taken(w, worker).job.id, id);
    w.t.clock.advance(std::chrono::minutes(15));
    QCOMPARE(w.scheduler().report(worker, id, 1, {}, 0.0).value(), false);
    QCOMPARE(cpuUsed(w, id), 1.0);  // a quarter hour × 4 cores
    QCOMPARE(w.t.database->queryInteger("SELECT gpu_millihours_used FROM jobs WHERE id = ?", {id})
                 .value(),
             std::int64_t{0});
    QCOMPARE(w.scheduler().jobsToStop(worker.id).value(), std::vector<std::int64_t>{});
    QCOMPARE(stateOf(w, id), std::string("running"));
    // 20 minutes more and no report: the heartbeat's answer stops it.
    w.t.clock.advance(std::chrono::minutes(20));
    QCOMPARE(w.scheduler().jobsToStop(worker.id).value(), std::vector<std::int64_t>{id});
    QCOMPARE(stateOf(w, id), std::string("failed"));
    QCOMPARE(w.last().action, std::string("job.finish"));
    QCOMPARE(w.last().actor.id, std::string("control-plane"));
    QCOMPARE(testing::detailOf(w.last(), "reason"),
             std::string("over its CPU-hour limit (2.333 of 2.000)"));
    // Its worker's finish, a minute later, records the total: 36 minutes × 4 cores.
    w.t.clock.advance(std::chrono::minutes(1));
    auto finished = w.scheduler().finish(worker, id, 1, true, 0.0, "");
    QVERIFY2(finished, finished ? "" : finished.error().message().c_str());
    QCOMPARE(finished->state, core::JobState::Failed);
    QCOMPARE(finished->cpuHoursUsed, 2.4);
    QCOMPARE(testing::detailOf(w.last(), "cpu_hours"), std::string("2.400"));
}

// Issue #54: a project past its CPU-hour budget (lowered after vetting) stops its running CPU
// job at the next report and fails the next one at dispatch, audited with the figures; a lost
// attempt is charged up to its loss and the next attempt adds to it.
void TestCoreScheduler::cpuHourBudgetBoundsTheProject()
{
    WorkerWorld w;
    const auto worker = w.enrolled("n1", "cpu");
    const auto lost = w.queuedJob("lost", "notes", "cpu", R"(, "limits": {"cpu_hours": 3})");
    QCOMPARE(taken(w, worker).job.id, lost);
    w.t.clock.advance(std::chrono::minutes(3));
    QVERIFY(w.scheduler().releaseWorker(worker.id, "restart"));
    QCOMPARE(cpuUsed(w, lost), 0.2);  // 3 minutes × 4 cores, up to the loss
    QCOMPARE(taken(w, worker).attempt, std::int64_t{2});
    w.t.clock.advance(std::chrono::minutes(3));
    QCOMPARE(w.scheduler().report(worker, lost, 2, {}, 0.0).value(), false);
    QCOMPARE(cpuUsed(w, lost), 0.4);

    const auto next = w.queuedJob("next", "notes", "cpu");
    auto lowered = core::parseJobPolicy(core::defaultJobPolicyText()).value();
    lowered.budgets["demo"].cpuHours = 0.5;
    w.scheduler().setPolicy(lowered);
    w.t.clock.advance(std::chrono::minutes(3));
    QCOMPARE(w.scheduler().report(worker, lost, 2, {}, 0.0).value(), true);
    QCOMPARE(stateOf(w, lost), std::string("failed"));
    QCOMPARE(testing::detailOf(w.last(), "reason"),
             std::string("project CPU-hour budget exhausted"));
    QVERIFY(w.scheduler().finish(worker, lost, 2, false, 0.0, "stopped"));

    QVERIFY(getsNothing(w, worker));
    QCOMPARE(stateOf(w, next), std::string("failed"));
    QCOMPARE(columnOf(w, "SELECT reason FROM jobs WHERE id = ?", next),
             std::string("project budget exhausted"));
    // The dispatch's refusal, the last entry.
    QCOMPARE(w.last().action, std::string("job.dispatch"));
    QCOMPARE(w.last().target.id, std::to_string(next));
    QCOMPARE(w.last().reason, std::string("project budget exhausted"));
    QCOMPARE(testing::detailOf(w.last(), "cpu_hours_used"), std::string("0.600"));
    QCOMPARE(testing::detailOf(w.last(), "cpu_hours_budget"), std::string("0.500"));
}

// The worker was presumed lost and its job handed over again (to itself, then to another):
// every late call of the old attempt is refused, audited where the call is.
void TestCoreScheduler::fencingRefusesAnOldAttempt()
{
    WorkerWorld w;
    const auto n1 = w.enrolled("n1", "cpu");
    const auto n2 = w.enrolled("n2", "cpu");
    const auto id = w.queuedJob("fenced", "notes", "cpu", kGpuHours);
    QCOMPARE(taken(w, n1).attempt, std::int64_t{1});
    QVERIFY(w.scheduler().current(n1, id, 1, "job.fetch_dataset"));
    QCOMPARE(w.scheduler().releaseWorker(n1.id, "presumed lost").value(),
             std::vector<std::int64_t>{id});
    const auto requeued = w.job(id);
    QCOMPARE(requeued.state, core::JobState::Queued);
    QCOMPARE(requeued.attempt, std::int64_t{1});
    QVERIFY(requeued.worker.empty());
    verifyFenced(w.scheduler().current(n1, id, 1, "job.fetch_dataset"));
    QCOMPARE(w.last().action, std::string("job.fetch_dataset"));
    QCOMPARE(w.last().outcome, audit::Outcome::Denied);
    QCOMPARE(w.last().actor.id, std::string("n1"));

    QCOMPARE(taken(w, n1).attempt, std::int64_t{2});
    verifyFenced(w.scheduler().report(n1, id, 1, {{"step", 5, R"({"step": 5})"}}, 3.0));
    QCOMPARE(w.last().action, std::string("job.report"));
    QCOMPARE(w.last().outcome, audit::Outcome::Denied);
    verifyFenced(recorded(w, n1, checkpointAt(id, 5, 1)));
    QCOMPARE(w.last().action, std::string("job.checkpoint"));
    QCOMPARE(w.last().outcome, audit::Outcome::Denied);
    verifyFenced(w.scheduler().finish(n1, id, 1, true, 3.0, ""));
    QCOMPARE(w.last().action, std::string("job.finish"));
    QCOMPARE(w.last().outcome, audit::Outcome::Denied);
    QCOMPARE(w.last().actor.id, std::string("n1"));
    // Another worker can not act for the current attempt either.
    verifyFenced(w.scheduler().report(n2, id, 2, {}, 0.0));
    verifyFenced(w.scheduler().current(n2, id, 2, "job.fetch_checkpoint"));
    QCOMPARE(w.last().action, std::string("job.fetch_checkpoint"));
    QCOMPARE(w.last().actor.id, std::string("n2"));

    const auto job = w.job(id);
    QCOMPARE(job.state, core::JobState::Running);
    QCOMPARE(job.gpuHoursUsed, 0.0);
    QCOMPARE(w.scheduler().checkpoints(id).value().size(), std::size_t{0});
    QCOMPARE(w.scheduler().metrics(w.session("eve"), id, 0).value().size(), std::size_t{0});
    QCOMPARE(w.scheduler().report(n1, id, 2, {}, 1.0).value(), false);
    QCOMPARE(w.scheduler().finish(n1, id, 2, true, 1.0, "").value().state,
             core::JobState::Succeeded);
    verifyFenced(w.scheduler().finish(n1, id, 2, false, 1.0, "again"));
    QCOMPARE(w.job(id).state, core::JobState::Succeeded);
}

void TestCoreScheduler::lostWorkerRequeuesUntilMaxRestarts()
{
    WorkerWorld w;
    const auto worker = w.enrolled("n1", "cpu");
    const auto id = w.queuedJob("fragile", "notes", "cpu", R"(, "limits": {"max_restarts": 1})");
    QCOMPARE(taken(w, worker).attempt, std::int64_t{1});
    QVERIFY(w.scheduler().releaseWorker(worker.id, "worker revoked"));
    QCOMPARE(w.last().action, std::string("job.requeue"));
    QCOMPARE(testing::detailOf(w.last(), "reason"), std::string("worker revoked"));
    QCOMPARE(testing::detailOf(w.last(), "state"), std::string("queued"));
    auto job = w.job(id);
    QCOMPARE(job.state, core::JobState::Queued);
    QCOMPARE(job.restarts, std::int64_t{1});

    QCOMPARE(taken(w, worker).attempt, std::int64_t{2});
    QVERIFY(w.scheduler().releaseWorker(worker.id, "worker revoked"));
    QCOMPARE(testing::detailOf(w.last(), "state"), std::string("failed"));
    job = w.job(id);
    QCOMPARE(job.state, core::JobState::Failed);
    QCOMPARE(job.restarts, std::int64_t{2});
    QCOMPARE(job.reason, std::string("worker lost, no restarts left"));
    QVERIFY(getsNothing(w, worker));
    // Nothing left to release.
    QCOMPARE(w.scheduler().releaseWorker(worker.id, "again").value().size(), std::size_t{0});
}

void TestCoreScheduler::silentWorkersAreReleased()
{
    WorkerWorld w;
    const auto quiet = w.enrolled("quiet", "cpu");
    const auto alive = w.enrolled("alive", "cpu");
    const auto idle = w.enrolled("idle", "cpu");
    const auto first = w.queuedJob("first", "notes", "cpu");
    const auto second = w.queuedJob("second", "notes", "cpu");
    QCOMPARE(taken(w, quiet).job.id, first);
    QCOMPARE(taken(w, alive).job.id, second);
    w.t.clock.advance(std::chrono::seconds(100));
    QVERIFY(w.workers().heartbeat(alive.id, {}));
    // The idle worker is silent too, but runs nothing: there is nothing to release.
    QCOMPARE(w.scheduler().releaseSilent(nowSeconds(w), 60).value(),
             std::vector<std::int64_t>{quiet.id});
    QCOMPARE(w.job(first).state, core::JobState::Queued);
    QCOMPARE(w.job(second).state, core::JobState::Running);
    QCOMPARE(taken(w, idle).job.id, first);
}

void TestCoreScheduler::metricsAndGpuHoursCountOnce()
{
    WorkerWorld w;
    const auto worker = w.enrolled("n1", "cpu");
    const auto id = w.queuedJob("measured", "notes", "cpu", kGpuHours);
    taken(w, worker);
    const std::vector<core::MetricsLine> lines{{"step", 2, R"({"kind":"step","step":2})"},
                                               {"step", 1, R"({"kind":"step","step":1})"},
                                               {"end", 2, R"({"kind":"end","step":2})"}};
    const auto before = w.auditSize();
    QCOMPARE(w.scheduler().report(worker, id, 1, lines, 1.0).value(), false);
    QCOMPARE(w.scheduler().report(worker, id, 1, lines, 1.0).value(), false);
    QCOMPARE(w.auditSize(), before);  // reports are not audited
    QCOMPARE(w.t.database->queryInteger("SELECT count(*) FROM job_metrics", {}).value(),
             std::int64_t{3});
    auto read = w.scheduler().metrics(w.session("eve"), id, 0).value();
    QCOMPARE(read.size(), std::size_t{3});
    QCOMPARE(read[0].step, std::int64_t{1});
    QCOMPARE(read[1].kind, std::string("end"));
    QCOMPARE(read[2].json, lines[0].json);
    QCOMPARE(w.scheduler().metrics(w.session("eve"), id, 2).value().size(), std::size_t{2});
    auto refused = w.scheduler().metrics(w.session("rita"), id, 0);
    QVERIFY(!refused);
    QCOMPARE(w.last().action, std::string("job.metrics"));
    QCOMPARE(w.last().outcome, audit::Outcome::Denied);
    QCOMPARE(w.job(id).gpuHoursUsed, 1.0);

    // Log lines are numbered within their attempt; a number outside it (one that would name
    // another attempt's line) is refused.
    auto logs = core::logLines(1, 0, {"first", "second"});
    QVERIFY(logs);
    QCOMPARE(w.scheduler().report(worker, id, 1, *logs, 1.0).value(), false);
    for (const std::int64_t first : {std::int64_t{-1}, core::kLogLinesPerAttempt - 1}) {
        auto outside = core::logLines(2, first, {"a", "b"});
        QVERIFY(!outside);
        QCOMPARE(outside.error().code(), ErrorCode::InvalidArgument);
        QVERIFY(isOneSentence(outside.error().message()));
    }

    // A second attempt's total adds to the first's, also when sent twice; what the first
    // attempt reported stays as it was (issue #27, item 18): its metrics and its log lines.
    QVERIFY(w.scheduler().releaseWorker(worker.id, "restart"));
    QCOMPARE(taken(w, worker).attempt, std::int64_t{2});
    QCOMPARE(w.scheduler()
                 .report(worker, id, 2, {{"step", 2, R"({"kind":"step","step":2,"x":1})"}}, 0.0)
                 .value(),
             false);
    const auto kept = w.scheduler().metrics(w.session("eve"), id, 0).value();
    QCOMPARE(kept.size(), std::size_t{5});
    QCOMPARE(kept[2].json, lines[0].json);
    QCOMPARE(kept[3].json, std::string(R"("first")"));
    QCOMPARE(kept[3].step, core::kLogLinesPerAttempt);
    QCOMPARE(
        w.scheduler().report(worker, id, 2, core::logLines(2, 0, {"later"}).value(), 0.0).value(),
        false);
    QCOMPARE(w.scheduler().metrics(w.session("eve"), id, 0).value()[3].json,
             std::string(R"("first")"));
    QCOMPARE(w.scheduler().report(worker, id, 2, {}, 0.5).value(), false);
    QCOMPARE(w.scheduler().report(worker, id, 2, {}, 0.5).value(), false);
    QCOMPARE(w.job(id).gpuHoursUsed, 1.5);
    // Past the job's own limit (5 hours) it must stop, and fails.
    QCOMPARE(w.scheduler().report(worker, id, 2, {}, 4.5).value(), true);
    QCOMPARE(w.job(id).state, core::JobState::Failed);
    QVERIFY(w.job(id).reason.find("GPU-hour limit") != std::string::npos);
}

void TestCoreScheduler::cancelWhileRunningStaysCancelled()
{
    WorkerWorld w;
    const auto worker = w.enrolled("n1", "cpu");
    const auto id = w.queuedJob("cancelled", "notes", "cpu", kGpuHours);
    taken(w, worker);
    QVERIFY(w.scheduler().jobsToStop(worker.id).value().empty());
    auto cancelled = w.jobs().cancel(w.session("eve"), id, "wrong data");
    QVERIFY2(cancelled, cancelled ? "" : cancelled.error().message().c_str());
    QCOMPARE(cancelled->state, core::JobState::Cancelled);
    QCOMPARE(w.scheduler().jobsToStop(worker.id).value(), std::vector<std::int64_t>{id});
    QCOMPARE(w.scheduler().report(worker, id, 1, {}, 0.5).value(), true);
    verifyFenced(recorded(w, worker, checkpointAt(id, 5, 1)));

    auto finished = w.scheduler().finish(worker, id, 1, true, 0.7, "");
    QVERIFY2(finished, finished ? "" : finished.error().message().c_str());
    QCOMPARE(finished->state, core::JobState::Cancelled);
    QCOMPARE(finished->reason, std::string("wrong data"));
    QCOMPARE(finished->gpuHoursUsed, 0.7);
    QCOMPARE(w.last().action, std::string("job.finish"));
    QCOMPARE(testing::detailOf(w.last(), "state"), std::string("cancelled"));
    QVERIFY(w.scheduler().jobsToStop(worker.id).value().empty());
}

void TestCoreScheduler::checkpointsRecordedNewestFirst()
{
    WorkerWorld w;
    const auto worker = w.enrolled("n1", "cpu");
    const auto id = w.queuedJob("saved", "notes", "cpu");
    QVERIFY(!w.scheduler().newestCheckpoint(id).value());
    taken(w, worker);
    gKept = 0;
    QVERIFY(recorded(w, worker, checkpointAt(id, 100, 1)));
    QCOMPARE(gKept, 1);
    const auto entry = w.last();
    QCOMPARE(entry.action, std::string("job.checkpoint"));
    QCOMPARE(entry.outcome, audit::Outcome::Ok);
    QCOMPARE(entry.actor.kind, audit::ActorKind::Worker);
    QCOMPARE(testing::detailOf(entry, "step"), std::string("100"));
    QCOMPARE(testing::detailOf(entry, "sealed_sha256"), std::string(64, 'a'));
    QCOMPARE(testing::detailOf(entry, "plaintext_sha256"), std::string(64, 'b'));
    QCOMPARE(testing::detailOf(entry, "worker"), std::string("n1"));
    QVERIFY(recorded(w, worker, checkpointAt(id, 200, 1, 'c')));

    const auto newest = w.scheduler().newestCheckpoint(id).value();
    QVERIFY(newest);
    QCOMPARE(newest->step, std::int64_t{200});
    QCOMPARE(newest->worker, std::string("n1"));
    QCOMPARE(newest->fileBase, std::string("step-200"));
    const auto all = w.scheduler().checkpoints(id).value();
    QCOMPARE(all.size(), std::size_t{2});
    QCOMPARE(all.front().step, std::int64_t{100});

    // Uploaded again after a reconnect: acknowledged, once in the log, its files left alone.
    QCOMPARE(gKept, 2);
    const auto size = w.auditSize();
    QVERIFY(recorded(w, worker, checkpointAt(id, 200, 1, 'c')));
    QCOMPARE(w.auditSize(), size);
    QCOMPARE(gKept, 2);
    // Another checkpoint of a recorded step is refused, audited, and its files are never moved
    // over the recorded one's (issue #27, item 18).
    auto other = recorded(w, worker, checkpointAt(id, 200, 1, 'd'));
    QVERIFY(!other);
    QCOMPARE(other.error().code(), ErrorCode::AlreadyExists);
    QCOMPARE(gKept, 2);
    QCOMPARE(w.last().action, std::string("job.checkpoint"));
    QCOMPARE(w.last().outcome, audit::Outcome::Failed);
    QCOMPARE(w.scheduler().newestCheckpoint(id).value()->sealedSha256, std::string(64, 'c'));
    auto badDigest = checkpointAt(id, 300, 1);
    badDigest.sealedSha256 = "ABC";
    QCOMPARE(recorded(w, worker, badDigest).error().code(), ErrorCode::InvalidArgument);
    auto badName = checkpointAt(id, 300, 1);
    badName.fileBase = "../outside";
    QCOMPARE(recorded(w, worker, badName).error().code(), ErrorCode::InvalidArgument);
    QCOMPARE(w.scheduler().checkpoints(id).value().size(), std::size_t{2});
}

// A run on the control plane's machine starts a queued job too; a job on a worker ends only
// through the scheduler, fenced.
void TestCoreScheduler::localRunOfAQueuedJob()
{
    WorkerWorld w;
    const auto local = w.queuedJob("local", "notes", "cpu");
    auto started = w.jobs().start(local);
    QVERIFY2(started, started ? "" : started.error().message().c_str());
    QCOMPARE(started->state, core::JobState::Running);
    QCOMPARE(started->attempt, std::int64_t{1});
    QVERIFY(w.jobs().finish(local, true, 0.0, ""));

    // Issue #54: a project past its budget runs nothing here either: refused, audited, queued.
    const auto spent = w.queuedJob("spent", "notes", "cpu");
    auto lowered = core::parseJobPolicy(core::defaultJobPolicyText()).value();
    lowered.budgets["demo"].cpuHours = 0.0;
    w.jobs().setPolicy(lowered);
    auto refused = w.jobs().start(spent);
    QVERIFY(!refused);
    QCOMPARE(refused.error().code(), ErrorCode::PermissionDenied);
    QVERIFY(isOneSentence(refused.error().message()));
    QCOMPARE(w.last().action, std::string("job.start"));
    QCOMPARE(w.last().outcome, audit::Outcome::Denied);
    QCOMPARE(w.last().reason, std::string("project budget exhausted"));
    QCOMPARE(w.job(spent).state, core::JobState::Queued);
    w.jobs().setPolicy(core::parseJobPolicy(core::defaultJobPolicyText()).value());
    QVERIFY(w.jobs().start(spent));  // with the budget back
    QVERIFY(w.jobs().finish(spent, true, 0.0, ""));

    const auto worker = w.enrolled("n1", "cpu");
    const auto remote = w.queuedJob("remote", "notes", "cpu");
    taken(w, worker);
    QVERIFY(!w.jobs().finish(remote, true, 0.0, ""));
    QVERIFY(!w.jobs().start(remote));
    QCOMPARE(w.job(remote).state, core::JobState::Running);
}

// Issue #27, item 19: a job on two nodes goes only to a worker whose interconnect an operator
// declared encrypted; the worker's own claim in its inventory counts for nothing. The refusal is
// audited once; the declaration needs the operator's permission and is audited.
void TestCoreScheduler::multiNodeOnlyWhereAnOperatorDeclaredEncryption()
{
    WorkerWorld w;
    auto job = w.jobs().submit(
        w.session("eve"),
        R"({"spec_version": 1, "name": "wide", "project": "demo", "dataset": "notes",
            "model": {"layers": 2, "heads": 2, "width": 32, "context": 16},
            "schedule": {"steps": 10, "batch": 2}, "resources": {"pool": "gpu", "nodes": 2}})");
    QVERIFY2(job, job ? "" : job.error().message().c_str());
    QCOMPARE(job->state, core::JobState::Vetted);
    QVERIFY(w.jobs().approve(w.session("ann"), job->id, job->specSha256));
    QVERIFY(w.scheduler().enqueue(job->id));

    auto worker = w.enrolled("cluster-1", "gpu");
    core::WorkerInventory claimed = worker.inventory;
    claimed.interconnectEncrypted = true;  // the worker says so; nobody checked
    QVERIFY(w.workers().heartbeat(worker.id, claimed));
    worker = w.workers().byName("cluster-1").value();
    const auto before = w.auditSize();
    QVERIFY(getsNothing(w, worker));
    QCOMPARE(w.auditSize(), before + 1);
    QCOMPARE(w.last().action, std::string("job.dispatch"));
    QCOMPARE(w.last().outcome, audit::Outcome::Denied);
    QVERIFY2(w.last().reason.find("interconnect") != std::string::npos, w.last().reason.c_str());
    QVERIFY(getsNothing(w, worker));
    QCOMPARE(w.auditSize(), before + 1);

    // Only an operator declares it, audited.
    auto byEngineer = w.workers().declareInterconnect(w.session("eve"), "cluster-1", true);
    QVERIFY(!byEngineer);
    QCOMPARE(byEngineer.error().code(), ErrorCode::PermissionDenied);
    QCOMPARE(w.last().action, std::string("worker.interconnect"));
    QCOMPARE(w.last().actor.id, std::string("eve"));
    auto declared = w.workers().declareInterconnect(w.session("olivia"), "cluster-1", true);
    QVERIFY2(declared, declared ? "" : declared.error().message().c_str());
    QVERIFY(declared->interconnectDeclared);
    QCOMPARE(w.last().action, std::string("worker.interconnect"));
    QCOMPARE(w.last().outcome, audit::Outcome::Ok);
    QCOMPARE(w.last().actor.id, std::string("olivia"));
    QVERIFY(w.workers().byName("cluster-1")->interconnectDeclared);
    QCOMPARE(taken(w, *declared).job.id, job->id);
}

QTEST_GUILESS_MAIN(TestCoreScheduler)
#include "test_core_scheduler.moc"
