// Training jobs in the control plane (issue #16): specs parsed strictly with errors that name
// the field, the canonical form an approval binds to, the automatic vetting (read grant,
// classification per worker pool, caps, GPU-hour budget), and every illegal transition refused
// and audited: approving one's own job, approving another spec than the current one, running an
// unapproved job, running after an edit, a phi dataset on a pool that may not see it, a budget
// exceeded.
#include "core_fixture.h"
#include "jobs_world.h"
#include "sealtrain/audit/entry.h"
#include "sealtrain/core/control_plane.h"
#include "sealtrain/core/jobs/jobs.h"
#include "sealtrain/core/jobs/scheduling/budgets.h"
#include "sealtrain/formats/job_spec.h"

#include <QtTest/QtTest>
#include <fmt/format.h>

#include <fstream>
#include <map>

class TestCoreJobs : public QObject {
    Q_OBJECT

private slots:
    void specErrorsNameTheField_data();
    void specErrorsNameTheField();
    void costlySpecShapesAreRefused_data();
    void costlySpecShapesAreRefused();
    void anUnknownSessionIsRefusedBeforeTheSpec();
    void canonicalFormBindsTheContent();
    void fourEyesFromSubmissionToRun();
    void noRunWithoutApprovalOfTheCurrentSpec();
    void approvalBindsTheResolvedDataset();
    void phiOnAPoolThatMayNotSeeItIsRejected();
    void budgetIsEnforced();
    void rolesAndRefusals();
    void policyFile();
    void everyCostIsCapped();
    void aJobsCostIsCappedPerPool();
    void cpuJobsAreBoundByCpuHours();
    void samplingIsCapped();
};

using namespace sealtrain;

namespace {

using testing::spec;
using World = testing::JobsWorld;

// `result` failed with one sentence, and the newest audit entry records the refusal.
template <typename T>
void verifyRefused(World& w, const Result<T>& result, const std::string& action,
                   audit::Outcome outcome = audit::Outcome::Denied)
{
    QVERIFY(!result.ok());
    QVERIFY2(isOneSentence(result.error().message()), result.error().message().c_str());
    const auto entry = w.last();
    QCOMPARE(QString::fromStdString(entry.action), QString::fromStdString(action));
    QCOMPARE(entry.outcome, outcome);
}

const core::VettingCheck* check(const core::JobInfo& job, const std::string& name)
{
    for (const auto& c : job.vetting) {
        if (c.check == name)
            return &c;
    }
    return nullptr;
}

}  // namespace

void TestCoreJobs::specErrorsNameTheField_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("field");
    const auto base = [](const std::string& model, const std::string& rest) {
        return QString::fromStdString(
            R"({"spec_version": 1, "name": "j", "project": "p", "dataset": "d", "model": )" + model
            + R"(, "schedule": {"steps": 10}, "resources": {"pool": "cpu")" + rest + "}}");
    };
    QTest::newRow("missing steps")
        << R"({"spec_version": 1, "name": "j", "project": "p", "dataset": "d", "model": {}, "schedule": {}, "resources": {"pool": "cpu"}})"
        << "schedule.steps";
    QTest::newRow("width not a multiple of heads")
        << base(R"({"heads": 3, "width": 32})", "") << "model.width";
    QTest::newRow("unknown field") << base(R"({"layerz": 3})", "") << "model.layerz";
    QTest::newRow("wrong type") << base(R"({"layers": "two"})", "") << "model.layers";
    QTest::newRow("cuda without gpus")
        << base("{}", R"(, "device": "cuda")") << "resources.gpus_per_node";
    QTest::newRow("bad pool name") << base("{}", R"(, "nodes": 0)") << "resources.nodes";
    QTest::newRow("version") << R"({"spec_version": 2})"
                             << "spec_version";
    QTest::newRow("yaml field") << "spec_version: 1\nname: Bad Name\n"
                                << "name";
}

void TestCoreJobs::specErrorsNameTheField()
{
    QFETCH(QString, text);
    QFETCH(QString, field);
    auto parsed = formats::parseJobSpec(text.toStdString());
    QVERIFY(!parsed);
    QCOMPARE(parsed.error().code(), ErrorCode::InvalidArgument);
    QVERIFY2(parsed.error().message().find("'" + field.toStdString() + "'") != std::string::npos,
             parsed.error().message().c_str());
    QVERIFY(isOneSentence(parsed.error().message()));
}

