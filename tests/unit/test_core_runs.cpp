// Experiment tracking in core (issue #30; docs/runs.md): a run's attempts and metrics history
// after its worker was lost and another resumed it (each step once, the restart marked, the
// resumed attempt's checkpoint step), paging of the history, the summary, who may read a run
// (refusals audited with the real actor), and the control plane's own runs (their lines
// recorded for the attempt that runs there, never for a worker's job).
#include "worker_world.h"

#include "sealtrain/audit/entry.h"
#include "sealtrain/core/jobs/runs/runs.h"

#include <QtTest/QtTest>

#include <fmt/format.h>

class TestCoreRuns : public QObject {
    Q_OBJECT

private slots:
    void restartIsMarkedAndEachStepRecordedOnce();
    void historyComesInBoundedPages();
    void onlyWhoMaySeeTheJobReadsItsRun();
    void controlPlaneRunHasAnAttemptWithoutWorker();
    void summaryAndStepLines();
};

using namespace sealtrain;
using testing::WorkerWorld;

namespace {

// The trainer's "step" line for `step` (docs/trainer.md, "Metrics"), validated when `validation`
// is given.
core::MetricsLine stepLine(std::int64_t step, double loss, std::optional<double> validation = {})
{
    std::string json = fmt::format(R"({{"kind":"step","step":{},"loss":{},"lr":0.001,)"
                                   R"("grad_norm":1.5,"tok_per_s":{},"mfu":0.25,"rss_bytes":{})",
                                   step, loss, 100 * step, 1000 * step);
    if (validation)
        json += fmt::format(R"(,"val_loss":{})", *validation);
    return {"step", step, json + "}"};
}

core::Dispatch taken(WorkerWorld& w, const core::WorkerInfo& worker)
{
    auto dispatched = w.scheduler().take(worker);
    if (!dispatched || !*dispatched)
        qFatal("%s got no job", worker.name.c_str());
    return **dispatched;
}

Result<void> recordCheckpoint(WorkerWorld& w, const core::WorkerInfo& worker, std::int64_t job,
                              std::int64_t step, std::int64_t attempt)
{
    return w.scheduler().recordCheckpoint(worker,
                                          {job, step, attempt, "", std::string(64, 'a'),
                                           std::string(64, 'b'), "step-" + std::to_string(step), 0},
                                          []() -> Result<void> { return success(); });
}

std::vector<std::int64_t> stepsOf(const std::vector<core::RunPoint>& points)
{
    std::vector<std::int64_t> steps;
    steps.reserve(points.size());
    for (const core::RunPoint& point : points)
        steps.push_back(point.step);
    return steps;
}

std::vector<std::int64_t> attemptsOf(const std::vector<core::RunPoint>& points)
{
    std::vector<std::int64_t> attempts;
    attempts.reserve(points.size());
    for (const core::RunPoint& point : points)
        attempts.push_back(point.attempt);
    return attempts;
}

// Job `id` of eve's: run by n1 to step 4 (checkpoints at 1 and 2), n1 lost, then run by n2 from
// the newest checkpoint to step 6, which recomputes steps 3 and 4 with other numbers.
void runWithARestart(WorkerWorld& w, std::int64_t id)
{
    const auto first = w.enrolled("n1", "cpu");
    const auto second = w.enrolled("n2", "cpu");
    QCOMPARE(taken(w, first).attempt, std::int64_t{1});
    QVERIFY(w.scheduler().report(
        first, id, 1,
        {stepLine(1, 4.0), stepLine(2, 3.5, 3.6), stepLine(3, 3.2), stepLine(4, 3.0, 3.1)}, 0.0));
    QVERIFY(recordCheckpoint(w, first, id, 1, 1));
    QVERIFY(recordCheckpoint(w, first, id, 2, 1));
    QCOMPARE(w.scheduler().releaseWorker(first.id, "no heartbeat for more than 60 seconds").value(),
             std::vector<std::int64_t>{id});
    QCOMPARE(taken(w, second).attempt, std::int64_t{2});
    QVERIFY(w.scheduler().report(
        second, id, 2,
        {stepLine(3, 9.0), stepLine(4, 9.0, 9.0), stepLine(5, 2.8), stepLine(6, 2.5, 2.9)}, 0.0));
    QVERIFY(w.scheduler().finish(second, id, 2, true, 0.0, ""));
}

}  // namespace

