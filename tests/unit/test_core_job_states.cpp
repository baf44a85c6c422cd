// The job state machine (core/jobs/states.h, issue #28 item 6): the table holds exactly the
// transitions docs/operations/scheduling.md documents, and the calls that move a job obey it.
// Every call that changes a job's state is tried on a job in every state: it succeeds where the
// documented machine allows that move, and everywhere else it is refused, audited, and leaves
// the job as it was.
#include "core_fixture.h"
#include "jobs_world.h"
#include "sealtrain/core/jobs/scheduling/scheduler.h"
#include "sealtrain/core/jobs/states.h"

#include <QtTest/QtTest>
#include <fmt/format.h>

#include <functional>
#include <set>
#include <string>
#include <vector>

using namespace sealtrain;
using core::JobMover;
using core::JobState;

namespace {

constexpr JobState kStates[] = {JobState::Submitted, JobState::Vetted, JobState::Rejected,
                                JobState::Approved,  JobState::Queued, JobState::Running,
                                JobState::Succeeded, JobState::Failed, JobState::Cancelled};
constexpr JobMover kMovers[] = {JobMover::Submitter, JobMover::Approver,
                                JobMover::SubmitterOrApprover, JobMover::ControlPlane,
                                JobMover::Worker};

// The machine as docs/operations/scheduling.md ("Job states") writes it, row by row, kept apart
// from the code's table so that a change to either is seen: "FROM>TO BY ACTION".
const std::set<std::string>& documentedRows()
{
    static const std::set<std::string> rows = {
        "submitted>vetted either job.vet",       "submitted>rejected either job.vet",
        "vetted>vetted either job.vet",          "vetted>rejected either job.vet",
        "rejected>vetted either job.vet",        "rejected>rejected either job.vet",
        "submitted>vetted submitter job.edit",   "submitted>rejected submitter job.edit",
        "vetted>vetted submitter job.edit",      "vetted>rejected submitter job.edit",
        "approved>vetted submitter job.edit",    "approved>rejected submitter job.edit",
        "queued>vetted submitter job.edit",      "queued>rejected submitter job.edit",
        "vetted>approved approver job.approve",  "vetted>rejected approver job.reject",
        "approved>rejected approver job.reject", "queued>rejected approver job.reject",
        "submitted>cancelled either job.cancel", "vetted>cancelled either job.cancel",
        "approved>cancelled either job.cancel",  "queued>cancelled either job.cancel",
        "running>cancelled either job.cancel",   "approved>queued control job.queue",
        "queued>running control job.dispatch",   "queued>failed control job.dispatch",
        "approved>running control job.start",    "queued>running control job.start",
        "running>succeeded worker job.finish",   "running>failed worker job.finish",
        "running>succeeded control job.finish",  "running>failed control job.finish",
        "running>queued control job.requeue",    "running>failed control job.requeue"};
    return rows;
}

std::string moverWord(JobMover mover)
{
    switch (mover) {
    case JobMover::Submitter: return "submitter";
    case JobMover::Approver: return "approver";
    case JobMover::SubmitterOrApprover: return "either";
    case JobMover::ControlPlane: return "control";
    case JobMover::Worker: return "worker";
    }
    return "?";
}

std::string row(JobState from, JobState to, JobMover by, std::string_view action)
{
    return fmt::format("{}>{} {} {}", core::jobStateName(from), core::jobStateName(to),
                       moverWord(by), action);
}

// One call that moves a job, as its caller makes it.
struct Move {
    std::string name;
    JobState to;
    JobMover by;
    std::string action;
    std::function<Result<core::JobInfo>(testing::JobsWorld&, const core::JobInfo&)> call;
};

std::vector<Move> moves()
{
    using W = testing::JobsWorld;
    using J = core::JobInfo;
    return {
        {"edit", JobState::Vetted, JobMover::Submitter, "job.edit",
         [](W& w, const J& job) {
             return w.jobs().edit(w.session("eve"), job.id,
                                  testing::spec(job.name + "-edited", "notes", "cpu"));
         }},
        {"vet", JobState::Vetted, JobMover::SubmitterOrApprover, "job.vet",
         [](W& w, const J& job) { return w.jobs().vet(w.session("eve"), job.id); }},
        {"approve", JobState::Approved, JobMover::Approver, "job.approve",
         [](W& w, const J& job) {
             return w.jobs().approve(w.session("ann"), job.id, job.specSha256);
         }},
        {"reject", JobState::Rejected, JobMover::Approver, "job.reject",
         [](W& w, const J& job) { return w.jobs().reject(w.session("ann"), job.id, "no"); }},
        {"cancel", JobState::Cancelled, JobMover::SubmitterOrApprover, "job.cancel",
         [](W& w, const J& job) { return w.jobs().cancel(w.session("eve"), job.id, ""); }},
        {"start", JobState::Running, JobMover::ControlPlane, "job.start",
         [](W& w, const J& job) { return w.jobs().start(job.id); }},
        {"finish", JobState::Succeeded, JobMover::ControlPlane, "job.finish",
         [](W& w, const J& job) { return w.jobs().finish(job.id, true, 0.0, ""); }},
        {"queue", JobState::Queued, JobMover::ControlPlane, "job.queue",
         [](W& w, const J& job) { return w.t.plane->scheduler().enqueue(job.id); }},
    };
}

}  // namespace

