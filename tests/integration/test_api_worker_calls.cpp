// What an enrolled worker may not do through its own calls (issue #27, items 7, 18 and 22), tried
// against the real daemon by a worker that this test enrolls and drives itself, as a compromised
// node would: upload a checkpoint whose signed lineage names another dataset, job or run; replace
// a recorded checkpoint with another of the same step; rewrite metrics or log lines an earlier
// report (or attempt) recorded. Each refusal is in the audit log with the worker as its actor.
#include "daemon_fixture.h"
#include "keyed_pages.h"
#include "test_checkpoint.h"
#include "test_worker.h"

#include "sealtrain/api/server.h"
#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/core/workers/workers.h"
#include "sealtrain/crypto/certificate_authority.h"
#include "sealtrain/crypto/hash.h"
#include "sealtrain/crypto/sealed_box.h"
#include "sealtrain/crypto/signing.h"
#include "sealtrain/formats/checkpoint.h"
#include "sealtrain/formats/trainer_keys.h"
#include "sealtrain/trainer/counter_rng.h"

#include "sealtrain/v1/control.grpc.pb.h"

#include <grpcpp/grpcpp.h>

#include <QtTest/QtTest>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <tuple>

using namespace sealtrain;

namespace {

std::string sha256OfFile(const std::filesystem::path& path)
{
    auto digest = crypto::sha256File(path);
    return digest ? toHex(*digest) : "unreadable: " + digest.error().message();
}

}  // namespace

class TestApiWorkerCalls : public QObject {
    Q_OBJECT

    QTemporaryDir tmp_;
    testing::DaemonFixture daemon_;
    std::optional<crypto::SigningKey> signing_;
    std::optional<crypto::BoxKeyPair> box_;
    std::unique_ptr<api::ControlClient> worker_;
    std::optional<api::ClientIdentity> workerIdentity_;  // for a raw stream of its own
    api::JobAssignment job_;
    std::string otherDataset_;
    std::optional<trainer::TrainerKeys> keys_;
    int written_ = 0;

    // A checkpoint of `step` as the job's trainer would write it (sealed under the job's key,
    // signed by this worker's key), with the lineage fields given; its files.
    trainer::CheckpointFiles checkpoint(std::uint64_t step, std::uint64_t seed,
                                        const std::string& job, const std::string& run,
                                        const std::string& dataset)
    {
        return testing::writeTestCheckpoint(daemon_.runDir()
                                                / ("written-" + std::to_string(++written_)),
                                            *keys_, job_, *signing_, step, seed, job, run, dataset);
    }

    [[nodiscard]] std::filesystem::path kept(std::uint64_t step) const
    {
        return trainer::checkpointFiles(
                   daemon_.dataDir() / "jobs" / std::to_string(job_.job) / "checkpoints", step)
            .sealed;
    }

private slots:
    void initTestCase()
    {
        QVERIFY(tmp_.isValid());
        const std::filesystem::path root = tmp_.path().toStdString();
        daemon_.create(
            root, "alice",
            {{"sam", "steward"}, {"bob", "engineer"}, {"ann", "approver"}, {"otto", "operator"}});
        daemon_.start(
            {"--upload-idle-timeout", "1", "--max-watches", "1", "--max-watches-per-user", "1"});

        // Two datasets bob may read.
        auto sam = daemon_.as("sam");
        for (const std::string name : {"notes", "other"}) {
            const auto text = root / (name + ".txt");
            std::ofstream(text) << "first record of " << name << "\n\nsecond record\n";
            api::ImportSettings settings;
            settings.name = name;
            settings.format = "text-records";
            auto imported = sam->datasets().importDataset(
                settings, {{text, name + ".txt", std::filesystem::file_size(text)}}, {});
            QVERIFY2(imported, imported ? "" : imported.error().message().c_str());
            if (name == "other")
                otherDataset_ = imported->dataset.id;
            QVERIFY(sam->datasets().grantRead(name, "bob"));
        }

        // The worker enrols as sealtrain-worker does: its own TLS, signing and box keys.
        testing::TestWorker enrolled = testing::enrollTestWorker(daemon_, "otto", "n1", "cpu");
        signing_.emplace(std::move(*enrolled.signing));
        box_.emplace(std::move(*enrolled.box));
        worker_ = std::move(enrolled.client);
        workerIdentity_.emplace(std::move(*enrolled.identity));

        // bob's job, approved by ann, taken by the worker; its keys opened as the worker would.
        auto bob = daemon_.as("bob");
        auto job =
            bob->jobs().submitJob("spec_version: 1\nname: guarded\nproject: demo\ndataset: notes\n"
                                  "model: {layers: 1, heads: 1, width: 8, context: 8}\n"
                                  "schedule: {steps: 10, batch: 2}\n"
                                  "resources: {pool: cpu, device: cpu, threads: 1}\n");
        QVERIFY2(job, job ? "" : job.error().message().c_str());
        auto approved = daemon_.as("ann")->jobs().approveJob(job->id, job->specSha256);
        QVERIFY2(approved, approved ? "" : approved.error().message().c_str());
        auto taken = worker_->worker().takeJob();
        QVERIFY2(taken, taken ? "" : taken.error().message().c_str());
        QVERIFY(taken->has_value());
        job_ = **taken;
        keys_.emplace(testing::openJobKeys(*box_, job_));
    }