// What a spec may cost to read is bounded before anything is built from it (issue #27): a YAML
// "billion laughs" of six levels of nine aliases would expand to 531,441 values (each further
// level multiplies by nine), so aliases, anchors and tags are refused, and size, depth and the
// number of values are capped. Each row would be read (slowly, or into another error) without
// its check.
void TestCoreJobs::costlySpecShapesAreRefused_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("reason");
    std::string laughs = "a0: [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
    for (int level = 1; level <= 6; ++level) {
        laughs += fmt::format("a{}: [", level);
        for (int i = 0; i < 9; ++i)
            laughs += fmt::format("{}*a{}", i == 0 ? "" : ", ", level - 1);
        laughs += "]\n";
    }
    // The anchors: "&aN" on each level's value.
    for (std::size_t at = 0, level = 0; (at = laughs.find(": [", at)) != std::string::npos;
         ++level) {
        const std::string anchor = fmt::format(": &a{} [", level);
        laughs.replace(at, 3, anchor);
        at += anchor.size();
    }
    QTest::newRow("billion laughs") << QString::fromStdString(laughs) << "anchor";
    QTest::newRow("an anchor alone") << "spec_version: 1\nname: &n j\n"
                                     << "anchor";
    QTest::newRow("a tag") << "spec_version: 1\nname: !!python/object:os.system j\n"
                           << "tag";
    QTest::newRow("a local tag") << "spec_version: 1\nname: !custom j\n"
                                 << "tag";
    QTest::newRow("two documents") << "spec_version: 1\n---\nspec_version: 1\n"
                                   << "more than one";
    QTest::newRow("deep yaml") << QString::fromStdString(std::string(200, '[')
                                                         + std::string(200, ']'))
                               << "deeper";
    QTest::newRow("deep json") << QString::fromStdString("{\"a\": " + std::string(200, '[')
                                                         + std::string(200, ']') + "}")
                               << "deeper";
    std::string wideJson = "{\"name\": [";
    std::string wideYaml = "name: [";
    for (int i = 0; i < 2000; ++i) {
        wideJson += i == 0 ? "1" : ",1";
        wideYaml += i == 0 ? "1" : ",1";
    }
    QTest::newRow("many json values") << QString::fromStdString(wideJson + "]}") << "values";
    QTest::newRow("many yaml values") << QString::fromStdString(wideYaml + "]\n") << "values";
    QTest::newRow("too large") << QString::fromStdString(
        "spec_version: 1\n" + std::string(std::size_t{70} * 1024, '#') + "\n")
                               << "bytes";
}

void TestCoreJobs::costlySpecShapesAreRefused()
{
    QFETCH(QString, text);
    QFETCH(QString, reason);
    auto parsed = formats::parseJobSpec(text.toStdString());
    QVERIFY(!parsed);
    QCOMPARE(parsed.error().code(), ErrorCode::InvalidArgument);
    QVERIFY2(parsed.error().message().find(reason.toStdString()) != std::string::npos,
             parsed.error().message().c_str());
    QVERIFY(isOneSentence(parsed.error().message()));
}

// The daemon hands core a spec it read, or the refusal of reading it; an unknown session is
// refused as such, and audited, whatever the spec.
void TestCoreJobs::anUnknownSessionIsRefusedBeforeTheSpec()
{
    World w;
    const Result<formats::JobSpec> unread =
        Error(ErrorCode::InvalidArgument, "The job spec uses a YAML alias; write plain fields.");
    auto job = w.jobs().submit("", unread);
    QVERIFY(!job);
    QCOMPARE(job.error().code(), ErrorCode::Unauthenticated);
    auto parsed = formats::parseJobSpec(spec("first", "notes", "cpu"));
    QVERIFY(parsed);
    job = w.jobs().submit("no-such-session", parsed);
    QVERIFY(!job);
    QCOMPARE(job.error().code(), ErrorCode::Unauthenticated);
}

// YAML and JSON of the same spec, in any key order, hash alike; any change of a value, a
// default made explicit aside, changes the hash.
void TestCoreJobs::canonicalFormBindsTheContent()
{
    const std::string json =
        R"({"spec_version": 1, "name": "j", "project": "p", "dataset": "d@2", "model": {"layers": 2}, "schedule": {"steps": 10, "batch": 4}, "resources": {"pool": "cpu"}})";
    const std::string yaml = "resources: {pool: cpu}\nschedule:\n  batch: 4\n  steps: 10\n"
                             "model: {layers: 2}\ndataset: \"d@2\"\nproject: p\nname: j\n"
                             "spec_version: 1\n";
    const std::string explicitDefault =
        R"({"spec_version": 1, "name": "j", "project": "p", "dataset": "d@2", "model": {"layers": 2, "heads": 4}, "schedule": {"steps": 10, "batch": 4}, "resources": {"pool": "cpu"}})";
    const std::string changed =
        R"({"spec_version": 1, "name": "j", "project": "p", "dataset": "d@2", "model": {"layers": 2}, "schedule": {"steps": 11, "batch": 4}, "resources": {"pool": "cpu"}})";
    const auto hash = [](const std::string& text) {
        auto parsed = formats::parseJobSpec(text);
        if (!parsed)
            qFatal("%s", parsed.error().message().c_str());
        return toHex(formats::jobSpecHash(*parsed));
    };
    QCOMPARE(hash(yaml), hash(json));
    QCOMPARE(hash(explicitDefault), hash(json));
    QVERIFY(hash(changed) != hash(json));
    const auto parsed = formats::parseJobSpec(json).value();
    const auto arguments = formats::trainerArguments(parsed);
    const auto steps = std::find(arguments.begin(), arguments.end(), "--steps");
    QVERIFY(steps != arguments.end());
    QCOMPARE(*(steps + 1), std::string("10"));
}