void TestCoreRuns::restartIsMarkedAndEachStepRecordedOnce()
{
    WorkerWorld w;
    const auto id = w.queuedJob("restarted", "notes", "cpu");
    runWithARestart(w, id);

    auto run = w.t.plane->runs().show(w.session("eve"), id);
    QVERIFY2(run, run ? "" : run.error().message().c_str());
    QCOMPARE(w.last().action, std::string("run.show"));
    QCOMPARE(w.last().outcome, audit::Outcome::Ok);
    QCOMPARE(run->job.state, core::JobState::Succeeded);
    QCOMPARE(run->attempts.size(), std::size_t{2});
    const core::RunAttempt& lost = run->attempts[0];
    QCOMPARE(lost.worker, std::string("n1"));
    QCOMPARE(lost.outcome, std::string("lost"));
    QCOMPARE(lost.reason, std::string("no heartbeat for more than 60 seconds"));
    QCOMPARE(lost.resumedFromStep, std::int64_t{0});
    QCOMPARE(lost.firstStep, std::int64_t{1});
    QCOMPARE(lost.lastStep, std::int64_t{4});
    QVERIFY(lost.ended != 0);
    const core::RunAttempt& resumed = run->attempts[1];
    QCOMPARE(resumed.worker, std::string("n2"));
    QCOMPARE(resumed.outcome, std::string("succeeded"));
    QCOMPARE(resumed.resumedFromStep, std::int64_t{2});
    // Steps 3 and 4 were computed again; the history keeps the lines recorded first.
    QCOMPARE(resumed.firstStep, std::int64_t{5});
    QCOMPARE(resumed.lastStep, std::int64_t{6});
    QCOMPARE(run->checkpoints.size(), std::size_t{2});
    QCOMPARE(run->checkpoints[1].attempt, std::int64_t{1});

    auto history = w.t.plane->runs().metrics(w.session("eve"), id);
    QVERIFY2(history, history ? "" : history.error().message().c_str());
    QCOMPARE(w.last().action, std::string("run.metrics"));
    QCOMPARE(stepsOf(history->points), (std::vector<std::int64_t>{1, 2, 3, 4, 5, 6}));
    QCOMPARE(attemptsOf(history->points), (std::vector<std::int64_t>{1, 1, 1, 1, 2, 2}));
    QCOMPARE(history->points[3].loss, 3.0);
    QCOMPARE(history->points[3].validationLoss.value(), 3.1);
    QVERIFY(!history->points[2].validationLoss);
    QCOMPARE(history->nextAfterStep, std::int64_t{0});

    QCOMPARE(run->summary.stepsPlanned, std::int64_t{10});
    QCOMPARE(run->summary.stepsDone, std::int64_t{6});
    QCOMPARE(run->summary.lastLoss.value(), 2.5);
    QCOMPARE(run->summary.lastValidationLoss.value(), 2.9);
    QCOMPARE(run->summary.bestValidationLoss.value(), 2.9);
    QCOMPARE(run->summary.bestValidationStep, std::int64_t{6});
    QCOMPARE(run->summary.peakMemoryBytes, std::int64_t{6000});
    QCOMPARE(run->summary.meanTokensPerSecond, 350.0);

    // The list has the run with its attempts and what its last lines say.
    auto listed = w.t.plane->runs().list(w.session("eve"));
    QVERIFY2(listed, listed ? "" : listed.error().message().c_str());
    QCOMPARE(w.last().action, std::string("run.list"));
    QCOMPARE(listed->items.size(), std::size_t{1});
    QCOMPARE(listed->items[0].attempts.size(), std::size_t{2});
    QCOMPARE(listed->items[0].summary.stepsDone, std::int64_t{6});
    QCOMPARE(listed->items[0].summary.lastLoss.value(), 2.5);
    QCOMPARE(listed->items[0].summary.lastValidationLoss.value(), 2.9);
}