    // Issue #27, item 22: a checkpoint signed by the worker and sealed under the job's own key,
    // but whose lineage names another dataset, job or run, is refused and nothing is kept.
    void foreignLineageIsRefused()
    {
        const std::string job = std::to_string(job_.job);
        for (const auto& [what, files] :
             std::vector<std::pair<std::string, trainer::CheckpointFiles>>{
                 {"dataset", checkpoint(2, 1, job, job_.runId, otherDataset_)},
                 {"job",
                  checkpoint(2, 1, std::to_string(job_.job + 100), job_.runId, job_.datasetId)},
                 {"run", checkpoint(2, 1, job, "job-999", job_.datasetId)}}) {
            auto refused = worker_->worker().uploadCheckpoint(job_.job, job_.attempt, files.sealed,
                                                              files.envelope);
            QVERIFY2(!refused, what.c_str());
            QCOMPARE(refused.error().code(), ErrorCode::Integrity);
            QVERIFY(!std::filesystem::exists(kept(2)));
        }
    }

    // Issue #27, item 18: a recorded checkpoint is never replaced; a second, different one of
    // the same step is refused before its files are moved, and the recorded files stay as they
    // were recorded. The same one sent again (a reconnect) is acknowledged.
    void recordedCheckpointIsNeverReplaced()
    {
        const std::string job = std::to_string(job_.job);
        const auto first = checkpoint(4, 1, job, job_.runId, job_.datasetId);
        auto recorded = worker_->worker().uploadCheckpoint(job_.job, job_.attempt, first.sealed,
                                                           first.envelope);
        QVERIFY2(recorded, recorded ? "" : recorded.error().message().c_str());
        QCOMPARE(sha256OfFile(kept(4)), recorded->sealedSha256);

        const auto second = checkpoint(4, 2, job, job_.runId, job_.datasetId);
        QVERIFY(sha256OfFile(second.sealed) != recorded->sealedSha256);
        auto refused = worker_->worker().uploadCheckpoint(job_.job, job_.attempt, second.sealed,
                                                          second.envelope);
        QVERIFY(!refused);
        QCOMPARE(refused.error().code(), ErrorCode::AlreadyExists);
        QCOMPARE(sha256OfFile(kept(4)), recorded->sealedSha256);

        auto again = worker_->worker().uploadCheckpoint(job_.job, job_.attempt, first.sealed,
                                                        first.envelope);
        QVERIFY2(again, again ? "" : again.error().message().c_str());
        QCOMPARE(again->sealedSha256, recorded->sealedSha256);
    }

    // Issue #27, item 18: what a report recorded stays; a report sent again with other content,
    // or log lines numbered into another attempt's range, change nothing.
    void reportedLinesAreNeverRewritten()
    {
        api::MetricsReport report;
        report.job = job_.job;
        report.attempt = job_.attempt;
        report.metricsLines = {R"({"kind":"step","step":1,"loss":2.5})"};
        report.logLines = {"first line"};
        report.firstLogLine = 0;
        QVERIFY(worker_->worker().reportMetrics(report));
        report.metricsLines = {R"({"kind":"step","step":1,"loss":0.1})"};
        report.logLines = {"rewritten"};
        QVERIFY(worker_->worker().reportMetrics(report));
        report.metricsLines.clear();
        report.firstLogLine = -1'000'000'000;
        auto outside = worker_->worker().reportMetrics(report);
        QVERIFY(!outside);
        QCOMPARE(outside.error().code(), ErrorCode::InvalidArgument);

        auto metrics = daemon_.as("bob")->jobs().jobMetrics(job_.job, false, 0);
        QVERIFY2(metrics, metrics ? "" : metrics.error().message().c_str());
        QCOMPARE(metrics->size(), std::size_t{1});
        QVERIFY2(metrics->front().find("2.5") != std::string::npos, metrics->front().c_str());
        auto logs = daemon_.as("bob")->jobs().jobMetrics(job_.job, true, 0);
        QVERIFY2(logs, logs ? "" : logs.error().message().c_str());
        QCOMPARE(logs->size(), std::size_t{1});
        QVERIFY2(logs->front().find("first line") != std::string::npos, logs->front().c_str());
    }

    // Issue #54: fencing refusals leave an entry. The worker's fetches and report for an attempt
    // that is not its current one are refused with nothing handed over, each audited with the
    // worker (refusalsAreAuditedWithTheWorker counts them); its current attempt is unharmed.
    void callsOnAnotherAttemptAreRefusedAndAudited()
    {
        const std::int64_t stale = job_.attempt + 5;
        const std::filesystem::path root = std::filesystem::path(tmp_.path().toStdString());
        for (const char* name : {"stale-data", "stale-checkpoint", "stale-model"})
            std::filesystem::create_directories(root / name);
        auto dataset = worker_->worker().fetchDataset(job_.job, stale, root / "stale-data");
        QVERIFY(!dataset);
        QCOMPARE(dataset.error().code(), ErrorCode::PermissionDenied);
        QVERIFY(std::filesystem::is_empty(root / "stale-data"));
        auto checkpoint =
            worker_->worker().fetchCheckpoint(job_.job, stale, root / "stale-checkpoint");
        QVERIFY(!checkpoint);
        QCOMPARE(checkpoint.error().code(), ErrorCode::PermissionDenied);
        auto model = worker_->worker().fetchInitModel(job_.job, stale, root / "stale-model");
        QVERIFY(!model);
        QCOMPARE(model.error().code(), ErrorCode::PermissionDenied);
        api::MetricsReport report;
        report.job = job_.job;
        report.attempt = stale;
        report.metricsLines = {R"({"kind":"step","step":99,"loss":0.01})"};
        auto reported = worker_->worker().reportMetrics(report);
        QVERIFY(!reported);
        QCOMPARE(reported.error().code(), ErrorCode::PermissionDenied);
        auto metrics = daemon_.as("bob")->jobs().jobMetrics(job_.job, false, 0);
        QVERIFY2(metrics, metrics ? "" : metrics.error().message().c_str());
        for (const std::string& line : *metrics)
            QVERIFY2(line.find("0.01") == std::string::npos, line.c_str());
        const std::filesystem::path current = root / "current-data";
        std::filesystem::create_directories(current);
        auto fetched = worker_->worker().fetchDataset(job_.job, job_.attempt, current);
        QVERIFY2(fetched, fetched ? "" : fetched.error().message().c_str());
    }