// The whole path: submitted and vetted at once, approved by a second person for exactly
// the current spec, run, finished; the submitter can never approve.
void TestCoreJobs::fourEyesFromSubmissionToRun()
{
    World w;
    auto job = w.jobs().submit(w.session("eve"), spec("first", "notes", "cpu"));
    QVERIFY2(job, job ? "" : job.error().message().c_str());
    QCOMPARE(job->state, core::JobState::Vetted);
    QVERIFY(job->vettingPassed());
    QCOMPARE(job->submitter, std::string("eve"));
    QVERIFY(job->datasetId.rfind("sha256:", 0) == 0);

    verifyRefused(w, w.jobs().approve(w.session("eve"), job->id, job->specSha256),
                  "job.approve");  // an engineer may not approve at all
    auto own = w.jobs().submit(w.session("ivy"), spec("ivys", "notes", "cpu"));
    QVERIFY2(own, own ? "" : own.error().message().c_str());
    verifyRefused(w, w.jobs().approve(w.session("ivy"), own->id, own->specSha256), "job.approve");
    QVERIFY2(w.last().reason.find("own job") != std::string::npos, w.last().reason.c_str());
    // A hash that is not the current spec's: the spec's state, not a role (issue #29).
    verifyRefused(w, w.jobs().approve(w.session("ann"), job->id, std::string(64, '0')),
                  "job.approve", audit::Outcome::Failed);
    verifyRefused(w, w.jobs().approve(w.session("rita"), job->id, job->specSha256), "job.approve");

    auto approved = w.jobs().approve(w.session("ann"), job->id, job->specSha256);
    QVERIFY2(approved, approved ? "" : approved.error().message().c_str());
    QCOMPARE(approved->state, core::JobState::Approved);
    QCOMPARE(approved->approver, std::string("ann"));
    auto running = w.jobs().start(job->id);
    QVERIFY2(running, running ? "" : running.error().message().c_str());
    QCOMPARE(running->state, core::JobState::Running);
    auto done = w.jobs().finish(job->id, true, 0.0, "");
    QVERIFY(done);
    QCOMPARE(done->state, core::JobState::Succeeded);
    verifyRefused(w, w.jobs().cancel(w.session("eve"), job->id, ""), "job.cancel",
                  audit::Outcome::Failed);
}

// Training without an approval is refused, and so is training after an edit voided it.
void TestCoreJobs::noRunWithoutApprovalOfTheCurrentSpec()
{
    World w;
    auto job = w.jobs().submit(w.session("eve"), spec("second", "notes", "cpu")).value();
    verifyRefused(w, w.jobs().start(job.id), "job.start");
    QCOMPARE(w.last().actor.id, std::string("control-plane"));

    const std::string oldHash = job.specSha256;
    QVERIFY(w.jobs().approve(w.session("ann"), job.id, oldHash));
    // Only the submitter edits; the edit voids the approval.
    verifyRefused(w,
                  w.jobs().edit(w.session("ann"), job.id,
                                spec("second", "notes", "cpu", R"(, "priority": 5)")),
                  "job.edit");
    // Issue #27: an edit may not move the job to another project, whose grants and budget are
    // not the ones its row was vetted and approved under.
    std::string moved = spec("second", "notes", "cpu", R"(, "priority": 5)");
    moved.replace(moved.find("\"demo\""), 6, "\"other\"");
    verifyRefused(w, w.jobs().edit(w.session("eve"), job.id, moved), "job.edit",
                  audit::Outcome::Failed);
    QVERIFY2(w.last().reason.find("project") != std::string::npos, w.last().reason.c_str());
    QCOMPARE(w.jobs().show(w.session("eve"), job.id)->project, std::string("demo"));
    auto edited = w.jobs().edit(w.session("eve"), job.id,
                                spec("second", "notes", "cpu", R"(, "priority": 5)"));
    QVERIFY2(edited, edited ? "" : edited.error().message().c_str());
    QCOMPARE(edited->state, core::JobState::Vetted);
    QVERIFY(edited->approver.empty());
    QVERIFY(edited->specSha256 != oldHash);
    verifyRefused(w, w.jobs().start(job.id), "job.start");
    // A stale approval is not a missing role: FailedPrecondition, audited as failed (issue #29),
    // so that a client shows the new spec instead of "ask for a grant".
    const auto stale = w.jobs().approve(w.session("ann"), job.id, oldHash);
    verifyRefused(w, stale, "job.approve", audit::Outcome::Failed);
    QCOMPARE(stale.error().code(), ErrorCode::FailedPrecondition);
    QVERIFY(w.jobs().approve(w.session("ann"), job.id, edited->specSha256));
    QVERIFY(w.jobs().start(job.id));
    const auto late = w.jobs().edit(w.session("eve"), job.id, spec("second", "notes", "cpu"));
    verifyRefused(w, late, "job.edit", audit::Outcome::Failed);
    QCOMPARE(late.error().code(), ErrorCode::FailedPrecondition);  // a running job's spec stays
}