void TestCoreRuns::historyComesInBoundedPages()
{
    WorkerWorld w;
    const auto id = w.queuedJob("paged", "notes", "cpu");
    runWithARestart(w, id);
    auto first = w.t.plane->runs().metrics(w.session("eve"), id, {0, 4});
    QVERIFY(first);
    QCOMPARE(stepsOf(first->points), (std::vector<std::int64_t>{1, 2, 3, 4}));
    QCOMPARE(first->nextAfterStep, std::int64_t{4});
    const auto details = w.last().details;
    const auto after = std::find_if(details.begin(), details.end(),
                                    [](const audit::Detail& d) { return d.name == "after"; });
    QVERIFY(after != details.end());
    QCOMPARE(std::string(after->value.begin(), after->value.end()), std::string("0"));
    auto rest = w.t.plane->runs().metrics(w.session("eve"), id, {first->nextAfterStep, 4});
    QVERIFY(rest);
    QCOMPARE(stepsOf(rest->points), (std::vector<std::int64_t>{5, 6}));
    QCOMPARE(rest->nextAfterStep, std::int64_t{0});
    for (const core::RunMetricsPage page :
         {core::RunMetricsPage{0, 0}, core::RunMetricsPage{0, core::kMaxRunPoints + 1},
          core::RunMetricsPage{-1, 10}}) {
        auto refused = w.t.plane->runs().metrics(w.session("eve"), id, page);
        QVERIFY(!refused);
        QCOMPARE(refused.error().code(), ErrorCode::InvalidArgument);
        QVERIFY(isOneSentence(refused.error().message()));
    }
    QVERIFY(w.t.plane->runs().metrics(w.session("eve"), id, {0, core::kMaxRunPoints}));
}

void TestCoreRuns::onlyWhoMaySeeTheJobReadsItsRun()
{
    WorkerWorld w;
    const auto id = w.queuedJob("private", "notes", "cpu");
    const auto waiting = w.queuedJob("waiting", "notes", "cpu");
    taken(w, w.enrolled("n1", "cpu"));

    // The auditor holds neither job.submit nor job.approve in the project.
    for (const auto& refused : {w.t.plane->runs().show(w.session("rita"), id).error(),
                                w.t.plane->runs().metrics(w.session("rita"), id).error()}) {
        QCOMPARE(refused.code(), ErrorCode::PermissionDenied);
        QCOMPARE(w.last().outcome, audit::Outcome::Denied);
        QCOMPARE(w.last().actor.id, std::string("rita"));
        QCOMPARE(w.last().target.id, std::to_string(id));
    }
    QVERIFY(w.t.plane->runs().list(w.session("rita")).value().items.empty());
    QVERIFY(!w.t.plane->runs().show("not a session", id));
    QCOMPARE(w.last().outcome, audit::Outcome::Denied);

    // The approver sees it; a job that never started has no run.
    auto listed = w.t.plane->runs().list(w.session("ann")).value();
    QCOMPARE(listed.items.size(), std::size_t{1});
    QCOMPARE(listed.items[0].job.id, id);
    QCOMPARE(listed.items[0].attempts[0].outcome, std::string("running"));
    auto notStarted = w.t.plane->runs().show(w.session("ann"), waiting);
    QVERIFY(!notStarted);
    QCOMPARE(notStarted.error().code(), ErrorCode::NotFound);
    QVERIFY(isOneSentence(notStarted.error().message()));
}