    // Issue #27, item 10: a checkpoint upload that stops sending is cancelled after
    // --upload-idle-timeout (1 s here), like a dataset's, not held with its thread and its folder
    // until the client's deadline. A raw stream, as a compromised worker would write it.
    void stalledCheckpointUploadIsCancelled()
    {
        auto stub = sealtrain::v1::Workers::NewStub(daemon_.rawChannel(&*workerIdentity_));
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
        sealtrain::v1::UploadCheckpointReply reply;
        const auto began = std::chrono::steady_clock::now();
        auto stream = stub->UploadCheckpoint(&context, &reply);
        sealtrain::v1::FileChunk chunk;
        chunk.mutable_attempt()->set_job(job_.job);
        chunk.mutable_attempt()->set_attempt(job_.attempt);
        chunk.set_name("checkpoint-00000099.sealed");
        chunk.set_size(1000);
        chunk.set_data("a beginning");
        QVERIFY(stream->Write(chunk));
        // Nothing more is sent: the daemon ends the call long before the 30 s deadline.
        const grpc::Status status = stream->Finish();
        const auto took = std::chrono::steady_clock::now() - began;
        QVERIFY2(status.error_code() == grpc::StatusCode::CANCELLED
                     || status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED,
                 status.error_message().c_str());
        QVERIFY2(took < std::chrono::seconds(15),
                 qPrintable(QString("the stalled upload was held %1 s")
                                .arg(std::chrono::duration<double>(took).count())));
        // What it had sent is gone with it.
        const auto incoming = daemon_.dataDir() / "jobs" / "incoming";
        QTRY_VERIFY_WITH_TIMEOUT(
            !std::filesystem::exists(incoming) || std::filesystem::is_empty(incoming), 5000);
        QVERIFY(!std::filesystem::exists(kept(99)));
    }

    // Issue #27, item 13: a worker's certificate on a user's call is refused, and audited as
    // that worker with its certificate's serial, not as an unknown user.
    void userCallWithAWorkerCertificate()
    {
        auto refused = worker_->datasets().listDatasets();
        QVERIFY(!refused);
        QCOMPARE(refused.error().code(), ErrorCode::Unauthenticated);
    }

    // Issue #29: a watch streams the job, then what the worker reports as it reports it, to the
    // job's end; one watch is one audit entry however long it lasts; --max-watches bounds how
    // many threads watches hold (a refusal audited); who may not see the job may not watch it.
    void watchFollowsTheJobToItsEnd()
    {
        std::mutex lock;
        std::vector<api::JobWatchEvent> events;
        Result<api::JobSummary> last = Error(ErrorCode::Internal, "Not yet.");
        auto bob = daemon_.as("bob");
        api::CallCancel cancel;
        std::thread watcher([&] {
            auto ended = bob->jobs().watchJob(
                job_.job,
                [&](const api::JobWatchEvent& event) {
                    const std::lock_guard guard(lock);
                    events.push_back(event);
                    return true;
                },
                &cancel);
            const std::lock_guard guard(lock);
            last = std::move(ended);
        });
        // A check that fails below leaves the function: the watch is ended and joined first.
        struct Joined {
            api::CallCancel& cancel;
            std::thread& thread;
            Joined(api::CallCancel& c, std::thread& t)
                : cancel(c)
                , thread(t)
            {
            }
            Joined(const Joined&) = delete;
            Joined& operator=(const Joined&) = delete;
            ~Joined()
            {
                if (!thread.joinable())
                    return;
                cancel.cancel();
                thread.join();
            }
        } joined{cancel, watcher};
        const auto count = [&](api::JobWatchEvent::Kind kind) {
            const std::lock_guard guard(lock);
            return std::count_if(events.begin(), events.end(),
                                 [&](const api::JobWatchEvent& e) { return e.kind == kind; });
        };
        // What was recorded before the watch (step 1, the first log line, checkpoint 4) comes
        // at once, after the job itself.
        QTRY_VERIFY_WITH_TIMEOUT(count(api::JobWatchEvent::Kind::Checkpoint) == 1, 10000);
        {
            const std::lock_guard guard(lock);
            QCOMPARE(events.front().kind, api::JobWatchEvent::Kind::Job);
            QCOMPARE(events.front().job.state, std::string("running"));
            QCOMPARE(events.front().job.worker, std::string("n1"));
        }
        // The one watch slot is bob's: ann's watch is turned away, not queued (were it let in,
        // its first event would end it at once).
        auto busy = daemon_.as("ann")->jobs().watchJob(
            job_.job, [](const api::JobWatchEvent&) { return false; });
        QVERIFY(!busy);
        QCOMPARE(busy.error().code(), ErrorCode::ResourceExhausted);
        QVERIFY(isOneSentence(busy.error().message()));
        QVERIFY2(busy.error().message().find("The control plane is streaming") != std::string::npos,
                 busy.error().message().c_str());
        // Issue #54: and bob, who holds his share (--max-watches-per-user), is told so: one user
        // can not hold every slot.
        auto more = bob->jobs().watchJob(job_.job, [](const api::JobWatchEvent&) { return false; });
        QVERIFY(!more);
        QCOMPARE(more.error().code(), ErrorCode::ResourceExhausted);
        QVERIFY2(more.error().message().find("You are streaming 1 job watches already")
                     != std::string::npos,
                 more.error().message().c_str());

        api::MetricsReport report;
        report.job = job_.job;
        report.attempt = job_.attempt;
        report.metricsLines = {R"({"kind":"step","step":2,"loss":2.25})"};
        report.logLines = {"second line"};
        report.firstLogLine = 1;
        QVERIFY(worker_->worker().reportMetrics(report));
        QTRY_VERIFY_WITH_TIMEOUT(count(api::JobWatchEvent::Kind::Metrics) == 2, 10000);
        const auto six = checkpoint(6, 3, std::to_string(job_.job), job_.runId, job_.datasetId);
        QVERIFY(
            worker_->worker().uploadCheckpoint(job_.job, job_.attempt, six.sealed, six.envelope));
        QTRY_VERIFY_WITH_TIMEOUT(count(api::JobWatchEvent::Kind::Checkpoint) == 2, 10000);
        auto finished = worker_->worker().finishJob(job_.job, job_.attempt, true, 0.01, "");
        QVERIFY2(finished, finished ? "" : finished.error().message().c_str());
        watcher.join();

        QVERIFY2(last, last ? "" : last.error().message().c_str());
        QCOMPARE(last->state, std::string("succeeded"));
        std::vector<std::string> metrics;
        std::vector<std::string> logs;
        std::vector<std::int64_t> checkpoints;
        for (const api::JobWatchEvent& event : events) {
            if (event.kind == api::JobWatchEvent::Kind::Metrics)
                metrics.push_back(event.line);
            else if (event.kind == api::JobWatchEvent::Kind::Log)
                logs.push_back(event.line);
            else if (event.kind == api::JobWatchEvent::Kind::Checkpoint)
                checkpoints.push_back(event.checkpoint.step);
        }
        QCOMPARE(metrics.size(), std::size_t{2});
        QVERIFY(metrics[0].find("\"step\":1") != std::string::npos);
        QVERIFY(metrics[1].find("\"step\":2") != std::string::npos);
        QCOMPARE(logs, (std::vector<std::string>{"first line", "second line"}));
        QCOMPARE(checkpoints, (std::vector<std::int64_t>{4, 6}));
        QCOMPARE(events.back().kind, api::JobWatchEvent::Kind::Job);
        QCOMPARE(events.back().job.state, std::string("succeeded"));

        // The slot is free again; someone who may not see the job is refused all the same.
        auto outsider = daemon_.as("otto")->jobs().watchJob(
            job_.job, [](const api::JobWatchEvent&) { return true; });
        QVERIFY(!outsider);
        QCOMPARE(outsider.error().code(), ErrorCode::PermissionDenied);
    }