// Issue #27: an approval binds the data, not only a name for it. The stored spec names the dataset
// id vetting resolved, so a version imported between the review and the approval is not what
// the job reads, and what the approver approves (the spec's hash) says which data it is.
void TestCoreJobs::approvalBindsTheResolvedDataset()
{
    World w;
    auto job = w.jobs().submit(w.session("eve"), spec("pinned", "notes", "cpu")).value();
    QVERIFY(job.datasetId.rfind("sha256:", 0) == 0);
    const auto stored = formats::parseJobSpec(job.specJson);
    QVERIFY(stored);
    QCOMPARE(stored->dataset, job.datasetId);
    QVERIFY(job.specSha256
            != toHex(formats::jobSpecHash(
                formats::parseJobSpec(spec("pinned", "notes", "cpu")).value())));

    // A new version of notes after the review: vetting again keeps the job on what was reviewed.
    QVERIFY2(w.importNewVersion("notes"), "no second version");
    auto revetted = w.jobs().vet(w.session("eve"), job.id);
    QVERIFY2(revetted, revetted ? "" : revetted.error().message().c_str());
    QCOMPARE(revetted->datasetId, job.datasetId);
    QCOMPARE(revetted->specSha256, job.specSha256);
    QVERIFY(w.jobs().approve(w.session("ann"), job.id, job.specSha256));

    // A job submitted now reads the new version, and its hash differs: an approval of the first
    // job's review does not carry over to it.
    auto later = w.jobs().submit(w.session("eve"), spec("pinned", "notes", "cpu")).value();
    QVERIFY(later.datasetId != job.datasetId);
    QVERIFY(later.specSha256 != job.specSha256);
    verifyRefused(w, w.jobs().approve(w.session("ann"), later.id, job.specSha256), "job.approve",
                  audit::Outcome::Failed);
}

// phi data on a pool the policy does not allow it on: rejected by vetting, with the
// report saying why, and it can not be approved.
void TestCoreJobs::phiOnAPoolThatMayNotSeeItIsRejected()
{
    World w;
    auto job = w.jobs().submit(w.session("eve"), spec("phi-on-cpu", "records", "cpu")).value();
    QCOMPARE(job.state, core::JobState::Rejected);
    const auto* classification = check(job, "classification");
    QVERIFY(classification != nullptr && !classification->ok);
    QVERIFY(classification->detail.find("'phi'") != std::string::npos);
    QCOMPARE(w.last().action, std::string("job.submit"));
    verifyRefused(w, w.jobs().approve(w.session("ann"), job.id, job.specSha256), "job.approve",
                  audit::Outcome::Failed);
    verifyRefused(w, w.jobs().start(job.id), "job.start");

    auto onSecure =
        w.jobs().submit(w.session("eve"), spec("phi-secure", "records", "gpu-secure")).value();
    QCOMPARE(onSecure.state, core::JobState::Vetted);
    // A dataset eve may not read fails vetting too.
    auto unknown = w.jobs().submit(w.session("eve"), spec("none", "nothing", "cpu")).value();
    QCOMPARE(unknown.state, core::JobState::Rejected);
    QVERIFY(!check(unknown, "dataset")->ok);
}

// The project's GPU hours: a job within the budget passes (with an alert near it), one
// that would exceed it is rejected; ended jobs count what they used.
void TestCoreJobs::budgetIsEnforced()
{
    World w;
    const auto gpuSpec = [](const std::string& name, int hours) {
        return R"({"spec_version": 1, "name": ")" + name
               + R"(", "project": "demo", "dataset": "notes", "model": {"layers": 2, "heads": 2, "width": 32, "context": 16}, "schedule": {"steps": 10}, "resources": {"pool": "gpu", "device": "cuda", "gpus_per_node": 1}, "limits": {"gpu_hours": )"
               + std::to_string(hours) + "}}";
    };
    // The default policy gives project demo 10 GPU hours, with an alert at 80 %.
    auto first = w.jobs().submit(w.session("eve"), gpuSpec("gpu-one", 8)).value();
    QCOMPARE(first.state, core::JobState::Vetted);
    QVERIFY2(check(first, "budget")->detail.find("alert") != std::string::npos,
             check(first, "budget")->detail.c_str());
    auto second = w.jobs().submit(w.session("eve"), gpuSpec("gpu-two", 5)).value();
    QCOMPARE(second.state, core::JobState::Rejected);
    QVERIFY(!check(second, "budget")->ok);
    // The first ends having used 3 hours: the second fits after vetting again.
    QVERIFY(w.jobs().approve(w.session("ann"), first.id, first.specSha256));
    QVERIFY(w.jobs().start(first.id));
    QVERIFY(w.jobs().finish(first.id, true, 3.0, ""));
    auto again = w.jobs().vet(w.session("eve"), second.id);
    QVERIFY2(again, again ? "" : again.error().message().c_str());
    QCOMPARE(again->state, core::JobState::Vetted);
}