class TestCoreJobStates : public QObject {
    Q_OBJECT

private slots:
    // The code's table is the documented machine, row for row, and every (from, to, mover,
    // action) outside it is refused.
    void tableIsTheDocumentedMachine()
    {
        std::set<std::string> actions;
        std::set<std::string> inTable;
        for (const core::JobTransition& t : core::jobTransitions()) {
            const std::string text = row(t.from, t.to, t.by, t.action);
            QVERIFY2(inTable.insert(text).second, ("a row twice: " + text).c_str());
            QVERIFY2(documentedRows().count(text) == 1,
                     ("a row the docs do not have: " + text).c_str());
            actions.insert(std::string(t.action));
        }
        for (const std::string& documented : documentedRows())
            QVERIFY2(inTable.count(documented) == 1,
                     ("a documented row the table lacks: " + documented).c_str());
        int refused = 0;
        for (const JobState from : kStates)
            for (const JobState to : kStates)
                for (const JobMover by : kMovers)
                    for (const std::string& action : actions) {
                        const bool allowed = core::jobMayMove(from, to, by, action);
                        QCOMPARE(allowed, inTable.count(row(from, to, by, action)) == 1);
                        refused += allowed ? 0 : 1;
                    }
        QVERIFY(refused > 0);
        QVERIFY(std::string(core::jobMoverName(JobMover::Worker)).find("worker")
                != std::string::npos);
    }

    // Each call on a job in each state: allowed exactly where the machine allows its move;
    // refused otherwise, audited, and the job left in its state.
    void everyCallObeysTheMachine()
    {
        testing::JobsWorld w;
        int n = 0;
        for (const Move& move : moves()) {
            for (const JobState state : kStates) {
                const std::string name = fmt::format("walk-{}", ++n);
                auto job = w.jobs().submit(w.session("eve"), testing::spec(name, "notes", "cpu"));
                QVERIFY2(job, job ? "" : job.error().message().c_str());
                // Put the job in `state` as if it got there: approved as it is (by ann) where that
                // matters, rejected by the policy where it is rejected, on no worker.
                const bool rejected = state == JobState::Rejected;
                QVERIFY(w.t.database
                            ->run("UPDATE jobs SET state = ?, approver = CASE WHEN ? THEN NULL "
                                  "ELSE (SELECT id FROM users WHERE name = 'ann') END, "
                                  "approved_hash = CASE WHEN ? THEN NULL ELSE spec_hash END, "
                                  "reason = ?, worker_id = NULL WHERE id = ?",
                                  {core::jobStateName(state), rejected ? 1 : 0, rejected ? 1 : 0,
                                   rejected ? std::string("rejected by policy") : std::string(),
                                   job->id})
                            .ok());
                auto before = w.jobs().show(w.session("eve"), job->id);
                QVERIFY(before && before->state == state);

                const bool documented =
                    documentedRows().count(row(state, move.to, move.by, move.action)) == 1;
                QCOMPARE(core::jobMayMove(state, move.to, move.by, move.action), documented);
                auto moved = move.call(w, *before);
                const std::string what =
                    fmt::format("{} on a {} job: {}", move.name, core::jobStateName(state),
                                moved ? "allowed" : moved.error().message());
                QVERIFY2(moved.ok() == documented, what.c_str());
                if (moved) {
                    QCOMPARE(moved->state, move.to);
                    continue;
                }
                const audit::Entry entry = w.last();
                QCOMPARE(QString::fromStdString(entry.action), QString::fromStdString(move.action));
                QVERIFY2(entry.outcome != audit::Outcome::Ok, what.c_str());
                auto after = w.jobs().show(w.session("eve"), job->id);
                QVERIFY(after && after->state == state);
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestCoreJobStates)
#include "test_core_job_states.moc"