    // Issue #29: the people who may see the job list its checkpoints and download one, sealed,
    // with its envelope, byte for byte as recorded; its signature verifies under the worker's
    // key. A step that was never recorded is NOT_FOUND; someone outside the project, or without
    // a session, is refused.
    void checkpointsListedAndDownloaded()
    {
        auto bob = daemon_.as("bob");
        auto listed = bob->jobs().listCheckpoints(job_.job);
        QVERIFY2(listed, listed ? "" : listed.error().message().c_str());
        QCOMPARE(listed->size(), std::size_t{2});
        QCOMPARE(listed->at(0).step, std::int64_t{4});
        QCOMPARE(listed->at(1).step, std::int64_t{6});
        QCOMPARE(listed->at(0).sealedSha256, sha256OfFile(kept(4)));
        QCOMPARE(listed->at(1).worker, std::string("n1"));
        QVERIFY(listed->at(1).recordedUnix > 0);

        for (const std::int64_t step : {std::int64_t{0}, std::int64_t{4}}) {
            const std::int64_t expected = step == 0 ? 6 : step;
            const auto folder = daemon_.runDir() / ("download-" + std::to_string(step));
            std::filesystem::create_directories(folder);
            auto files = daemon_.as("ann")->jobs().downloadCheckpoint(job_.job, step, folder);
            QVERIFY2(files, files ? "" : files.error().message().c_str());
            QCOMPARE(files->size(), std::size_t{2});
            const auto recorded = trainer::checkpointFiles(
                daemon_.dataDir() / "jobs" / std::to_string(job_.job) / "checkpoints",
                static_cast<std::uint64_t>(expected));
            auto got = trainer::checkpointFilesFor(folder / recorded.sealed.filename());
            QVERIFY2(got, got ? "" : got.error().message().c_str());
            QCOMPARE(readWholeFile(got->sealed).value(), readWholeFile(recorded.sealed).value());
            QCOMPARE(readWholeFile(got->envelope).value(),
                     readWholeFile(recorded.envelope).value());
            const std::vector<crypto::PublicKey> trusted{signing_->publicKey()};
            auto lineage = trainer::verifyCheckpointSignature(*got, trusted);
            QVERIFY2(lineage, lineage ? "" : lineage.error().message().c_str());
            QCOMPARE(lineage->step, static_cast<std::uint64_t>(expected));
            QCOMPARE(lineage->job, std::to_string(job_.job));
        }
        const auto empty = daemon_.runDir() / "download-none";
        std::filesystem::create_directories(empty);
        auto missing = bob->jobs().downloadCheckpoint(job_.job, 5, empty);
        QVERIFY(!missing);
        QCOMPARE(missing.error().code(), ErrorCode::NotFound);
        QVERIFY(std::filesystem::is_empty(empty));
        auto outsider = daemon_.as("otto")->jobs().listCheckpoints(job_.job);
        QVERIFY(!outsider);
        QCOMPARE(outsider.error().code(), ErrorCode::PermissionDenied);
        auto outsiderDownload = daemon_.as("otto")->jobs().downloadCheckpoint(job_.job, 0, empty);
        QVERIFY(!outsiderDownload);
        QCOMPARE(outsiderDownload.error().code(), ErrorCode::PermissionDenied);
        QVERIFY(std::filesystem::is_empty(empty));
        auto anonymous = daemon_.anonymous()->jobs().listCheckpoints(job_.job);
        QVERIFY(!anonymous);
        QCOMPARE(anonymous.error().code(), ErrorCode::Unauthenticated);
    }