// Who may do what: an auditor may not submit; a malformed spec is refused, naming the
// field, and audited as failed; an approver rejects, the submitter cancels.
void TestCoreJobs::rolesAndRefusals()
{
    World w;
    verifyRefused(w, w.jobs().submit(w.session("rita"), spec("x", "notes", "cpu")), "job.submit");
    auto malformed = w.jobs().submit(w.session("eve"), R"({"spec_version": 1})");
    verifyRefused(w, malformed, "job.submit", audit::Outcome::Failed);
    QVERIFY(malformed.error().message().find("'name'") != std::string::npos);

    auto job = w.jobs().submit(w.session("eve"), spec("third", "notes", "cpu")).value();
    verifyRefused(w, w.jobs().reject(w.session("eve"), job.id, "mine"), "job.reject");
    auto rejected = w.jobs().reject(w.session("ann"), job.id, "too small to be useful");
    QVERIFY2(rejected, rejected ? "" : rejected.error().message().c_str());
    QCOMPARE(rejected->state, core::JobState::Rejected);
    QCOMPARE(testing::detailOf(w.last(), "reason"), std::string("too small to be useful"));
    verifyRefused(w, w.jobs().approve(w.session("ann"), job.id, job.specSha256), "job.approve",
                  audit::Outcome::Failed);

    auto fourth = w.jobs().submit(w.session("eve"), spec("fourth", "notes", "cpu")).value();
    verifyRefused(w, w.jobs().cancel(w.session("sam"), fourth.id, ""), "job.cancel");
    auto cancelled = w.jobs().cancel(w.session("eve"), fourth.id, "");
    QVERIFY(cancelled);
    QCOMPARE(cancelled->state, core::JobState::Cancelled);

    auto listed = w.jobs().list(w.session("ann"));
    QVERIFY(listed);
    QCOMPARE(listed->items.size(), std::size_t{2});
    QCOMPARE(listed->items.front().id, fourth.id);  // newest first
    QCOMPARE(listed->nextBefore, std::int64_t{0});
    verifyRefused(w, w.jobs().show(w.session("rita"), job.id), "job.show");
}

void TestCoreJobs::policyFile()
{
    QVERIFY(core::parseJobPolicy(core::defaultJobPolicyText()));
    // The published default is the built-in one, byte for byte.
    std::ifstream published(SEALTRAIN_JOB_POLICY_FILE, std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(published)),
                           std::istreambuf_iterator<char>());
    QCOMPARE(text, std::string(core::defaultJobPolicyText()));
    auto bad = core::parseJobPolicy(R"({"policy_version": 1, "pools": {"cpu": {}}})");
    QVERIFY(!bad);
    QVERIFY(bad.error().message().find("'pools.cpu.classifications'") != std::string::npos);
    auto unknown = core::parseJobPolicy(R"({"policy_version": 1, "pools": {}, "extra": 1})");
    QVERIFY(!unknown);
    QVERIFY(unknown.error().message().find("'extra'") != std::string::npos);
}

// Issue #27, item 12: every field that decides what a job costs is capped by the policy, and a
// CPU job, which no GPU-hour budget bounds, has its steps capped and needs its project's budget
// like any other.
void TestCoreJobs::everyCostIsCapped()
{
    World w;
    auto policy = core::parseJobPolicy(R"({"policy_version": 1,
        "pools": {"cpu": {"classifications": ["internal"]}},
        "caps": {"grad_accum": 4, "threads": 2, "cpu_ranks_per_node": 2, "cpu_steps": 50},
        "budgets": {"demo": {"gpu_hours": 10, "cpu_hours": 100}}})");
    QVERIFY2(policy, policy ? "" : policy.error().message().c_str());
    QCOMPARE(policy->caps.gradAccum, std::int64_t{4});
    w.jobs().setPolicy(*policy);
    const auto cpuSpec = [](const std::string& project, const std::string& schedule,
                            const std::string& resources) {
        return R"({"spec_version": 1, "name": "costly", "project": ")" + project
               + R"(", "dataset": "notes", "model": {"layers": 2, "heads": 2, "width": 32, "context": 16}, "schedule": {"batch": 2, )"
               + schedule + R"(}, "resources": {"pool": "cpu", "device": "cpu", )" + resources
               + "}}";
    };
    auto within =
        w.jobs().submit(w.session("eve"), cpuSpec("demo", R"("steps": 50, "grad_accum": 4)",
                                                  R"("threads": 2, "cpu_ranks_per_node": 2)"));
    QVERIFY2(within, within ? "" : within.error().message().c_str());
    QCOMPARE(within->state, core::JobState::Vetted);
    auto over =
        w.jobs().submit(w.session("eve"), cpuSpec("demo", R"("steps": 51, "grad_accum": 5)",
                                                  R"("threads": 3, "cpu_ranks_per_node": 3)"));
    QVERIFY2(over, over ? "" : over.error().message().c_str());
    QCOMPARE(over->state, core::JobState::Rejected);
    const std::string detail = check(*over, "caps")->detail;
    for (const char* field :
         {"schedule.grad_accum 5 > 4", "resources.threads 3 > 2",
          "resources.cpu_ranks_per_node 3 > 2", "schedule.steps of a CPU job 51 > 50"})
        QVERIFY2(detail.find(field) != std::string::npos, detail.c_str());
    // A project the policy gives no budget runs nothing, a CPU job using no GPU hours included.
    auto unbudgeted = w.jobs().submit(w.session("eve"),
                                      cpuSpec("elsewhere", R"("steps": 10)", R"("threads": 1)"));
    QVERIFY2(unbudgeted, unbudgeted ? "" : unbudgeted.error().message().c_str());
    QCOMPARE(unbudgeted->state, core::JobState::Rejected);
    QVERIFY(!check(*unbudgeted, "budget")->ok);
    QVERIFY2(check(*unbudgeted, "budget")->detail.find("no budget") != std::string::npos,
             check(*unbudgeted, "budget")->detail.c_str());
}

