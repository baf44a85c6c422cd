// The desktop application driven as a person uses it (issue #29): the real widgets, found by
// objectName, against a real sealtrain-control this test starts. Connect by address and CA
// fingerprint; sign in with TOTP (a wrong code shows the server's sentence); screens follow the
// permissions WhoAmI reports; submit a job as one user and approve it as another, the approve
// button absent for one's own job and the server's refusal shown when it is forced; the live
// chart fed by a worker's reports and its checkpoint listed and downloaded; the audit log browsed,
// verified live, exported and the export verified offline; the idle lock hiding the content; a
// revoked session back at sign-in with the sentence saying why.
#include "../integration/test_checkpoint.h"
#include "../integration/test_worker.h"
#include "gui_site.h"

#include "audit/audit_page.h"
#include "audit/audit_table_model.h"
#include "datasets/dataset_lineage.h"
#include "datasets/datasets_page.h"
#include "jobs/checkpoints_panel.h"
#include "jobs/job_table_model.h"
#include "jobs/jobs_page.h"
#include "jobs/metrics_chart.h"
#include "registry/import_model_dialog.h"
#include "registry/model_table_model.h"
#include "registry/models_page.h"
#include "runs/compare_chart.h"
#include "runs/run_table_model.h"
#include "runs/runs_page.h"
#include "workers/workers_page.h"

#include <QTableView>

#include "common/background.h"
#include "main_window.h"
#include "session/session.h"
#include <algorithm>

#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/version.h"
#include "sealtrain/formats/gpt_config.h"
#include "sealtrain/formats/hf_gpt2.h"
#include "sealtrain/formats/safetensors.h"

#include <QCheckBox>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QProcess>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QStackedWidget>
#include <QTabWidget>
#include <QTableWidget>
#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include <sys/resource.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string_view>

using namespace sealtrain;
using namespace std::chrono_literals;

using testing::Desk;
using testing::kGuiSpec;

namespace {

// The whole file at `path`, as text.
std::string fileText(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return file.readAll().toStdString();
}

// The soft core-size limit of process `pid`, as /proc/PID/limits writes it ("0", "unlimited").
std::string coreLimitOf(qint64 pid)
{
    std::ifstream limits("/proc/" + std::to_string(pid) + "/limits");
    for (std::string line; std::getline(limits, line);)
        if (line.rfind("Max core file size", 0) == 0) {
            std::istringstream words(line.substr(std::string_view("Max core file size").size()));
            std::string soft;
            words >> soft;
            return soft;
        }
    return "(no such line)";
}

}  // namespace

class TestGuiApp : public QObject {
    Q_OBJECT

    testing::GuiSite site_;

private slots:
    void initTestCase() { site_.start(); }

    // Issue #48: the desktop handles the keyring passphrase (starting a workstation's control
    // plane) and a user's password, so it turns core dumps off itself, even when the shell that
    // started it allows them.
    void desktopDumpsNoCore()
    {
        rlimit core{};
        QCOMPARE(::getrlimit(RLIMIT_CORE, &core), 0);
        core.rlim_cur = core.rlim_max;
        QCOMPARE(::setrlimit(RLIMIT_CORE, &core), 0);
        QTemporaryDir profile;
        QProcess desktop;
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.insert("QT_QPA_PLATFORM", "offscreen");
        environment.insert("SEALTRAIN_CLIENT_DIR", profile.path());
        desktop.setProcessEnvironment(environment);
        desktop.start(QStringLiteral(SEALTRAIN_DESKTOP_EXECUTABLE), {});
        QVERIFY(desktop.waitForStarted());
        // Its limits are its own once main has run: poll until they change or it has had time.
        QTRY_COMPARE_WITH_TIMEOUT(QString::fromStdString(coreLimitOf(desktop.processId())),
                                  QString("0"), 10000);
        desktop.kill();
        desktop.waitForFinished();
    }