    // Issue #27, item 7: every refused upload is in the log, with the worker as its actor; and
    // every entry of the worker's calls records its peer and certificate serial.
    // Jobs.ShowPolicy: the pools, caps and sampling limits for anyone signed in; each project's
    // budget only to those who work in it, with what its jobs used and what they hold (a vetted
    // job its limit until it ends, a cancelled one nothing).
    void policyShowsBudgetUse()
    {
        const auto demoOf = [](const api::PolicySummary& policy) {
            const auto found = std::find_if(policy.budgets.begin(), policy.budgets.end(),
                                            [](const auto& b) { return b.project == "demo"; });
            return found == policy.budgets.end() ? std::optional<api::PolicySummary::Budget>()
                                                 : std::optional(*found);
        };
        auto bob = daemon_.as("bob");
        auto policy = bob->jobs().showPolicy();
        QVERIFY2(policy, policy ? "" : policy.error().message().c_str());
        const auto cpu = std::find_if(policy->pools.begin(), policy->pools.end(),
                                      [](const auto& pool) { return pool.name == "cpu"; });
        QVERIFY(cpu != policy->pools.end());
        QCOMPARE(cpu->classifications, (std::vector<std::string>{"public", "internal"}));
        // What one job on the pool may cost (issue #54), as the default policy sets it.
        QCOMPARE(cpu->maxParameters, 200'000'000.0);
        QCOMPARE(cpu->maxMemoryGib, 64.0);
        QCOMPARE(cpu->maxStepTflop, 100.0);
        QCOMPARE(policy->caps.size(), std::size_t{15});
        QCOMPARE(policy->caps.front(), (std::pair<std::string, double>{"nodes", 4.0}));
        QCOMPARE(policy->sampleMaxLength, std::int64_t{1024});
        const auto before = demoOf(*policy);
        QVERIFY(before.has_value());
        QCOMPARE(before->gpuHours, 10.0);
        // The job the worker finished reported 0.01 GPU hours.
        QVERIFY(std::abs(before->usedHours - 0.01) < 1e-9);
        QVERIFY(std::abs(before->heldHours - before->usedHours) < 1e-9);

        // A vetted GPU job holds its limit; cancelled, it holds nothing.
        auto gpu =
            bob->jobs().submitJob("spec_version: 1\nname: held\nproject: demo\ndataset: notes\n"
                                  "model: {layers: 1, heads: 1, width: 8, context: 8}\n"
                                  "schedule: {steps: 10, batch: 2}\n"
                                  "resources: {pool: gpu, device: cuda, gpus_per_node: 1}\n"
                                  "limits: {gpu_hours: 2}\n");
        QVERIFY2(gpu, gpu ? "" : gpu.error().message().c_str());
        QCOMPARE(gpu->state, std::string("vetted"));
        auto holding = bob->jobs().showPolicy();
        QVERIFY(holding);
        QVERIFY(std::abs(demoOf(*holding)->heldHours - (before->heldHours + 2.0)) < 1e-9);
        QVERIFY(std::abs(demoOf(*holding)->usedHours - before->usedHours) < 1e-9);
        QVERIFY(bob->jobs().cancelJob(gpu->id, "the budget test is done"));
        auto released = bob->jobs().showPolicy();
        QVERIFY(released);
        QVERIFY(std::abs(demoOf(*released)->heldHours - before->heldHours) < 1e-9);

        // A vetted CPU job holds its CPU-hour limit (issue #54); the GPU hours stay as they were.
        QCOMPARE(before->cpuHours, 100.0);
        auto cpuJob = bob->jobs().submitJob(
            "spec_version: 1\nname: cpu-held\nproject: demo\ndataset: notes\n"
            "model: {layers: 1, heads: 1, width: 8, context: 8}\n"
            "schedule: {steps: 10, batch: 2}\nresources: {pool: cpu, device: cpu}\n"
            "limits: {cpu_hours: 3}\n");
        QVERIFY2(cpuJob, cpuJob ? "" : cpuJob.error().message().c_str());
        QCOMPARE(cpuJob->state, std::string("vetted"));
        QCOMPARE(cpuJob->cpuHoursLimit, 3.0);
        auto cpuHeld = bob->jobs().showPolicy();
        QVERIFY(cpuHeld);
        QVERIFY(std::abs(demoOf(*cpuHeld)->cpuHeldHours - (before->cpuHeldHours + 3.0)) < 1e-9);
        QVERIFY(std::abs(demoOf(*cpuHeld)->heldHours - before->heldHours) < 1e-9);
        QVERIFY(bob->jobs().cancelJob(cpuJob->id, "the budget test is done"));

        // sam (a steward) reads the pools and caps but no project's budget; nobody anonymous.
        auto sam = daemon_.as("sam")->jobs().showPolicy();
        QVERIFY2(sam, sam ? "" : sam.error().message().c_str());
        QVERIFY(!sam->pools.empty());
        QVERIFY(sam->budgets.empty());
        auto anonymous = daemon_.anonymous()->jobs().showPolicy();
        QVERIFY(!anonymous);
        QCOMPARE(anonymous.error().code(), ErrorCode::Unauthenticated);
    }