// Issue #54, item 4: a CPU job is bound by CPU-hours as a GPU job is by GPU hours: its spec
// declares a limit (default 1, above 0), capped by the policy; vetting counts it against its
// project's CPU-hour budget, and a project whose budget has no CPU-hours runs no CPU job.
void TestCoreJobs::cpuJobsAreBoundByCpuHours()
{
    const std::string base = R"({"spec_version": 1, "name": "timed", "project": "demo",
        "dataset": "notes", "model": {"layers": 2, "heads": 2, "width": 32, "context": 16},
        "schedule": {"steps": 10, "batch": 2}, "resources": {"pool": "cpu", "device": "cpu"})";
    const auto limited = [&](const std::string& limits) {
        return base + R"(, "limits": )" + limits + "}";
    };
    QCOMPARE(formats::parseJobSpec(base + "}").value().limits.cpuHours, 1.0);
    auto zero = formats::parseJobSpec(limited(R"({"cpu_hours": 0})"));
    QVERIFY(!zero);
    QVERIFY2(zero.error().message().find("'limits.cpu_hours'") != std::string::npos,
             zero.error().message().c_str());
    QVERIFY(isOneSentence(zero.error().message()));
    // The limit is part of what is approved.
    QVERIFY(formats::jobSpecHash(formats::parseJobSpec(limited(R"({"cpu_hours": 2})")).value())
            != formats::jobSpecHash(formats::parseJobSpec(limited(R"({"cpu_hours": 3})")).value()));
    // The one charging rule: ranks × threads on every node; threads 0 takes the node's cores.
    formats::JobSpec spec = formats::parseJobSpec(base + "}").value();
    spec.resources.nodes = 2;
    spec.resources.cpuRanksPerNode = 3;
    spec.resources.threads = 4;
    QCOMPARE(core::chargedCpus(spec, 64), std::int64_t{24});
    spec.resources.threads = 0;
    QCOMPARE(core::chargedCpus(spec, 16), std::int64_t{32});
    QCOMPARE(core::chargedCpus(spec, 0), std::int64_t{6});  // cores unknown: one a rank
    spec.resources.gpusPerNode = 1;
    QCOMPARE(core::chargedCpus(spec, 16), std::int64_t{0});  // GPU hours only

    World w;
    auto policy = core::parseJobPolicy(R"({"policy_version": 1,
        "pools": {"cpu": {"classifications": ["internal"]}}, "caps": {"cpu_hours": 50},
        "budgets": {"demo": {"gpu_hours": 10, "cpu_hours": 5, "alert_at": 0.5},
                    "gpuonly": {"gpu_hours": 10, "cpu_hours": 0}, "older": {"gpu_hours": 1}}})");
    QVERIFY2(policy, policy ? "" : policy.error().message().c_str());
    // A policy file written before CPU-hours were charged keeps its CPU jobs running.
    QCOMPARE(policy->budgets.at("older").cpuHours, 100.0);
    w.jobs().setPolicy(*policy);
    auto first = w.jobs().submit(w.session("eve"), limited(R"({"cpu_hours": 2})"));
    QVERIFY2(first, first ? "" : first.error().message().c_str());
    QCOMPARE(first->state, core::JobState::Vetted);
    QCOMPARE(first->cpuHoursLimit, 2.0);
    QCOMPARE(check(*first, "budget")->detail,
             std::string("2.000 of 5.000 CPU-hours of project 'demo' with this job"));
    auto second = w.jobs().submit(w.session("eve"), limited(R"({"cpu_hours": 3})"));
    QVERIFY(second);
    QCOMPARE(second->state, core::JobState::Vetted);
    QVERIFY2(check(*second, "budget")->detail.find("5.000 of 5.000 CPU-hours") != std::string::npos
                 && check(*second, "budget")->detail.find("alert") != std::string::npos,
             check(*second, "budget")->detail.c_str());
    // What the two hold leaves nothing for a third.
    auto third = w.jobs().submit(w.session("eve"), limited(R"({"cpu_hours": 0.5})"));
    QVERIFY(third);
    QCOMPARE(third->state, core::JobState::Rejected);
    QVERIFY(!check(*third, "budget")->ok);
    QVERIFY2(check(*third, "budget")->detail.find("5.500 of 5.000") != std::string::npos,
             check(*third, "budget")->detail.c_str());
    // The cap.
    auto capped = w.jobs().submit(w.session("eve"), limited(R"({"cpu_hours": 51})"));
    QVERIFY(capped);
    QCOMPARE(capped->state, core::JobState::Rejected);
    QVERIFY2(check(*capped, "caps")->detail.find("limits.cpu_hours 51 > 50") != std::string::npos,
             check(*capped, "caps")->detail.c_str());
    // A project with GPU hours only runs no CPU job.
    std::string elsewhere = base + "}";
    elsewhere.replace(elsewhere.find("\"demo\""), 6, "\"gpuonly\"");
    auto gpuOnly = w.jobs().submit(w.session("eve"), elsewhere);
    QVERIFY2(gpuOnly, gpuOnly ? "" : gpuOnly.error().message().c_str());
    QCOMPARE(gpuOnly->state, core::JobState::Rejected);
    QCOMPARE(check(*gpuOnly, "budget")->detail,
             std::string("project 'gpuonly' has no CPU-hour budget"));
}