    // Connect and sign in through the forms; the screens follow WhoAmI's permissions.
    void signInWithTotp()
    {
        Desk bob = site_.open("bob");
        QVERIFY(bob.find<QGroupBox>("connectBox")->isVisible());
        // A wrong fingerprint: nothing is pinned, and the form says why.
        bob.find<QLineEdit>("connectAddress")
            ->setText(QString::fromStdString(site_.daemon.tcpAddress()));
        bob.find<QLineEdit>("connectFingerprint")->setText("sha256:" + QString(64, 'a'));
        QTest::mouseClick(bob.find<QPushButton>("connectButton"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!bob.signInError().isEmpty(), 15000);
        QVERIFY(bob.find<QGroupBox>("connectBox")->isVisible());
        site_.connect(bob);
        // A wrong code: the server's sentence under the form, still signed out.
        bob.find<QLineEdit>("signInUser")->setText("bob");
        QTest::keyClicks(bob.find<QLineEdit>("signInPassword"), testing::kDaemonPassword);
        QTest::keyClicks(bob.find<QLineEdit>("signInTotp"), "000000");
        QTest::mouseClick(bob.find<QPushButton>("signInButton"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!bob.signInError().isEmpty(), 20000);
        QVERIFY2(bob.signInError().contains("TOTP code is wrong"), qPrintable(bob.signInError()));
        QVERIFY(!bob.session->signedIn());
        QVERIFY(bob.find<QLineEdit>("signInPassword")->text().isEmpty());  // not kept

        site_.signIn(bob, "bob");
        QCOMPARE(bob.window->screens(), (QStringList{"overviewPage", "datasetsPage", "jobsPage",
                                                     "runsPage", "modelsPage"}));
        auto rita = site_.open("rita");
        site_.signIn(rita, "rita");
        QCOMPARE(rita.window->screens(),
                 (QStringList{"overviewPage", "auditPage", "operationsPage"}));
        QVERIFY(rita.find<QGroupBox>("overviewBudgets")->isHidden());  // no job permission
        // The single admin's warning is on everyone's overview.
        QTRY_VERIFY_WITH_TIMEOUT(
            rita.find<QLabel>("overviewWarnings")->text().contains("Four eyes is not guaranteed"),
            10000);
        QTRY_VERIFY_WITH_TIMEOUT(rita.find<QLabel>("overviewServer")->text().contains(kVersion),
                                 10000);
        // The auditor sees the newest signed head, checked with the audit key; bob does not.
        auto* head = rita.find<QLabel>("overviewAuditHead");
        QTRY_VERIFY_WITH_TIMEOUT(head->text().contains("entries, signed"), 10000);
        QVERIFY2(!head->text().contains("NOT"), qPrintable(head->text()));
        QVERIFY(bob.find<QLabel>("overviewAuditHead")->parentWidget()->isHidden());
    }

    // bob submits through the spec editor; ann, another person, approves exactly the spec and
    // hash she sees; then a worker's reports reach bob's live chart and log.
    void submitApproveAndWatch()
    {
        Desk bob = site_.open("bob");
        site_.signIn(bob, "bob");
        QVERIFY(bob.window->showScreen("jobsPage"));
        auto* jobs = bob.find<gui::JobsPage>("jobsPage");
        bob.find<QPlainTextEdit>("newJobSpec")->setPlainText(QString(kGuiSpec).arg("watched"));
        QTest::mouseClick(bob.find<QPushButton>("submitButton"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(jobs->model().rowCount() == 1, 15000);
        const api::JobSummary submitted = *jobs->model().rowAt(0);
        QCOMPARE(submitted.state, std::string("vetted"));
        QVERIFY(jobs->select(submitted.id));
        QVERIFY(!bob.find<QPushButton>("approveButton")->isVisible());  // bob approves nothing
        QVERIFY(bob.find<QLabel>("jobSha256")
                    ->text()
                    .contains(QString::fromStdString(submitted.specSha256)));

        Desk ann = site_.open("ann");
        site_.signIn(ann, "ann");
        QVERIFY(ann.window->showScreen("jobsPage"));
        auto* annJobs = ann.find<gui::JobsPage>("jobsPage");
        QTRY_VERIFY_WITH_TIMEOUT(annJobs->select(submitted.id), 15000);
        QVERIFY(ann.find<QPlainTextEdit>("jobSpec")->toPlainText().contains("\"watched\""));
        auto* approve = ann.find<QPushButton>("approveButton");
        QVERIFY(approve->isVisible());
        QTest::mouseClick(approve, Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(annJobs->model().rowCount() == 1
                                     && annJobs->model().rowAt(0)->state == "queued",
                                 15000);
        QCOMPARE(annJobs->model().rowAt(0)->approver, std::string("ann"));

        // A worker takes it and reports; bob's open job shows it as it comes.
        testing::TestWorker worker = testing::enrollTestWorker(site_.daemon, "otto", "n1", "cpu");
        auto taken = worker.client->worker().takeJob();
        QVERIFY2(taken && taken->has_value(), taken ? "no job" : taken.error().message().c_str());
        QTRY_VERIFY2_WITH_TIMEOUT(jobs->model().rowAt(0)->state == "running",
                                  qPrintable(QString::fromStdString(jobs->model().rowAt(0)->state)
                                             + " / " + bob.find<QLabel>("jobsError")->text()),
                                  15000);
        api::MetricsReport report;
        report.job = (*taken)->job;
        report.attempt = (*taken)->attempt;
        report.metricsLines = {R"({"kind":"step","step":1,"loss":5.5,"tok_per_s":900,"mfu":0.01})",
                               R"({"kind":"step","step":2,"loss":5.1,"val_loss":5.3})"};
        report.logLines = {"training on n1"};
        report.firstLogLine = 0;
        QVERIFY(worker.client->worker().reportMetrics(report));
        QTRY_COMPARE_WITH_TIMEOUT(jobs->chart().lossPoints(), 2, 15000);
        QCOMPARE(jobs->chart().validationPoints(), 1);
        QTRY_VERIFY_WITH_TIMEOUT(
            bob.find<QPlainTextEdit>("jobLog")->toPlainText().contains("training on n1"), 15000);

        // The worker's checkpoint reaches bob's Checkpoints tab; he downloads it, sealed, with its
        // envelope, byte for byte as the control plane recorded it, into an empty folder only.
        const trainer::TrainerKeys keys = testing::openJobKeys(*worker.box, **taken);
        const trainer::CheckpointFiles written = testing::writeTestCheckpoint(
            site_.path("written").toStdString(), keys, **taken, *worker.signing, 2, 1,
            std::to_string(report.job), (*taken)->runId, (*taken)->datasetId);
        QVERIFY(worker.client->worker().uploadCheckpoint(report.job, report.attempt, written.sealed,
                                                         written.envelope));
        auto& checkpoints = jobs->checkpoints().model();
        QTRY_COMPARE_WITH_TIMEOUT(checkpoints.rowCount(), 1, 15000);
        QCOMPARE(checkpoints.rowAt(0)->step, std::int64_t{2});
        QCOMPARE(checkpoints.rowAt(0)->worker, std::string("n1"));
        bob.find<QTabWidget>("jobTabs")->setCurrentIndex(3);
        bob.find<QTableView>("checkpointsTable")->selectRow(0);
        const QString folder = site_.path("downloaded");
        bob.find<QLineEdit>("checkpointFolder")->setText(folder);
        QTest::mouseClick(bob.find<QPushButton>("checkpointDownload"), Qt::LeftButton);
        auto* status = bob.find<QLabel>("checkpointStatus");
        QTRY_VERIFY2_WITH_TIMEOUT(status->text().contains("Step 2 downloaded"),
                                  qPrintable(status->text()), 15000);
        const std::filesystem::path got =
            std::filesystem::path(folder.toStdString()) / written.sealed.filename();
        QCOMPARE(readWholeFile(got).value(), readWholeFile(written.sealed).value());
        QVERIFY(std::filesystem::exists(std::filesystem::path(folder.toStdString())
                                        / written.envelope.filename()));
        QTest::mouseClick(bob.find<QPushButton>("checkpointDownload"), Qt::LeftButton);
        QVERIFY(status->text().contains("not empty"));

        // bob samples from that checkpoint: the control plane runs the sampler on it. (The test
        // checkpoint's model knows 11 tokens, fewer than the dataset's tokenizer: a prompt it
        // cannot read is refused, so the text starts from nothing.)
        bob.find<QTabWidget>("jobTabs")->setCurrentIndex(4);
        bob.find<QLineEdit>("samplePrompt")->setText("ab");
        QTest::mouseClick(bob.find<QPushButton>("sampleButton"), Qt::LeftButton);
        auto* sampled = bob.find<QLabel>("sampleStatus");
        QTRY_VERIFY2_WITH_TIMEOUT(sampled->text().contains("exit status"),
                                  qPrintable(sampled->text()), 30000);
        bob.find<QLineEdit>("samplePrompt")->clear();
        bob.find<QSpinBox>("sampleLength")->setValue(6);
        QTest::mouseClick(bob.find<QPushButton>("sampleButton"), Qt::LeftButton);
        QTRY_VERIFY2_WITH_TIMEOUT(sampled->text().contains("at step 2"),
                                  qPrintable(sampled->text()), 30000);
        QVERIFY(!bob.find<QPlainTextEdit>("sampleOutput")->toPlainText().isEmpty());
        // A step with no checkpoint: the server's sentence, where bob asked.
        bob.find<QSpinBox>("sampleStep")->setValue(7);
        QTest::mouseClick(bob.find<QPushButton>("sampleButton"), Qt::LeftButton);
        QTRY_VERIFY2_WITH_TIMEOUT(sampled->text().contains("no checkpoint at step 7"),
                                  qPrintable(sampled->text()), 15000);

        QVERIFY(worker.client->worker().finishJob(report.job, report.attempt, true, 0.01, ""));
        QTRY_VERIFY_WITH_TIMEOUT(jobs->model().rowAt(0)->state == "succeeded", 15000);

        // bob's overview: the demo project's budget, with the 0.01 GPU hours the job used.
        QVERIFY(bob.window->showScreen("overviewPage"));
        const auto budgetText = [&] {
            auto* label = bob.window->findChild<QLabel*>("budgetText_demo");
            return label == nullptr ? QString() : label->text();
        };
        QTRY_VERIFY2_WITH_TIMEOUT(budgetText().contains("0.01 of 10.00 GPU hours held, 0.01 used"),
                                  qPrintable(budgetText()), 15000);
        QCOMPARE(bob.find<QProgressBar>("budget_demo")->value(), 1);  // 0.1 % in thousandths
        // Issue #54: and its CPU-hour budget, which the CPU jobs are charged against.
        auto* cpuText = bob.window->findChild<QLabel*>("cpuBudgetText_demo");
        QVERIFY(cpuText != nullptr);
        QVERIFY2(cpuText->text().contains(" of 100.00 CPU-hours held, "),
                 qPrintable(cpuText->text()));
        QVERIFY(bob.find<QProgressBar>("cpuBudget_demo") != nullptr);
    }

    // Issue #30: bob's Runs screen lists the run watched above and a second one a worker runs
    // now; chosen together, their curves are overlaid, the parameters that differ are listed,
    // each run's attempts are shown, and their histories are exported as CSV and JSON.
    void runsCompared()
    {
        auto bobClient = site_.daemon.as("bob");
        auto second = bobClient->jobs().submitJob(QString(kGuiSpec).arg("compared").toStdString());
        QVERIFY2(second, second ? "" : second.error().message().c_str());
        QVERIFY(site_.daemon.as("ann")->jobs().approveJob(second->id, second->specSha256));
        testing::TestWorker worker =
            testing::enrollTestWorker(site_.daemon, "otto", "runner", "cpu");
        auto taken = worker.client->worker().takeJob();
        QVERIFY2(taken && taken->has_value(), taken ? "no job" : taken.error().message().c_str());
        QCOMPARE((*taken)->job, second->id);
        api::MetricsReport report;
        report.job = second->id;
        report.attempt = (*taken)->attempt;
        report.metricsLines = {R"({"kind":"step","step":1,"loss":6.0,"tok_per_s":800,"mfu":0.02})",
                               R"({"kind":"step","step":2,"loss":5.0})",
                               R"({"kind":"step","step":3,"loss":4.5,"val_loss":4.75})"};
        QVERIFY(worker.client->worker().reportMetrics(report));
        QVERIFY(worker.client->worker().finishJob(report.job, report.attempt, true, 0.0, ""));

        Desk bob = site_.open("bob");
        site_.signIn(bob, "bob");
        QVERIFY(bob.window->screens().contains("runsPage"));
        QVERIFY(bob.window->showScreen("runsPage"));
        auto* runs = bob.find<gui::RunsPage>("runsPage");
        QTRY_VERIFY_WITH_TIMEOUT(runs->model().rowCount() == 2, 15000);
        const api::RunView newest = *runs->model().rowAt(0);
        QCOMPARE(newest.job.id, second->id);
        QCOMPARE(newest.summary.stepsDone, std::int64_t{3});
        const std::int64_t watched = runs->model().rowAt(1)->job.id;

        QSignalSpy shown(runs, &gui::RunsPage::compareShown);
        QVERIFY(runs->choose({watched, second->id}));
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 15000);
        QCOMPARE(runs->compared().size(), std::size_t{2});
        QCOMPARE(runs->chart().curves(), 4);  // each run's loss and validation loss
        QCOMPARE(runs->chart().points(), 2 + 1 + 3 + 1);
        QCOMPARE(runs->chart().restartMarkers(), 0);
        auto* parameters = bob.find<QTableWidget>("runParameters");
        QCOMPARE(parameters->rowCount(), 1);  // only the name differs
        QCOMPARE(parameters->item(0, 0)->text(), QString("name"));
        QCOMPARE(parameters->item(0, 2)->text(), QString("compared"));
        QTest::mouseClick(bob.find<QCheckBox>("allParameters"), Qt::LeftButton);
        QVERIFY(parameters->rowCount() > 10);
        QVERIFY2(
            bob.find<QPlainTextEdit>("runAttempts")->toPlainText().contains("attempt 1 on runner"),
            qPrintable(bob.find<QPlainTextEdit>("runAttempts")->toPlainText()));
        QVERIFY(bob.find<QPushButton>("exportRunsCsv")->isEnabled());

        const QString csv = site_.path("runs.csv");
        QVERIFY(runs->exportTo(csv, false));
        const std::string text = fileText(csv);
        QVERIFY2(text.starts_with("run,name,step,attempt,loss,val_loss"), text.c_str());
        QCOMPARE(std::count(text.begin(), text.end(), '\n'), std::ptrdiff_t{1 + 2 + 3});
        const QString json = site_.path("runs.json");
        QVERIFY(runs->exportTo(json, true));
        const auto document = nlohmann::json::parse(fileText(json));
        QCOMPARE(document["runs"].size(), std::size_t{2});
        QCOMPARE(document["runs"][1]["steps"][2]["val_loss"].get<double>(), 4.75);

        // rita may not see jobs: no Runs screen for her.
        Desk rita = site_.open("rita");
        site_.signIn(rita, "rita");
        QVERIFY(!rita.window->screens().contains("runsPage"));
    }

    // The Models screen (issue #30): bob's registered version is promoted by ivy, a second person,
    // with the approve button absent for bob's own request; an export bob asks for is approved by
    // ivy and received by bob into a new folder; the lineage is drawn from dataset to promotion.
    void modelsPromotedAndExported()
    {
        auto bobClient = site_.daemon.as("bob");
        auto job = bobClient->jobs().submitJob(QString(kGuiSpec).arg("registered").toStdString());
        QVERIFY2(job, job ? "" : job.error().message().c_str());
        QVERIFY(site_.daemon.as("ann")->jobs().approveJob(job->id, job->specSha256));
        testing::TestWorker worker =
            testing::enrollTestWorker(site_.daemon, "otto", "registrar", "cpu");
        auto taken = worker.client->worker().takeJob();
        QVERIFY2(taken && taken->has_value(), taken ? "no job" : taken.error().message().c_str());
        QCOMPARE((*taken)->job, job->id);
        const trainer::TrainerKeys keys = testing::openJobKeys(*worker.box, **taken);
        const trainer::CheckpointFiles written = testing::writeTestCheckpoint(
            site_.path("registered").toStdString(), keys, **taken, *worker.signing, 2, 3,
            std::to_string(job->id), (*taken)->runId, (*taken)->datasetId);
        QVERIFY(worker.client->worker().uploadCheckpoint(job->id, (*taken)->attempt, written.sealed,
                                                         written.envelope));
        QVERIFY(worker.client->worker().finishJob(job->id, (*taken)->attempt, true, 0.0, ""));
        auto registered = bobClient->registry().registerModel("notes-model", "first", job->id, 0);
        QVERIFY2(registered, registered ? "" : registered.error().message().c_str());

        Desk bob = site_.open("bob");
        site_.signIn(bob, "bob");
        QVERIFY(bob.window->showScreen("modelsPage"));
        auto* models = bob.find<gui::ModelsPage>("modelsPage");
        QTRY_COMPARE_WITH_TIMEOUT(models->model().rowCount(), 1, 15000);
        QSignalSpy lineage(models, &gui::ModelsPage::lineageShown);
        QVERIFY(models->choose("notes-model"));
        QTRY_VERIFY_WITH_TIMEOUT(models->shown().has_value(), 15000);
        QCOMPARE(bob.find<QTableWidget>("modelVersions")->rowCount(), 1);
        QTRY_COMPARE_WITH_TIMEOUT(lineage.count(), 1, 15000);
        const QString graph = bob.find<QPlainTextEdit>("modelLineage")->toPlainText();
        QVERIFY2(graph.contains("checkpoint at step 2") && graph.contains("approved by ann")
                     && graph.contains("notes-model@1"),
                 qPrintable(graph));
        // Drawn too: dataset → job → checkpoint → the version, chosen.
        const gui::Lineage& drawn = bob.find<gui::LineageView>("modelLineageGraph")->lineage();
        QCOMPARE(drawn.nodes.size(), std::size_t{4});
        QVERIFY2(drawn.text().contains("checkpoint at step 2 (")
                     && drawn.text().contains("registered from checkpoint at step 2"),
                 qPrintable(drawn.text()));
        QVERIFY(drawn.nodes.back().selected);

        // bob asks for production; the decision is not his to make.
        QSignalSpy done(models, &gui::ModelsPage::actionDone);
        bob.find<QLineEdit>("promoteAlias")->setText("production");
        QTest::mouseClick(bob.find<QPushButton>("promoteButton"), Qt::LeftButton);
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 15000);
        QTRY_COMPARE_WITH_TIMEOUT(bob.find<QTableWidget>("modelPromotions")->rowCount(), 1, 15000);
        bob.find<QTableWidget>("modelPromotions")->selectRow(0);
        QVERIFY(bob.find<QPushButton>("approvePromotionButton")->isHidden());
        QTest::mouseClick(bob.find<QPushButton>("exportRequestButton"), Qt::LeftButton);
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 2, 15000);
        QTRY_COMPARE_WITH_TIMEOUT(bob.find<QTableWidget>("modelExports")->rowCount(), 1, 15000);

        // ivy, an approver too, decides both.
        Desk ivy = site_.open("ivy");
        site_.signIn(ivy, "ivy");
        QVERIFY(ivy.window->showScreen("modelsPage"));
        auto* ivyModels = ivy.find<gui::ModelsPage>("modelsPage");
        QTRY_COMPARE_WITH_TIMEOUT(ivyModels->model().rowCount(), 1, 15000);
        QVERIFY(ivyModels->choose("notes-model"));
        QTRY_VERIFY_WITH_TIMEOUT(
            ivyModels->shown().has_value() && ivyModels->shown()->promotions.size() == 1, 15000);
        QSignalSpy ivyDone(ivyModels, &gui::ModelsPage::actionDone);
        ivy.find<QTabWidget>("modelTabs")->setCurrentIndex(1);
        ivy.find<QTableWidget>("modelPromotions")->selectRow(0);
        auto* approve = ivy.find<QPushButton>("approvePromotionButton");
        QVERIFY(approve->isVisible());
        QTest::mouseClick(approve, Qt::LeftButton);
        QTRY_COMPARE_WITH_TIMEOUT(ivyDone.count(), 1, 15000);
        QTRY_VERIFY_WITH_TIMEOUT(ivyModels->shown()->promotions.at(0).state == "approved", 15000);
        QCOMPARE(ivyModels->shown()->versions.at(0).aliases,
                 std::vector<std::string>{"production"});
        ivy.find<QTabWidget>("modelTabs")->setCurrentIndex(2);
        ivy.find<QTableWidget>("modelExports")->selectRow(0);
        QVERIFY(ivy.find<QPushButton>("downloadExportButton")->isHidden());  // not hers
        QTest::mouseClick(ivy.find<QPushButton>("approveExportButton"), Qt::LeftButton);
        QTRY_COMPARE_WITH_TIMEOUT(ivyDone.count(), 2, 15000);
        // Approved, it is still not hers to receive: only whoever asked for it gets Receive.
        QTRY_VERIFY_WITH_TIMEOUT(ivyModels->shown()->exports.at(0).state == "approved", 15000);
        ivy.find<QTableWidget>("modelExports")->clearSelection();
        ivy.find<QTableWidget>("modelExports")->selectRow(0);
        QVERIFY(ivy.find<QPushButton>("downloadExportButton")->isHidden());

        // ivy's own request is not hers to decide: no approve or reject button for it, though
        // she decides others'.
        ivy.find<QTabWidget>("modelTabs")->setCurrentIndex(1);
        ivy.find<QLineEdit>("promoteAlias")->setText("staging");
        QTest::mouseClick(ivy.find<QPushButton>("promoteButton"), Qt::LeftButton);
        QTRY_COMPARE_WITH_TIMEOUT(ivyDone.count(), 3, 15000);
        QTRY_VERIFY_WITH_TIMEOUT(ivyModels->shown()->promotions.size() == 2, 15000);
        const auto& promotions = ivyModels->shown()->promotions;
        const auto own = std::find_if(promotions.begin(), promotions.end(),
                                      [](const auto& p) { return p.state == "pending"; });
        QVERIFY(own != promotions.end());
        QCOMPARE(own->requestedBy, std::string("ivy"));
        ivy.find<QTableWidget>("modelPromotions")->clearSelection();
        ivy.find<QTableWidget>("modelPromotions")
            ->selectRow(static_cast<int>(own - promotions.begin()));
        QVERIFY(ivy.find<QPushButton>("approvePromotionButton")->isHidden());
        QVERIFY(ivy.find<QPushButton>("rejectPromotionButton")->isHidden());

        // bob receives the approved export into a new folder.
        QVERIFY(models->choose("notes-model"));
        QTRY_VERIFY_WITH_TIMEOUT(models->shown()->exports.at(0).state == "approved", 15000);
        bob.find<QTabWidget>("modelTabs")->setCurrentIndex(2);
        bob.find<QTableWidget>("modelExports")->selectRow(0);
        auto* receive = bob.find<QPushButton>("downloadExportButton");
        QVERIFY(receive->isVisible());
        const QString folder = site_.path("exported-model");
        bob.find<QLineEdit>("exportFolder")->setText(folder);
        QTest::mouseClick(receive, Qt::LeftButton);
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 3, 15000);
        QVERIFY2(bob.find<QLabel>("modelsError")->text().isEmpty(),
                 qPrintable(bob.find<QLabel>("modelsError")->text()));
        for (const char* name : {"model.safetensors", "config.json", "model.sig"})
            QVERIFY2(QFile::exists(folder + "/" + name), name);
        QTRY_COMPARE_WITH_TIMEOUT(models->shown()->exports.at(0).downloads, std::int64_t{1}, 15000);

        // The exported folder is a GPT-2 folder in Hugging Face's layout: bob imports it as a base
        // model through the dialog. A folder without the model's files is refused first, with
        // the server's sentence, and nothing is listed for it.
        QVERIFY(bob.find<QPushButton>("importModelOpen")->isVisible());
        gui::ImportModelDialog* dialog = models->openImport();
        QVERIFY(QDir().mkpath(site_.path("empty-model")));
        dialog->findChild<QLineEdit*>("importModelFolder")->setText(site_.path("empty-model"));
        dialog->findChild<QLineEdit*>("importModelName")->setText("notes-base");
        dialog->findChild<QLineEdit*>("importModelProject")->setText("demo");
        auto* imported = dialog->findChild<QLabel*>("importModelStatus");
        QTest::mouseClick(dialog->findChild<QPushButton*>("importModelButton"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!dialog->busy(), 30000);
        QVERIFY2(!imported->text().startsWith("Imported"), qPrintable(imported->text()));
        QVERIFY2(!imported->text().isEmpty(), "the refusal's sentence");
        QVERIFY(!models->choose("notes-base"));
        // A one-layer GPT-2 of the export's byte tokenizer (256 tokens), written in Hugging
        // Face's layout as save_pretrained would.
        const QString base = site_.path("base-model");
        QVERIFY(QDir().mkpath(base));
        {
            const trainer::GptConfig config{256, trainer::GptConfig::padVocab(256), 8, 1, 1, 8};
            const trainer::ParameterLayout layout(config);
            std::vector<float> flat(layout.totalSize(), 0.0F);
            for (const trainer::ParameterTensor& tensor : layout.tensors())
                for (std::size_t i = 0; i < tensor.size; ++i)
                    flat[tensor.offset + i] = tensor.initStd > 0
                                                  ? static_cast<float>(tensor.initStd)
                                                        * (static_cast<float>(i % 7) - 3.0F) / 3.0F
                                                  : tensor.initConstant;
            const auto entries = trainer::gptExportEntries(config, flat);
            const auto weights = trainer::encodeSafetensors(entries).value();
            QVERIFY(writeFileAtomically((base + "/model.safetensors").toStdString(), weights,
                                        AtomicFileSink::Overwrite::Refuse));
            std::ofstream((base + "/config.json").toStdString())
                << trainer::gpt2ConfigJson(config, {0, 0});
            for (const char* file : {"/vocab.json", "/merges.txt"})
                QVERIFY(QFile::copy(folder + file, base + file));
        }
        dialog->findChild<QLineEdit*>("importModelFolder")->setText(base);
        QTest::mouseClick(dialog->findChild<QPushButton*>("importModelButton"), Qt::LeftButton);
        QTRY_VERIFY2_WITH_TIMEOUT(imported->text().startsWith("Imported notes-base@1"),
                                  qPrintable(imported->text()), 30000);
        dialog->reject();
        QTRY_VERIFY_WITH_TIMEOUT(models->choose("notes-base"), 15000);

        // ann approves, registers nothing: no import for her.
        Desk ann = site_.open("ann");
        site_.signIn(ann, "ann");
        QVERIFY(ann.window->showScreen("modelsPage"));
        QVERIFY(!ann.find<QPushButton>("importModelOpen")->isVisible());

        // rita may not read models: no Models screen for her.
        Desk rita = site_.open("rita");
        site_.signIn(rita, "rita");
        QVERIFY(!rita.window->screens().contains("modelsPage"));
    }

    // ivy holds both roles: her own job shows no approve button, and a forced click gets the
    // server's refusal, shown where she clicked.
    void ownJobCannotBeApproved()
    {
        Desk ivy = site_.open("ivy");
        site_.signIn(ivy, "ivy");
        QVERIFY(ivy.window->showScreen("jobsPage"));
        auto* jobs = ivy.find<gui::JobsPage>("jobsPage");
        ivy.find<QPlainTextEdit>("newJobSpec")->setPlainText(QString(kGuiSpec).arg("mine"));
        QTest::mouseClick(ivy.find<QPushButton>("submitButton"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(
            std::any_of(jobs->model().rows().begin(), jobs->model().rows().end(),
                        [](const api::JobSummary& job) { return job.name == "mine"; }),
            15000);
        std::int64_t id = 0;
        for (const api::JobSummary& job : jobs->model().rows())
            if (job.name == "mine")
                id = job.id;
        QVERIFY(jobs->select(id));
        auto* approve = ivy.find<QPushButton>("approveButton");
        QVERIFY(!approve->isVisible());
        QVERIFY(ivy.find<QPushButton>("cancelButton")->isVisible());
        approve->setVisible(true);  // forced
        QTest::mouseClick(approve, Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!ivy.find<QLabel>("jobsError")->text().isEmpty(), 15000);
        QVERIFY2(ivy.find<QLabel>("jobsError")->text().contains("own job"),
                 qPrintable(ivy.find<QLabel>("jobsError")->text()));
        QTRY_VERIFY_WITH_TIMEOUT(jobs->model().rowCount() > 0, 5000);
    }

    // rita browses the log, filters it, has the live log verified, exports a bundle and
    // verifies the file offline.
    void auditBrowseVerifyExport()
    {
        Desk rita = site_.open("rita");
        site_.signIn(rita, "rita");
        QVERIFY(rita.window->showScreen("auditPage"));
        auto* audit = rita.find<gui::AuditPage>("auditPage");
        QTRY_VERIFY_WITH_TIMEOUT(audit->model().rowCount() > 20, 15000);
        // How far the SIEM has the log (the site forwards to a file), from the control plane.
        QTRY_VERIFY_WITH_TIMEOUT(
            rita.find<QLabel>("auditForwarding")->text().startsWith("Forwarding to file: "), 15000);
        const QString forwarding = rita.find<QLabel>("auditForwarding")->text();
        QVERIFY2(forwarding.contains(QRegularExpression("[0-9]+ of [0-9]+ entries delivered")),
                 qPrintable(forwarding));
        QVERIFY2(!forwarding.contains("refuses"), qPrintable(forwarding));
        rita.find<QLineEdit>("auditActor")->setText("ann");
        QTest::mouseClick(rita.find<QPushButton>("auditApply"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!audit->loading() && audit->model().rowCount() > 0, 15000);
        for (const api::AuditEntryView& entry : audit->model().rows())
            QCOMPARE(entry.actor, std::string("ann"));
        QVERIFY(
            std::any_of(audit->model().rows().begin(), audit->model().rows().end(),
                        [](const api::AuditEntryView& e) { return e.action == "job.approve"; }));

        QTest::mouseClick(rita.find<QPushButton>("auditVerifyLive"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(rita.find<QLabel>("auditVerdict")->text().startsWith("VERIFIED"),
                                 30000);

        rita.find<QLineEdit>("auditActor")->clear();
        const QString path = site_.path("rita.bundle");
        rita.find<QLineEdit>("auditExportPath")->setText(path);
        rita.find<QCheckBox>("auditExportReport")->setChecked(true);
        QTest::mouseClick(rita.find<QPushButton>("auditExport"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(
            rita.find<QLabel>("auditStatus")->text().startsWith("Bundle saved"), 30000);
        QVERIFY(QFile::exists(path));
        // The PDF report beside it, private, saying what a reviewer's check says and how to
        // repeat it (read back with pdftotext from poppler-utils).
        const QString pdf = site_.path("rita.pdf");
        QVERIFY2(rita.find<QLabel>("auditStatus")->text().contains("report (VERIFIED)"),
                 qPrintable(rita.find<QLabel>("auditStatus")->text()));
        QCOMPARE(QFile::permissions(pdf) & (QFile::ReadGroup | QFile::ReadOther),
                 QFile::Permissions());
        QProcess pdftotext;
        pdftotext.start("pdftotext", {"-layout", pdf, "-"});
        QVERIFY2(pdftotext.waitForFinished(30000), "pdftotext (poppler-utils) did not run");
        // The typesetter's ligatures (ﬁ, ﬀ) read back as letters.
        const QString reportText = QString::fromUtf8(pdftotext.readAllStandardOutput())
                                       .replace(QChar(0xFB01), "fi")
                                       .replace(QChar(0xFB00), "ff")
                                       .simplified();
        QVERIFY2(reportText.contains("Verification result: VERIFIED"), qPrintable(reportText));
        QVERIFY2(reportText.contains("sealtrainctl audit verify rita.bundle --key sha256:"),
                 qPrintable(reportText));
        QVERIFY(reportText.contains("job.approve"));
        rita.find<QLineEdit>("auditBundlePath")->setText(path);
        QTest::mouseClick(rita.find<QPushButton>("auditOpenBundle"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(rita.find<QLabel>("auditVerdict")->text().startsWith("VERIFIED"),
                                 30000);
        // One byte changed in the file: the offline check says so.
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadWrite));
        QByteArray bytes = file.readAll();
        // A character of entry 5's bytes (base64, the line's fourth field) changed.
        const qsizetype line = bytes.indexOf("\nentry 5 ");
        QVERIFY(line > 0);
        const qsizetype blob = bytes.indexOf(' ', bytes.indexOf(' ', line + 8) + 1) + 1;
        QVERIFY(blob > line);
        bytes[blob + 8] = bytes[blob + 8] == 'A' ? 'B' : 'A';
        file.seek(0);
        file.write(bytes);
        file.close();
        QTest::mouseClick(rita.find<QPushButton>("auditOpenBundle"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(rita.find<QLabel>("auditVerdict")->text().startsWith("FAILED"),
                                 30000);
    }

    // Left alone, the window locks: the content hidden, the session signed out; a new sign-in
    // opens it.
    void idleWindowLocks()
    {
        gui::WindowOptions quick;
        quick.lockAfter = 2s;
        Desk bob = site_.open("bob", quick);
        site_.signIn(bob, "bob");
        QVERIFY(bob.window->showScreen("jobsPage"));
        QTRY_VERIFY_WITH_TIMEOUT(bob.window->locked(), 10000);
        QVERIFY(!bob.find<QWidget>("workspace")->isVisible());
        QVERIFY(bob.find<QWidget>("signInPage")->isVisible());
        QVERIFY(bob.find<QLabel>("signInTitle")->text().startsWith("Locked"));
        QCOMPARE(bob.find<QLineEdit>("signInUser")->text(), QString("bob"));
        QCOMPARE(bob.find<gui::JobsPage>("jobsPage")->model().rowCount(), 0);
        QVERIFY(!bob.session->signedIn());
        site_.signIn(bob, "bob");
        QVERIFY(!bob.window->locked());
    }

    // A session revoked by an admin takes the window back to sign-in, saying why.
    void revokedSessionReturnsToSignIn()
    {
        gui::WindowOptions often;
        often.refreshEvery = 1s;
        Desk ann = site_.open("ann", often);
        site_.signIn(ann, "ann");
        QVERIFY(site_.daemon.as("alice")->sessions().revokeSessions("ann"));
        QTRY_VERIFY_WITH_TIMEOUT(!ann.session->signedIn(), 20000);
        QVERIFY(ann.find<QWidget>("signInPage")->isVisible());
        QVERIFY2(ann.signInError().contains("sign in again"), qPrintable(ann.signInError()));
    }

    // Keyboard and screen readers: on the sign-in page and on every screen (each tab of it) of
    // each role, every control is reachable with Tab and has a name a screen reader reads.
    void everyControlUsableByKeyboard()
    {
        QStringList problems;
        const auto check = [&](const Desk& desk, const QString& where) {
            for (QTabWidget* tabs : desk.window->findChildren<QTabWidget*>()) {
                if (!tabs->isVisible())
                    continue;
                for (int index = 0; index < tabs->count(); ++index) {
                    tabs->setCurrentIndex(index);
                    for (const QString& problem : testing::unusableControls(*desk.window))
                        problems << where + ": " + problem;
                }
                tabs->setCurrentIndex(0);
            }
            for (const QString& problem : testing::unusableControls(*desk.window))
                problems << where + ": " + problem;
        };
        for (const std::string user : {"bob", "rita", "otto", "sam", "ann"}) {
            Desk desk = site_.open(user);
            check(desk, "sign-in");
            site_.signIn(desk, user);
            for (const QString& screen : desk.window->screens()) {
                QVERIFY(desk.window->showScreen(screen));
                QTest::qWait(200);
                check(desk, QString::fromStdString(user) + "/" + screen);
            }
        }
        problems.removeDuplicates();
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join("\n")));
    }

    // sam, a steward, sees every dataset with what its manifest says, and grants a read; otto,
    // an operator, makes a one-time enrolment token and revokes a worker, with a reason.
    void datasetsAndWorkers()
    {
        Desk sam = site_.open("sam");
        site_.signIn(sam, "sam");
        QVERIFY(sam.window->showScreen("datasetsPage"));
        auto* datasets = sam.find<gui::DatasetsPage>("datasetsPage");
        QTRY_COMPARE_WITH_TIMEOUT(datasets->model().rowCount(), 1, 15000);
        QCOMPARE(datasets->model().rowAt(0)->name, std::string("notes"));
        sam.find<QTableView>("datasetsTable")->selectRow(0);
        QTRY_VERIFY_WITH_TIMEOUT(
            sam.find<QLabel>("datasetDetails")->text().contains("Readers: bob, ivy"), 15000);
        sam.find<QLineEdit>("datasetReader")->setText("ann");
        QTest::mouseClick(sam.find<QPushButton>("grantReadButton"), Qt::LeftButton);
        QTRY_VERIFY2_WITH_TIMEOUT(sam.find<QLabel>("datasetDetails")->text().contains("ann"),
                                  qPrintable(sam.find<QLabel>("datasetsStatus")->text()), 15000);
        // Its lineage: one version; sam sees no jobs (she may not), bob the ones trained on it.
        auto* lineage = sam.find<gui::LineageView>("datasetLineage");
        QCOMPARE(lineage->lineage().nodes.size(), std::size_t{1});
        QVERIFY(lineage->lineage().nodes.front().title == "notes v1");
        Desk bob = site_.open("bob");
        site_.signIn(bob, "bob");
        QVERIFY(bob.window->showScreen("datasetsPage"));
        QTRY_COMPARE_WITH_TIMEOUT(bob.find<gui::DatasetsPage>("datasetsPage")->model().rowCount(),
                                  1, 15000);
        bob.find<QTableView>("datasetsTable")->selectRow(0);
        auto* bobsLineage = bob.find<gui::LineageView>("datasetLineage");
        QTRY_VERIFY2_WITH_TIMEOUT(bobsLineage->lineage().text().contains(
                                      "job 1 watched (succeeded, by bob) trained on notes v1"),
                                  qPrintable(bobsLineage->lineage().text()), 15000);
        QCOMPARE(bobsLineage->accessibleDescription(), bobsLineage->lineage().text());

        const testing::TestWorker node =
            testing::enrollTestWorker(site_.daemon, "otto", "n3", "cpu");
        Desk otto = site_.open("otto");
        site_.signIn(otto, "otto");
        QCOMPARE(otto.window->screens(), (QStringList{"overviewPage", "workersPage"}));
        QVERIFY(otto.window->showScreen("workersPage"));
        auto* workers = otto.find<gui::WorkersPage>("workersPage");
        QTRY_VERIFY_WITH_TIMEOUT(workers->model().rowCount() >= 1, 15000);
        otto.find<QLineEdit>("workerName")->setText("n2");
        otto.find<QLineEdit>("workerPool")->setText("cpu");
        QTest::mouseClick(otto.find<QPushButton>("enrollTokenButton"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!otto.find<QLineEdit>("enrollToken")->text().isEmpty(), 15000);
        QVERIFY(otto.find<QLineEdit>("enrollToken")->isReadOnly());
        otto.find<QTableView>("workersTable")->selectRow(0);
        otto.find<QLineEdit>("revokeReason")->setText("decommissioned");
        QTest::mouseClick(otto.find<QPushButton>("revokeWorkerButton"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(workers->model().rowCount() >= 1
                                     && workers->model().rowAt(0)->state == "revoked",
                                 15000);
    }

    void cleanupTestCase()
    {
        gui::callPool().waitForDone(30000);
        QVERIFY(site_.daemon.stop());
    }
};

QTEST_MAIN(TestGuiApp)
#include "test_gui_app.moc"