void TestCoreRuns::controlPlaneRunHasAnAttemptWithoutWorker()
{
    WorkerWorld w;
    const auto local = w.queuedJob("local", "notes", "cpu");
    QVERIFY(w.jobs().start(local));
    // Its own trainer's lines are recorded for its current attempt only, and never for a job
    // that a worker runs.
    QVERIFY(w.scheduler().recordOwnRun(local, 1, {stepLine(1, 2.0), stepLine(2, 1.5)}));
    QCOMPARE(w.scheduler().recordOwnRun(local, 2, {stepLine(3, 1.0)}).error().code(),
             ErrorCode::PermissionDenied);
    const auto remote = w.queuedJob("remote", "notes", "cpu");
    taken(w, w.enrolled("n1", "cpu"));
    QCOMPARE(w.scheduler().recordOwnRun(remote, 1, {stepLine(1, 1.0)}).error().code(),
             ErrorCode::PermissionDenied);
    QVERIFY(w.jobs().finish(local, false, 0.0, "the trainer stopped with exit status 1"));
    QCOMPARE(w.scheduler().recordOwnRun(local, 1, {stepLine(3, 1.0)}).error().code(),
             ErrorCode::PermissionDenied);
    auto history = w.t.plane->runs().metrics(w.session("eve"), local).value();
    QCOMPARE(stepsOf(history.points), (std::vector<std::int64_t>{1, 2}));
    QCOMPARE(attemptsOf(history.points), (std::vector<std::int64_t>{1, 1}));
    QVERIFY(w.t.plane->runs().metrics(w.session("eve"), remote).value().points.empty());
    auto run = w.t.plane->runs().show(w.session("eve"), local).value();
    QCOMPARE(run.attempts.size(), std::size_t{1});
    QCOMPARE(run.attempts[0].worker, std::string());
    QCOMPARE(run.attempts[0].outcome, std::string("failed"));
    QCOMPARE(run.attempts[0].reason, std::string("the trainer stopped with exit status 1"));
    QCOMPARE(run.attempts[0].lastStep, std::int64_t{2});
}

void TestCoreRuns::summaryAndStepLines()
{
    QVERIFY(!core::parseRunPoint("not json", 1));
    QVERIFY(!core::parseRunPoint(R"({"kind":"step","loss":1.0})", 1));
    QVERIFY(!core::parseRunPoint(R"({"kind":"step","step":1})", 1));
    const auto point = core::parseRunPoint(stepLine(7, 1.25, 1.5).json, 3).value();
    QCOMPARE(point.step, std::int64_t{7});
    QCOMPARE(point.attempt, std::int64_t{3});
    QCOMPARE(point.gradientNorm, 1.5);
    QCOMPARE(point.mfu, 0.25);
    QCOMPARE(point.memoryBytes, std::int64_t{7000});

    const auto empty = core::summarizeRun({}, 10);
    QCOMPARE(empty.stepsDone, std::int64_t{0});
    QVERIFY(!empty.lastLoss);
    QVERIFY(!empty.bestValidationLoss);
    // The best validation loss need not be the last one.
    std::vector<core::RunPoint> points;
    for (const auto& [step, validation] :
         std::vector<std::pair<std::int64_t, double>>{{1, 3.0}, {2, 2.0}, {3, 2.5}})
        points.push_back(core::parseRunPoint(stepLine(step, 1.0, validation).json, 1).value());
    const auto summary = core::summarizeRun(points, 3);
    QCOMPARE(summary.bestValidationLoss.value(), 2.0);
    QCOMPARE(summary.bestValidationStep, std::int64_t{2});
    QCOMPARE(summary.lastValidationLoss.value(), 2.5);
    QCOMPARE(summary.meanMfu, 0.25);
}

QTEST_GUILESS_MAIN(TestCoreRuns)
#include "test_core_runs.moc"