// Issue #54, item 4: per-field caps passed a 39-billion-parameter CPU job (48 layers, 64 heads,
// width and context 8,192, each within its cap). What a job costs, estimated from its shape, is
// capped per pool: its parameters, the memory one rank trains in, the FLOPs of one step.
void TestCoreJobs::aJobsCostIsCappedPerPool()
{
    // The estimate: GPT-2 small has 124,475,904 parameters with its vocabulary padded to 50,304.
    formats::JobSpec gpt2;
    gpt2.model = {12, 12, 768, 1024, ""};
    gpt2.schedule.batch = 4;
    gpt2.schedule.gradAccum = 2;
    gpt2.resources.nodes = 2;
    gpt2.resources.gpusPerNode = 4;
    const core::JobCost small = core::jobCost(gpt2, 50257);
    QCOMPARE(small.parameters, 124'475'904.0);
    // 6 FLOPs a matmul parameter (wpe is a lookup) and 6·L·C·T for attention, per token; the
    // tokens of one step: batch × context × grad_accum × 8 ranks.
    const double perToken = 6.0 * (124'475'904.0 - 1024.0 * 768.0) + 6.0 * 12 * 768 * 1024;
    QCOMPARE(small.stepFlops, perToken * 4 * 1024 * 2 * 8);
    QVERIFY(small.bytesPerRank > 16.0 * small.parameters);
    gpt2.resources.gpusPerNode = 0;  // the CPU trainer's layout keeps more per position
    QVERIFY(core::jobCost(gpt2, 50257).bytesPerRank > small.bytesPerRank);
    // The figure docs/formats/job-policy.md shows, for resources/jobs/fortunes-small.json's shape
    // on the byte tokenizer.
    formats::JobSpec fortunes;
    fortunes.model = {4, 4, 128, 128, ""};
    fortunes.schedule.batch = 16;
    QCOMPARE(core::describeCost(core::jobCost(fortunes, 256)),
             std::string("about 0.8 M parameters, 0.19 GiB per rank, 0.011 TFLOP per step"));

    World w;
    auto policy = core::parseJobPolicy(core::defaultJobPolicyText());
    QVERIFY(policy);
    QCOMPARE(policy->poolCosts.at("cpu").maxParameters, std::int64_t{200'000'000});
    policy->budgets["demo"].gpuHours = 10;
    w.jobs().setPolicy(*policy);
    const auto shaped = [](const std::string& model, const std::string& pool) {
        return R"({"spec_version": 1, "name": "shaped", "project": "demo", "dataset": "notes", "model": )"
               + model + R"(, "schedule": {"steps": 10, "batch": 8}, "resources": {"pool": ")"
               + pool + R"(", "device": "cpu"}})";
    };
    const std::string huge = R"({"layers": 48, "heads": 64, "width": 8192, "context": 8192})";
    auto attack = w.jobs().submit(w.session("eve"), shaped(huge, "cpu"));
    QVERIFY2(attack, attack ? "" : attack.error().message().c_str());
    QCOMPARE(attack->state, core::JobState::Rejected);
    QVERIFY(check(*attack, "caps")->ok);  // each field within its cap, as in the attack
    const core::VettingCheck* cost = check(*attack, "cost");
    QVERIFY(cost != nullptr && !cost->ok);
    for (const char* over : {"max_parameters", "max_memory_gib", "max_step_tflop", "pool 'cpu'"})
        QVERIFY2(cost->detail.find(over) != std::string::npos, cost->detail.c_str());
    auto small2 =
        w.jobs().submit(w.session("eve"),
                        shaped(R"({"layers": 2, "heads": 2, "width": 32, "context": 16})", "cpu"));
    QVERIFY2(small2, small2 ? "" : small2.error().message().c_str());
    QCOMPARE(small2->state, core::JobState::Vetted);
    QVERIFY2(check(*small2, "cost")->ok
                 && check(*small2, "cost")->detail.find("M parameters") != std::string::npos,
             check(*small2, "cost")->detail.c_str());

    // Each cap on its own, set per pool in the policy file.
    auto tight = core::parseJobPolicy(R"({"policy_version": 1,
        "pools": {"cpu": {"classifications": ["internal"], "max_memory_gib": 0.0001}},
        "budgets": {"demo": {"gpu_hours": 10, "cpu_hours": 100}}})");
    QVERIFY2(tight, tight ? "" : tight.error().message().c_str());
    QCOMPARE(tight->poolCosts.at("cpu").maxParameters, std::int64_t{2'000'000'000});
    w.jobs().setPolicy(*tight);
    auto memory =
        w.jobs().submit(w.session("eve"),
                        shaped(R"({"layers": 2, "heads": 2, "width": 32, "context": 16})", "cpu"));
    QVERIFY(memory);
    QCOMPARE(memory->state, core::JobState::Rejected);
    QVERIFY2(check(*memory, "cost")->detail.find("max_memory_gib") != std::string::npos
                 && check(*memory, "cost")->detail.find("max_parameters") == std::string::npos,
             check(*memory, "cost")->detail.c_str());
    auto typo = core::parseJobPolicy(R"({"policy_version": 1,
        "pools": {"cpu": {"classifications": ["internal"], "max_parametrs": 10}}})");
    QVERIFY(!typo);
    QVERIFY2(typo.error().message().find("'pools.cpu.max_parametrs'") != std::string::npos,
             typo.error().message().c_str());
    auto negative = core::parseJobPolicy(R"({"policy_version": 1,
        "pools": {"cpu": {"classifications": ["internal"], "max_step_tflop": -1}}})");
    QVERIFY(!negative);
}