    // Jobs.ListJobs pages: newest first, each page at most `limit`, the pages together the whole
    // list with none twice; a caller who may see no job gets an empty last page; a page out of
    // bounds is refused.
    void jobsComeInPages()
    {
        auto bob = daemon_.as("bob");
        auto all = bob->jobs().listJobs();
        QVERIFY2(all, all ? "" : all.error().message().c_str());
        QVERIFY(all->size() >= 2);
        std::vector<std::int64_t> paged;
        std::int64_t before = 0;
        int pages = 0;
        do {
            auto page = bob->jobs().listJobsPage(before, 1);
            QVERIFY2(page, page ? "" : page.error().message().c_str());
            QVERIFY(page->items.size() <= 1);
            for (const api::JobSummary& job : page->items)
                paged.push_back(job.id);
            QVERIFY(page->nextBefore == 0 || before == 0 || page->nextBefore < before);
            before = page->nextBefore;
            QVERIFY(++pages <= 10);
        } while (before != 0);
        std::vector<std::int64_t> whole;
        for (const api::JobSummary& job : *all)
            whole.push_back(job.id);
        QCOMPARE(paged, whole);
        QVERIFY(std::is_sorted(whole.rbegin(), whole.rend()));  // newest first

        auto nothing = daemon_.as("sam")->jobs().listJobsPage(0, 10);
        QVERIFY(nothing);
        QVERIFY(nothing->items.empty());
        QCOMPARE(nothing->nextBefore, std::int64_t{0});
        for (const auto& [start, limit] :
             std::vector<std::pair<std::int64_t, std::uint32_t>>{{0, 1001}, {-1, 10}}) {
            auto refused = bob->jobs().listJobsPage(start, limit);
            QVERIFY(!refused);
            QCOMPARE(refused.error().code(), ErrorCode::InvalidArgument);
        }
        auto anonymous = daemon_.anonymous()->jobs().listJobsPage(0, 10);
        QVERIFY(!anonymous);
        QCOMPARE(anonymous.error().code(), ErrorCode::Unauthenticated);
    }

    // The small lists come in pages by a key too (users, roles, datasets, workers, keys): pages
    // of one give the whole list once and in its order; a page of 1001 items, or one after a
    // key longer than any, is INVALID_ARGUMENT.
    void smallListsComeInPages()
    {
        namespace v1 = sealtrain::v1;
        auto channel = daemon_.rawChannel(&daemon_.session("alice"));
        auto users = v1::Users::NewStub(channel);
        const auto listUsers = [&](grpc::ClientContext* context, const v1::ListUsersRequest& in,
                                   v1::ListUsersReply* out) {
            return users->ListUsers(context, in, out);
        };
        std::vector<std::string> whole;
        const auto allUsers = daemon_.as("alice")->users().listUsers();
        QVERIFY(allUsers);
        for (const api::UserSummary& user : *allUsers)
            whole.push_back(user.name);
        QVERIFY(whole.size() >= 5);
        QCOMPARE((testing::pageByPage<v1::ListUsersRequest, v1::ListUsersReply>(
                     listUsers,
                     [](const v1::ListUsersReply& reply) {
                         std::vector<std::string> names;
                         for (const v1::User& user : reply.users())
                             names.push_back(user.name());
                         return names;
                     })),
                 whole);
        QVERIFY(std::is_sorted(whole.begin(), whole.end()));
        QCOMPARE(
            (testing::pageStatus<v1::ListUsersRequest, v1::ListUsersReply>(listUsers, 1001, "")),
            grpc::StatusCode::INVALID_ARGUMENT);
        QCOMPARE((testing::pageStatus<v1::ListUsersRequest, v1::ListUsersReply>(
                     listUsers, 10, std::string(513, 'a'))),
                 grpc::StatusCode::INVALID_ARGUMENT);

        auto access = v1::Access::NewStub(channel);
        whole.clear();
        const auto allRoles = daemon_.as("alice")->access().listRoles();
        QVERIFY(allRoles);
        for (const api::RoleSummary& role : *allRoles)
            whole.push_back(role.name);
        QCOMPARE((testing::pageByPage<v1::ListRolesRequest, v1::ListRolesReply>(
                     [&](grpc::ClientContext* context, const v1::ListRolesRequest& in,
                         v1::ListRolesReply* out) { return access->ListRoles(context, in, out); },
                     [](const v1::ListRolesReply& reply) {
                         std::vector<std::string> names;
                         for (const v1::Role& role : reply.roles())
                             names.push_back(role.name());
                         return names;
                     })),
                 whole);

        auto keyring = v1::Keyring::NewStub(channel);
        whole.clear();
        const auto allKeks = daemon_.as("alice")->keyring().listKeks();
        QVERIFY(allKeks);
        for (const api::KekSummary& kek : *allKeks)
            whole.push_back(kek.id + ":" + std::to_string(kek.version));
        QVERIFY(whole.size() >= 2);
        QCOMPARE((testing::pageByPage<v1::ListKeksRequest, v1::ListKeksReply>(
                     [&](grpc::ClientContext* context, const v1::ListKeksRequest& in,
                         v1::ListKeksReply* out) { return keyring->ListKeks(context, in, out); },
                     [](const v1::ListKeksReply& reply) {
                         std::vector<std::string> names;
                         for (const v1::Kek& kek : reply.keks())
                             names.push_back(kek.id() + ":" + std::to_string(kek.version()));
                         return names;
                     })),
                 whole);

        auto datasets = v1::Datasets::NewStub(daemon_.rawChannel(&daemon_.session("bob")));
        whole.clear();
        const auto allDatasets = daemon_.as("bob")->datasets().listDatasets();
        QVERIFY(allDatasets);
        for (const api::DatasetSummary& dataset : *allDatasets)
            whole.push_back(dataset.name + "@" + std::to_string(dataset.version));
        QCOMPARE(whole.size(), std::size_t{2});
        QCOMPARE((testing::pageByPage<v1::ListDatasetsRequest, v1::ListDatasetsReply>(
                     [&](grpc::ClientContext* context, const v1::ListDatasetsRequest& in,
                         v1::ListDatasetsReply* out) {
                         return datasets->ListDatasets(context, in, out);
                     },
                     [](const v1::ListDatasetsReply& reply) {
                         std::vector<std::string> names;
                         for (const v1::Dataset& dataset : reply.datasets())
                             names.push_back(dataset.name() + "@"
                                             + std::to_string(dataset.version()));
                         return names;
                     })),
                 whole);

        auto workers = v1::Workers::NewStub(daemon_.rawChannel(&daemon_.session("otto")));
        whole.clear();
        const auto allWorkers = daemon_.as("otto")->workers().listWorkers();
        QVERIFY(allWorkers);
        for (const api::WorkerSummary& worker : *allWorkers) {
            whole.push_back(worker.name);
            // Its certificate's notAfter, as issued at enrolment for the configured lifetime
            // (valid from five minutes before, for clocks a little behind).
            const std::int64_t lifetime = api::ServerOptions{}.workerCertificateLifetime.count();
            QVERIFY2(
                std::llabs(worker.certificateExpiresUnix - worker.enrolledUnix - lifetime + 300)
                    < 60,
                qPrintable(QString::number(worker.certificateExpiresUnix)));
        }
        QVERIFY(!whole.empty());
        QCOMPARE(
            (testing::pageByPage<v1::ListWorkersRequest, v1::ListWorkersReply>(
                [&](grpc::ClientContext* context, const v1::ListWorkersRequest& in,
                    v1::ListWorkersReply* out) { return workers->ListWorkers(context, in, out); },
                [](const v1::ListWorkersReply& reply) {
                    std::vector<std::string> names;
                    for (const v1::Worker& worker : reply.workers())
                        names.push_back(worker.name());
                    return names;
                })),
            whole);
    }