// Issue #27, item 11: a sampling request is held to the policy: --length within max_length
// (given the sampler's default when absent), the prompt within max_prompt_bytes. Issue #54: only
// the sampler's own options, each once, each value in its range, decided in core (where a
// refusal is audited) rather than by whoever adapts the call.
void TestCoreJobs::samplingIsCapped()
{
    core::JobPolicy::Sampling limits;
    limits.maxLength = 100;
    limits.maxPromptBytes = 8;
    const auto given = [&](const std::vector<std::string>& arguments) {
        return core::samplerArguments(limits, arguments);
    };
    // The prompt leaves the arguments for the sampler's standard input (issue #27, item 4).
    auto prompted = given({"--prompt", "hi"});
    QVERIFY(prompted);
    QCOMPARE(prompted->arguments, (std::vector<std::string>{"--length=100", "--prompt-stdin"}));
    QCOMPARE(prompted->prompt, std::optional<std::string>("hi"));
    prompted = given({"--seed", "3", "--prompt=a b", "--top-k", "40", "--temperature=0.8"});
    QVERIFY2(prompted, prompted ? "" : prompted.error().message().c_str());
    QCOMPARE(prompted->arguments,
             (std::vector<std::string>{"--seed=3", "--top-k=40", "--temperature=0.8",
                                       "--length=100", "--prompt-stdin"}));
    QCOMPARE(prompted->prompt, std::optional<std::string>("a b"));
    limits.maxLength = 1000;
    QCOMPARE(given({}).value().arguments, (std::vector<std::string>{"--length=200"}));
    QCOMPARE(given({}).value().prompt, std::nullopt);
    QVERIFY(given({"--length", "1000"}));
    QVERIFY(given({"--length=0", "--prompt=12345678"}));
    QVERIFY(given({"--temperature", "0", "--top-k=0", "--seed=18446744073709551615"}));
    QVERIFY(given({"--temperature=100"}));
    for (const std::vector<std::string>& refused : {std::vector<std::string>{"--length", "1001"},
                                                    {"--length=1001"},
                                                    {"--length", "-1"},
                                                    {"--length", "12x"},
                                                    {"--length", ""},
                                                    {"--length", "10", "--length", "5000"},
                                                    {"--prompt", "123456789"},
                                                    {"--prompt", "a", "--prompt=b"},
                                                    {"--prompt"},
                                                    {"--temperature", "-0.5"},
                                                    {"--temperature=nan"},
                                                    {"--temperature=inf"},
                                                    {"--temperature=100.5"},
                                                    {"--temperature=1e1"},
                                                    {"--top-k=-1"},
                                                    {"--top-k=1000001"},
                                                    {"--top-k", "--prompt"},
                                                    {"--seed=18446744073709551616"},
                                                    {"--seed=-1"},
                                                    {"--checkpoint", "/etc/shadow"},
                                                    {"--device=cuda"},
                                                    {"--out", "x"}}) {
        auto result = given(refused);
        QVERIFY2(!result, refused.front().c_str());
        QCOMPARE(result.error().code(), ErrorCode::InvalidArgument);
        QVERIFY(isOneSentence(result.error().message()));
    }
    auto policy = core::parseJobPolicy(
        R"({"policy_version": 1, "pools": {}, "sampling": {"max_length": 0}})");
    QVERIFY(!policy);
    QVERIFY(policy.error().message().find("'sampling'") != std::string::npos);
}

QTEST_GUILESS_MAIN(TestCoreJobs)
#include "test_core_jobs.moc"