    // Issue #54: a heartbeat whose inventory would clear an operator's screen, ring and forge a
    // row of `worker list` (a GPU model "A100 ESC[2J BEL LF node-9 revoked") is refused.
    // (Late: an accepted heartbeat would tell the control plane this worker is idle.)
    void inventoryWithTerminalControlsIsRefused()
    {
        core::WorkerInventory inventory;
        inventory.gpus.push_back({"A100\x1b[2J\x07\nnode-9 revoked", 1});
        const std::string forged = core::workerInventoryJson(inventory);
        auto refused = worker_->worker().heartbeat(forged, 0, 0);
        QVERIFY(!refused);
        QCOMPARE(refused.error().code(), ErrorCode::InvalidArgument);
        QVERIFY2(refused.error().message().find("gpus[0].model") != std::string::npos,
                 refused.error().message().c_str());
    }

    // Issue #54: a worker call from no enrolled worker (a user's session certificate, no
    // certificate at all) is refused and audited as worker.connect, the first of its window
    // written with the certificate presented and the rest counted; a refused heartbeat
    // inventory is audited with the worker (checked in refusalsAreAuditedWithTheWorker).
    void workerCallsFromNoWorkerAreRefusedAndAudited()
    {
        const auto& bob = daemon_.session("bob");
        auto asUser = sealtrain::v1::Workers::NewStub(daemon_.rawChannel(&bob));
        auto anonymous = sealtrain::v1::Workers::NewStub(daemon_.rawChannel());
        const auto deadline = [](grpc::ClientContext& context) {
            context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
        };
        {
            grpc::ClientContext context;
            deadline(context);
            sealtrain::v1::HeartbeatRequest request;
            sealtrain::v1::HeartbeatReply reply;
            const auto status = asUser->Heartbeat(&context, request, &reply);
            QCOMPARE(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
            QVERIFY2(std::string(status.error_message())
                             .find("Workers.Heartbeat was called with "
                                   "a certificate that is not")
                         != std::string::npos,
                     status.error_message().c_str());
        }
        {
            grpc::ClientContext context;
            deadline(context);
            sealtrain::v1::HeartbeatRequest request;
            sealtrain::v1::HeartbeatReply reply;
            QCOMPARE(anonymous->Heartbeat(&context, request, &reply).error_code(),
                     grpc::StatusCode::UNAUTHENTICATED);
        }
        {
            grpc::ClientContext context;
            deadline(context);
            sealtrain::v1::TakeJobRequest request;
            sealtrain::v1::TakeJobReply reply;
            QCOMPARE(anonymous->TakeJob(&context, request, &reply).error_code(),
                     grpc::StatusCode::UNAUTHENTICATED);
        }
    }

    void refusalsAreAuditedWithTheWorker()
    {
        QVERIFY(daemon_.stop());
        auto entries = daemon_.auditEntries();
        QVERIFY2(entries, entries ? "" : entries.error().message().c_str());
        int denied = 0;
        int failed = 0;
        for (const audit::Entry& entry : *entries) {
            if (entry.action != "job.checkpoint")
                continue;
            QCOMPARE(entry.actor.kind, audit::ActorKind::Worker);
            QCOMPARE(testing::detailOf(entry, "worker"), std::string("n1"));
            denied += entry.outcome == audit::Outcome::Denied ? 1 : 0;
            failed += entry.outcome == audit::Outcome::Failed ? 1 : 0;
        }
        QCOMPARE(denied, 3);  // the three foreign lineages
        QCOMPARE(failed, 1);  // the second checkpoint of step 4
        // Issue #54: the forged inventory's heartbeat, with the worker; the three calls from no
        // worker, the first with bob's certificate, the other two counted.
        int refusedHeartbeats = 0;
        std::uint64_t noWorkerCalls = 0;
        bool firstNamesTheCertificate = false;
        for (const audit::Entry& entry : *entries) {
            if (entry.action == "worker.heartbeat") {
                QCOMPARE(entry.outcome, audit::Outcome::Denied);
                QCOMPARE(entry.actor.kind, audit::ActorKind::Worker);
                QCOMPARE(entry.actor.id, std::string("n1"));
                QVERIFY2(entry.reason.find("gpus[0].model") != std::string::npos,
                         entry.reason.c_str());
                ++refusedHeartbeats;
            }
            if (entry.action != "worker.connect" || entry.actor.id != "unknown")
                continue;
            QVERIFY(entry.outcome != audit::Outcome::Ok);
            const std::string repeated = testing::detailOf(entry, "repeated");
            if (repeated.empty()) {
                ++noWorkerCalls;
                firstNamesTheCertificate =
                    entry.reason.find("Workers.Heartbeat was called with a certificate")
                        != std::string::npos
                    && !testing::detailOf(entry, "certificate_serial").empty();
            } else {
                noWorkerCalls += std::stoull(repeated);
            }
        }
        QCOMPARE(refusedHeartbeats, 1);
        // The four calls on another attempt, each once, denied, with the worker and the attempt.
        std::map<std::string, int> fenced;
        for (const audit::Entry& entry : *entries) {
            if (entry.outcome != audit::Outcome::Denied || entry.actor.id != "n1"
                || testing::detailOf(entry, "attempt") != std::to_string(job_.attempt + 5))
                continue;
            QCOMPARE(entry.target.id, std::to_string(job_.job));
            ++fenced[entry.action];
        }
        QCOMPARE(fenced, (std::map<std::string, int>{{"job.fetch_checkpoint", 1},
                                                     {"job.fetch_dataset", 1},
                                                     {"job.fetch_init_model", 1},
                                                     {"job.report", 1}}));
        QCOMPARE(noWorkerCalls, std::uint64_t{3});
        QVERIFY(firstNamesTheCertificate);
        // Each policy read is audited with its reader (bob four times, sam once).
        int policyReads = 0;
        for (const audit::Entry& entry : *entries)
            if (entry.action == "policy.show" && entry.outcome == audit::Outcome::Ok) {
                QVERIFY(entry.actor.id == "bob" || entry.actor.id == "sam");
                ++policyReads;
            }
        QCOMPARE(policyReads, 5);
        std::string serial;
        bool listing = false;
        for (const audit::Entry& entry : *entries) {
            // Enrolment (by its token) comes before the worker holds a certificate.
            if (entry.actor.kind != audit::ActorKind::Worker || entry.action == "worker.enroll")
                continue;
            QVERIFY(testing::detailOf(entry, "peer").starts_with("ipv4:127.0.0.1:"));
            const std::string presented = testing::detailOf(entry, "certificate_serial");
            QVERIFY2(!presented.empty(), entry.action.c_str());
            QVERIFY(serial.empty() || presented == serial);
            serial = presented;
            QCOMPARE(entry.actor.id, std::string("n1"));
            listing =
                listing
                || (entry.action == "dataset.list" && entry.outcome == audit::Outcome::Denied);
        }
        QVERIFY(listing);

        // Issue #29: bob's watch is one entry however many looks it took; ann's busy refusal,
        // bob's second (past his share, issue #54) and otto's are there with their callers.
        std::multiset<std::pair<std::string, audit::Outcome>> watches;
        for (const audit::Entry& entry : *entries)
            if (entry.action == "job.watch")
                watches.insert({entry.actor.id, entry.outcome});
        QCOMPARE(watches.count({"bob", audit::Outcome::Ok}), std::size_t{1});
        QCOMPARE(watches.count({"bob", audit::Outcome::Failed}), std::size_t{1});
        QCOMPARE(watches.count({"ann", audit::Outcome::Failed}), std::size_t{1});
        QCOMPARE(watches.count({"otto", audit::Outcome::Denied}), std::size_t{1});
        QCOMPARE(watches.size(), std::size_t{4});

        // The checkpoints' list and downloads, each an entry with its caller; a download names
        // what it sent.
        std::multiset<std::tuple<std::string, std::string, audit::Outcome>> reads;
        for (const audit::Entry& entry : *entries) {
            if (entry.action != "job.checkpoints" && entry.action != "job.checkpoint_download")
                continue;
            reads.insert({entry.action, entry.actor.id, entry.outcome});
            if (entry.action == "job.checkpoint_download" && entry.outcome == audit::Outcome::Ok)
                QCOMPARE(testing::detailOf(entry, "sealed_sha256").size(), std::size_t{64});
        }
        using R = std::tuple<std::string, std::string, audit::Outcome>;
        QCOMPARE(reads.count(R{"job.checkpoints", "bob", audit::Outcome::Ok}), std::size_t{1});
        QCOMPARE(reads.count(R{"job.checkpoint_download", "ann", audit::Outcome::Ok}),
                 std::size_t{2});
        QCOMPARE(reads.count(R{"job.checkpoint_download", "bob", audit::Outcome::Failed}),
                 std::size_t{1});
        QCOMPARE(reads.count(R{"job.checkpoints", "otto", audit::Outcome::Denied}), std::size_t{1});
        QCOMPARE(reads.count(R{"job.checkpoint_download", "otto", audit::Outcome::Denied}),
                 std::size_t{1});
    }

    void cleanupTestCase() { daemon_.kill(); }
};

QTEST_GUILESS_MAIN(TestApiWorkerCalls)
#include "test_api_worker_calls.moc"
