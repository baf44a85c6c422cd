// The screenshot tour of docs/gui.md (issue #29): every screen of the desktop against a real
// sealtrain-control, saved as PNG. Run by scripts/screenshots under Xvfb at 1x and 2x
// (QT_SCALE_FACTOR); not a test (nothing is asserted beyond getting there), so not in CTest.
//   SEALTRAIN_SCREENSHOTS=DIR SEALTRAIN_SCREENSHOT_SUFFIX=@2x gui_tour
#include "../integration/test_checkpoint.h"
#include "../integration/test_worker.h"
#include "gui_site.h"

#include "access/access_page.h"
#include "audit/audit_page.h"
#include "audit/audit_table_model.h"
#include "common/background.h"
#include "datasets/dataset_lineage.h"
#include "datasets/datasets_page.h"
#include "datasets/import_wizard.h"
#include "jobs/checkpoints_panel.h"
#include "jobs/job_table_model.h"
#include "jobs/jobs_page.h"
#include "jobs/metrics_chart.h"
#include "jobs/new_job_panel.h"
#include "operations/compliance_tab.h"
#include "registry/import_model_dialog.h"
#include "registry/model_table_model.h"
#include "registry/models_page.h"
#include "runs/compare_chart.h"
#include "runs/run_table_model.h"
#include "runs/runs_page.h"
#include "session/enrol_dialog.h"
#include "session/first_run_dialog.h"
#include "session/sign_in_page.h"
#include "shell/theme.h"
#include "workers/workers_page.h"

#include <QCheckBox>
#include <QComboBox>
#include <QGroupBox>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>

#include <cmath>
#include <fstream>

using namespace sealtrain;
using testing::Desk;

class GuiTour : public QObject {
    Q_OBJECT

    testing::GuiSite site_;
    QString folder_;
    QString suffix_;

    void save(const Desk& desk, const QString& name)
    {
        QTest::qWait(400);  // layouts and charts settle
        const QPixmap shot = desk.window->grab();
        const QString file = folder_ + "/" + name + suffix_ + ".png";
        QVERIFY2(shot.save(file), qPrintable(file));
        qInfo("saved %s (%dx%d)", qPrintable(file), shot.width(), shot.height());
    }
    void save(const Desk& desk, QWidget& dialog, const QString& name)
    {
        QTest::qWait(400);
        const QPixmap shot = dialog.grab();
        const QString file = folder_ + "/" + name + suffix_ + ".png";
        QVERIFY2(shot.save(file), qPrintable(file));
        qInfo("saved %s (%dx%d) over %s", qPrintable(file), shot.width(), shot.height(),
              qPrintable(desk.window->objectName()));
    }

private slots:
    void initTestCase()
    {
        folder_ = qEnvironmentVariable("SEALTRAIN_SCREENSHOTS", "screenshots");
        suffix_ = qEnvironmentVariable("SEALTRAIN_SCREENSHOT_SUFFIX");
        // Light or dark, as `sealtrain --theme` would (before any window is made).
        const auto theme = gui::parseTheme(qEnvironmentVariable("SEALTRAIN_THEME", "light"));
        QVERIFY(theme.has_value());
        gui::applyTheme(*theme);
        QVERIFY(QDir().mkpath(folder_));
        site_.start();
    }

    // The first run on a workstation: the dialog once the data directory is made.
    void firstRun()
    {
        const std::filesystem::path folder = site_.path("first-run").toStdString();
        Desk desk = testing::GuiSite::openWorkstation(folder, SEALTRAIN_CONTROL_TEST_EXECUTABLE,
                                                      SEALTRAIN_CTL_EXECUTABLE);
        save(desk, "first-run-offered");
        QTest::mouseClick(desk.find<QPushButton>("firstRunButton"), Qt::LeftButton);
        auto* dialog = desk.find<gui::FirstRunDialog>("firstRunDialog");
        desk.find<QLineEdit>("firstRunDataDir")
            ->setText(QString::fromStdString((folder / "data").string()));
        desk.find<QLineEdit>("firstRunAdmin")->setText("ada");
        for (const char* name : {"firstRunPassphrase", "firstRunPassphraseAgain"})
            desk.find<QLineEdit>(name)->setText("a keyring passphrase for the tour");
        for (const char* name : {"firstRunPassword", "firstRunPasswordAgain"})
            desk.find<QLineEdit>(name)->setText("the admin's password for the tour");
        QTest::mouseClick(desk.find<QPushButton>("firstRunCreate"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(dialog->created(), 120000);
        save(desk, *dialog, "first-run-created");
        QTest::mouseClick(desk.find<QPushButton>("firstRunDone"), Qt::LeftButton);
        QTRY_VERIFY(desk.find<QGroupBox>("startBox")->isVisible());
        save(desk, "first-run-start");
    }

    void tour()
    {
        Desk first = site_.open("newcomer");
        save(first, "sign-in-connect");
        site_.connect(first);
        first.find<QLineEdit>("signInUser")->setText("bob");
        QTest::keyClicks(first.find<QLineEdit>("signInPassword"), "not the password");
        QTest::keyClicks(first.find<QLineEdit>("signInTotp"), "123456");
        QTest::mouseClick(first.find<QPushButton>("signInButton"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!first.signInError().isEmpty(), 20000);
        save(first, "sign-in-refused");

        Desk alice = site_.open("alice");
        site_.signIn(alice, "alice");
        QTRY_VERIFY_WITH_TIMEOUT(!alice.find<QLabel>("overviewServer")->text().isEmpty(), 10000);
        save(alice, "overview-admin");
        QVERIFY(alice.window->showScreen("accessPage"));
        auto* access = alice.find<gui::AccessPage>("accessPage");
        QTRY_VERIFY_WITH_TIMEOUT(access->selectUser("bob"), 15000);
        alice.find<QLineEdit>("newUserName")->setText("zoe");
        QTest::mouseClick(alice.find<QPushButton>("createUserButton"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!alice.find<QLineEdit>("accessCode")->text().isEmpty(), 15000);
        QTRY_VERIFY_WITH_TIMEOUT(access->selectUser("zoe"), 15000);
        alice.find<QComboBox>("grantRole")->setCurrentText("engineer");
        alice.find<QLineEdit>("grantProject")->setText("demo");
        save(alice, "access-users");
        {
            // zoe enrols with the code alice just made.
            const QString code = alice.find<QLineEdit>("accessCode")->text();
            Desk zoe = site_.open("zoe");
            site_.connect(zoe);
            QTest::mouseClick(zoe.find<QPushButton>("oneTimeCodeButton"), Qt::LeftButton);
            auto* enrol = zoe.find<gui::EnrolDialog>("enrolDialog");
            zoe.find<QLineEdit>("enrolUser")->setText("zoe");
            zoe.find<QLineEdit>("enrolCode")->setText(code);
            zoe.find<QLineEdit>("enrolPassword")->setText("a passphrase she chose herself");
            zoe.find<QLineEdit>("enrolRepeat")->setText("a passphrase she chose herself");
            QTest::mouseClick(zoe.find<QPushButton>("enrolSubmit"), Qt::LeftButton);
            QTRY_VERIFY_WITH_TIMEOUT(enrol->enrolled(), 15000);
            save(zoe, *enrol, "enrol-qr");
        }
        alice.find<QTabWidget>("accessTabs")->setCurrentIndex(2);
        QTRY_VERIFY_WITH_TIMEOUT(alice.find<QListWidget>("rolePermissions")->count() > 10, 15000);
        save(alice, "access-roles");
        alice.find<QTabWidget>("accessTabs")->setCurrentIndex(3);
        save(alice, "access-sessions");

        // bob's job, submitted through the editor; ann reviews it.
        Desk bob = site_.open("bob");
        site_.signIn(bob, "bob");
        QVERIFY(bob.window->showScreen("jobsPage"));
        auto* jobs = bob.find<gui::JobsPage>("jobsPage");
        bob.find<QPlainTextEdit>("newJobSpec")
            ->setPlainText(QString(testing::kGuiSpec)
                               .arg("fortunes-small")
                               .replace("steps: 10,", "steps: 120,"));
        QTest::mouseClick(bob.find<QPushButton>("submitButton"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(jobs->model().rowCount() == 1, 15000);
        const std::int64_t id = jobs->model().rowAt(0)->id;
        Desk ann = site_.open("ann");
        site_.signIn(ann, "ann");
        QVERIFY(ann.window->showScreen("jobsPage"));
        auto* annJobs = ann.find<gui::JobsPage>("jobsPage");
        QTRY_VERIFY_WITH_TIMEOUT(annJobs->select(id), 15000);
        save(ann, "jobs-review");
        QTest::mouseClick(ann.find<QPushButton>("approveButton"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(annJobs->model().rowAt(0)->state == "queued", 15000);

        // A worker trains it: a falling loss, validations, throughput, log lines.
        testing::TestWorker worker = testing::enrollTestWorker(site_.daemon, "otto", "n1", "cpu");
        auto taken = worker.client->worker().takeJob();
        QVERIFY(taken && taken->has_value());
        api::MetricsReport report;
        report.job = (*taken)->job;
        report.attempt = (*taken)->attempt;
        for (int step = 1; step <= 120; ++step) {
            const double loss = 2.0 + 3.5 * std::exp(-step / 30.0);
            std::string line = "{\"kind\":\"step\",\"step\":" + std::to_string(step)
                               + ",\"loss\":" + std::to_string(loss)
                               + ",\"tok_per_s\":" + std::to_string(5200 + 40 * (step % 7))
                               + ",\"mfu\":" + std::to_string(0.21 + 0.002 * (step % 5));
            if (step % 20 == 0)
                line += ",\"val_loss\":" + std::to_string(loss + 0.12);
            report.metricsLines.push_back(line + "}");
        }
        report.logLines = {"attempt 1 on n1: 1 rank, cpu", "dataset fetched and verified",
                           "trainer started", "step 120 of 10000"};
        report.firstLogLine = 0;
        QVERIFY(worker.client->worker().reportMetrics(report));
        QTRY_COMPARE_WITH_TIMEOUT(jobs->chart().lossPoints(), 120, 20000);
        bob.find<QTabWidget>("jobTabs")->setCurrentIndex(1);
        save(bob, "jobs-metrics");
        bob.find<QTabWidget>("jobTabs")->setCurrentIndex(2);
        save(bob, "jobs-log");
        {
            const trainer::TrainerKeys keys = testing::openJobKeys(*worker.box, **taken);
            for (const std::uint64_t step : {std::uint64_t{60}, std::uint64_t{120}}) {
                const trainer::CheckpointFiles files = testing::writeTestCheckpoint(
                    site_.path("written-" + QString::number(step)).toStdString(), keys, **taken,
                    *worker.signing, step, step, std::to_string(report.job), (*taken)->runId,
                    (*taken)->datasetId);
                QVERIFY(worker.client->worker().uploadCheckpoint(report.job, report.attempt,
                                                                 files.sealed, files.envelope));
            }
            QTRY_COMPARE_WITH_TIMEOUT(jobs->checkpoints().model().rowCount(), 2, 15000);
            bob.find<QTabWidget>("jobTabs")->setCurrentIndex(3);
            bob.find<QTableView>("checkpointsTable")->selectRow(1);
            bob.find<QLineEdit>("checkpointFolder")->setText(site_.path("job-checkpoint"));
            QTest::mouseClick(bob.find<QPushButton>("checkpointDownload"), Qt::LeftButton);
            QTRY_VERIFY2_WITH_TIMEOUT(
                bob.find<QLabel>("checkpointStatus")->text().contains("downloaded"),
                qPrintable(bob.find<QLabel>("checkpointStatus")->text()), 15000);
            save(bob, "jobs-checkpoints");
        }
        // Text from the newest checkpoint (the tour's checkpoints hold random weights).
        bob.find<QTabWidget>("jobTabs")->setCurrentIndex(4);
        bob.find<QSpinBox>("sampleLength")->setValue(48);
        QTest::mouseClick(bob.find<QPushButton>("sampleButton"), Qt::LeftButton);
        QTRY_VERIFY2_WITH_TIMEOUT(bob.find<QLabel>("sampleStatus")->text().contains("at step"),
                                  qPrintable(bob.find<QLabel>("sampleStatus")->text()), 30000);
        save(bob, "jobs-sample");
        bob.find<QTabWidget>("jobTabs")->setCurrentIndex(5);
        auto* newJob = bob.find<gui::NewJobPanel>("newJobPanel");
        bob.find<QPlainTextEdit>("newJobSpec")
            ->setPlainText(
                QString(testing::kGuiSpec).arg("next-one").replace("device: cpu", "device: tpu")
                + "priority: 500\n");
        QVERIFY(!newJob->checkNow());
        save(bob, "jobs-new-problems");
        bob.find<QPlainTextEdit>("newJobSpec")
            ->setPlainText(QString(testing::kGuiSpec).arg("next-one"));
        QVERIFY(newJob->checkNow());
        save(bob, "jobs-new");

        // A second run with a higher learning rate, whose first worker was revoked mid-run and
        // whose second took it over: the Runs screen overlays both and marks the restart.
        const auto stepLines = [](int from, int to, double pace) {
            std::vector<std::string> lines;
            for (int step = from; step <= to; ++step) {
                const double loss = 1.8 + 3.7 * std::exp(-step / pace);
                std::string line = "{\"kind\":\"step\",\"step\":" + std::to_string(step)
                                   + ",\"loss\":" + std::to_string(loss)
                                   + ",\"tok_per_s\":5100,\"mfu\":0.2";
                if (step % 20 == 0)
                    line += ",\"val_loss\":" + std::to_string(loss + 0.1);
                lines.push_back(line + "}");
            }
            return lines;
        };
        auto faster =
            site_.daemon.as("bob")->jobs().submitJob(QString(testing::kGuiSpec)
                                                         .arg("fortunes-faster")
                                                         .replace("steps: 10,", "steps: 120,")
                                                         .toStdString()
                                                     + "optimizer: {lr: 0.003}\n");
        QVERIFY2(faster, faster ? "" : faster.error().message().c_str());
        QVERIFY(site_.daemon.as("ann")->jobs().approveJob(faster->id, faster->specSha256));
        {
            testing::TestWorker lost = testing::enrollTestWorker(site_.daemon, "otto", "n2", "cpu");
            auto taken1 = lost.client->worker().takeJob();
            QVERIFY(taken1 && taken1->has_value());
            api::MetricsReport partial{
                (*taken1)->job, (*taken1)->attempt, stepLines(1, 50, 18.0), {}, 0, 0.0};
            QVERIFY(lost.client->worker().reportMetrics(partial));
            QVERIFY(site_.daemon.as("otto")->workers().revokeWorker("n2", "disk failure"));
            testing::TestWorker resumed =
                testing::enrollTestWorker(site_.daemon, "otto", "n3", "cpu");
            auto second = resumed.client->worker().takeJob();
            QVERIFY(second && second->has_value());
            api::MetricsReport rest{
                (*second)->job, (*second)->attempt, stepLines(1, 120, 18.0), {}, 0, 0.0};
            QVERIFY(resumed.client->worker().reportMetrics(rest));
            QVERIFY(resumed.client->worker().finishJob(rest.job, rest.attempt, true, 0.0, ""));
        }
        QVERIFY(bob.window->showScreen("runsPage"));
        auto* runs = bob.find<gui::RunsPage>("runsPage");
        QTRY_COMPARE_WITH_TIMEOUT(runs->model().rowCount(), 2, 15000);
        QSignalSpy compared(runs, &gui::RunsPage::compareShown);
        QVERIFY(runs->choose({id, faster->id}));
        QTRY_COMPARE_WITH_TIMEOUT(compared.count(), 1, 15000);
        QCOMPARE(runs->chart().restartMarkers(), 1);
        save(bob, "runs-compare");
        bob.find<QTabWidget>("runTabs")->setCurrentIndex(1);
        save(bob, "runs-attempts");

        // A job whose two checkpoints bob registers as version 1 of "fortunes": ann approved its
        // promotion to production; staging and an export wait for a second person.
        {
            auto trained = site_.daemon.as("bob")->jobs().submitJob(
                QString(testing::kGuiSpec).arg("fortunes-registered").toStdString());
            QVERIFY2(trained, trained ? "" : trained.error().message().c_str());
            QVERIFY(site_.daemon.as("ann")->jobs().approveJob(trained->id, trained->specSha256));
            testing::TestWorker node = testing::enrollTestWorker(site_.daemon, "otto", "n4", "cpu");
            auto assigned = node.client->worker().takeJob();
            QVERIFY(assigned && assigned->has_value());
            const trainer::TrainerKeys keys = testing::openJobKeys(*node.box, **assigned);
            std::optional<trainer::CheckpointReference> parent;
            for (const std::uint64_t step : {2U, 4U}) {
                auto written = testing::writeChainedTestCheckpoint(
                    site_.path("tour-" + QString::number(step)).toStdString(), keys, **assigned,
                    *node.signing, step, step, std::to_string(trained->id), (*assigned)->runId,
                    (*assigned)->datasetId, parent);
                parent = written.reference;
                QVERIFY(node.client->worker().uploadCheckpoint(trained->id, (*assigned)->attempt,
                                                               written.files.sealed,
                                                               written.files.envelope));
            }
            QVERIFY(
                node.client->worker().finishJob(trained->id, (*assigned)->attempt, true, 0.0, ""));
            auto bobClient = site_.daemon.as("bob");
            auto version = bobClient->registry().registerModel("fortunes", "4 steps on the notes",
                                                               trained->id, 0);
            QVERIFY2(version, version ? "" : version.error().message().c_str());
            auto production =
                bobClient->registry().requestPromotion("fortunes", 1, "production", "validated");
            QVERIFY(production);
            QVERIFY(site_.daemon.as("ann")->registry().approvePromotion(production->id,
                                                                        version->digest));
            QVERIFY(
                bobClient->registry().requestPromotion("fortunes", 1, "staging", "for the pilot"));
            QVERIFY(bobClient->registry().requestExport("fortunes@1", "for the partner lab"));
        }
        QVERIFY(bob.window->showScreen("modelsPage"));
        auto* models = bob.find<gui::ModelsPage>("modelsPage");
        QTRY_COMPARE_WITH_TIMEOUT(models->model().rowCount(), 1, 15000);
        QSignalSpy drawn(models, &gui::ModelsPage::lineageShown);
        QVERIFY(models->choose("fortunes"));
        QTRY_COMPARE_WITH_TIMEOUT(drawn.count(), 1, 15000);
        save(bob, "models-versions");
        bob.find<QTabWidget>("modelTabs")->setCurrentIndex(1);
        bob.find<QTableWidget>("modelPromotions")->selectRow(1);
        save(bob, "models-promotions");
        bob.find<QTabWidget>("modelTabs")->setCurrentIndex(3);
        save(bob, "models-lineage");
        // Importing a base model: a folder without the model's files, refused in a sentence.
        {
            gui::ImportModelDialog* dialog = models->openImport();
            QVERIFY(QDir().mkpath(site_.path("downloads")));
            dialog->findChild<QLineEdit*>("importModelFolder")->setText(site_.path("downloads"));
            dialog->findChild<QLineEdit*>("importModelName")->setText("gpt2-base");
            dialog->findChild<QLineEdit*>("importModelProject")->setText("demo");
            dialog->findChild<QLineEdit*>("importModelDescription")
                ->setText("OpenAI's GPT-2 small, from the Hugging Face hub");
            QTest::mouseClick(dialog->findChild<QPushButton*>("importModelButton"), Qt::LeftButton);
            QTRY_VERIFY_WITH_TIMEOUT(!dialog->busy(), 30000);
            save(bob, *dialog, "models-import");
            dialog->reject();
        }
        // ann, an approver, sees the export bob asked for, with its decision buttons.
        QVERIFY(ann.window->showScreen("modelsPage"));
        auto* annModels = ann.find<gui::ModelsPage>("modelsPage");
        QTRY_COMPARE_WITH_TIMEOUT(annModels->model().rowCount(), 1, 15000);
        QVERIFY(annModels->choose("fortunes"));
        QTRY_VERIFY_WITH_TIMEOUT(
            annModels->shown().has_value() && annModels->shown()->exports.size() == 1, 15000);
        ann.find<QTabWidget>("modelTabs")->setCurrentIndex(2);
        ann.find<QTableWidget>("modelExports")->selectRow(0);
        QVERIFY(ann.find<QPushButton>("approveExportButton")->isVisible());
        save(ann, "models-exports");

        // A GPU job waiting for approval holds most of the demo budget: bob's overview says so.
        QVERIFY(site_.daemon.as("bob")->jobs().submitJob(
            "spec_version: 1\nname: gpu-run\nproject: demo\ndataset: notes\n"
            "model: {layers: 1, heads: 1, width: 8, context: 8}\nschedule: {steps: 10}\n"
            "resources: {pool: gpu, device: cuda, gpus_per_node: 1}\nlimits: {gpu_hours: 8.5}\n"));
        QVERIFY(bob.window->showScreen("overviewPage"));
        QTRY_VERIFY_WITH_TIMEOUT(
            bob.window->findChild<QLabel*>("budgetText_demo") != nullptr
                && bob.find<QLabel>("budgetText_demo")->text().contains("8.50"),
            15000);
        save(bob, "overview-engineer");

        // A second version of notes: bob's Datasets screen draws both, and his jobs on the first.
        {
            const QString text = site_.path("notes-2.txt");
            std::ofstream(text.toStdString()) << "the first note, revised\n\nand a third note\n";
            api::ImportSettings settings;
            settings.name = "notes";
            settings.format = "text-records";
            auto sam = site_.daemon.as("sam");
            QVERIFY(sam->datasets().importDataset(
                settings,
                {{text.toStdString(), "notes.txt", std::filesystem::file_size(text.toStdString())}},
                {}));
            QVERIFY(sam->datasets().grantRead("notes", "bob"));
        }
        QVERIFY(bob.window->showScreen("datasetsPage"));
        auto* bobsDatasets = bob.find<gui::DatasetsPage>("datasetsPage");
        QTRY_COMPARE_WITH_TIMEOUT(bobsDatasets->model().rowCount(), 2, 15000);
        for (int row = 0; row < bobsDatasets->model().rowCount(); ++row)
            if (bobsDatasets->model().rowAt(row)->version == 2)
                bob.find<QTableView>("datasetsTable")->selectRow(row);
        QTRY_VERIFY_WITH_TIMEOUT(
            bob.find<gui::LineageView>("datasetLineage")->lineage().nodes.size() == 6, 15000);
        save(bob, "datasets-lineage");

        Desk sam = site_.open("sam");
        site_.signIn(sam, "sam");
        QVERIFY(sam.window->showScreen("datasetsPage"));
        auto* datasets = sam.find<gui::DatasetsPage>("datasetsPage");
        QTRY_COMPARE_WITH_TIMEOUT(datasets->model().rowCount(), 2, 15000);  // notes v1 and v2
        {
            const QString corpus = site_.path("clinic-letters.txt");
            std::ofstream(corpus.toStdString())
                << "Dear patient, your appointment moved to May.\n\nCall 555-0100 or write to "
                   "desk@example.org.\n\nDear patient, your appointment moved to May.\n";
            QTest::mouseClick(sam.find<QPushButton>("importDatasetButton"), Qt::LeftButton);
            auto* wizard = sam.find<gui::ImportWizard>("importWizard");
            QVERIFY(wizard->addFile(corpus));
            save(sam, *wizard, "datasets-import-files");
            QTest::mouseClick(wizard->button(QWizard::NextButton), Qt::LeftButton);
            auto* format = sam.find<QComboBox>("importFormat");
            format->setCurrentIndex(format->findData("text-records"));
            sam.find<QComboBox>("importClassification")->setCurrentText("phi");
            sam.find<QCheckBox>("importRedactPii")->setChecked(true);
            save(sam, *wizard, "datasets-import-settings");
            QTest::mouseClick(wizard->button(QWizard::NextButton), Qt::LeftButton);
            QTRY_VERIFY_WITH_TIMEOUT(sam.find<QLabel>("importResult")->text().contains("Imported"),
                                     30000);
            save(sam, *wizard, "datasets-import-report");
            QTest::mouseClick(wizard->button(QWizard::FinishButton), Qt::LeftButton);
            QTRY_COMPARE_WITH_TIMEOUT(datasets->model().rowCount(), 3, 15000);
        }
        sam.find<QTableView>("datasetsTable")->selectRow(0);
        QTRY_VERIFY_WITH_TIMEOUT(sam.find<QLabel>("datasetDetails")->text().contains("Readers"),
                                 15000);
        save(sam, "datasets");

        Desk otto = site_.open("otto");
        site_.signIn(otto, "otto");
        QVERIFY(otto.window->showScreen("workersPage"));
        auto* workers = otto.find<gui::WorkersPage>("workersPage");
        QTRY_VERIFY_WITH_TIMEOUT(workers->model().rowCount() == 4, 15000);  // n2 revoked
        otto.find<QLineEdit>("workerName")->setText("node-2");
        otto.find<QLineEdit>("workerPool")->setText("h200");
        QTest::mouseClick(otto.find<QPushButton>("enrollTokenButton"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!otto.find<QLineEdit>("enrollToken")->text().isEmpty(), 15000);
        save(otto, "workers");

        Desk rita = site_.open("rita");
        site_.signIn(rita, "rita");
        QVERIFY(rita.window->showScreen("auditPage"));
        auto* audit = rita.find<gui::AuditPage>("auditPage");
        QTRY_VERIFY_WITH_TIMEOUT(audit->model().rowCount() > 20, 15000);
        QTest::mouseClick(rita.find<QPushButton>("auditVerifyLive"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(rita.find<QLabel>("auditVerdict")->text().startsWith("VERIFIED"),
                                 30000);
        save(rita, "audit");

        // Her overview: the newest signed head, checked with the audit key.
        QVERIFY(rita.window->showScreen("overviewPage"));
        QTRY_VERIFY_WITH_TIMEOUT(
            rita.find<QLabel>("overviewAuditHead")->text().contains("entries, signed"), 15000);
        save(rita, "overview-auditor");
        QVERIFY(rita.window->showScreen("auditPage"));

        // Her own password, from the sidebar: two different new ones refused in the dialog.
        QTest::mouseClick(rita.find<QPushButton>("changePasswordButton"), Qt::LeftButton);
        auto* password = rita.find<QDialog>("passwordDialog");
        QTest::keyClicks(rita.find<QLineEdit>("currentPassword"), "the current one");
        QTest::keyClicks(rita.find<QLineEdit>("newPassword"), "a long new passphrase");
        QTest::keyClicks(rita.find<QLineEdit>("newPasswordAgain"), "a long new passphrase!");
        QTest::mouseClick(rita.find<QPushButton>("changePasswordSubmit"), Qt::LeftButton);
        save(rita, *password, "password");
        password->reject();

        // Her two-factor, moved: the new secret shown once, waiting for a code from it.
        QTest::mouseClick(rita.find<QPushButton>("changeTotpButton"), Qt::LeftButton);
        auto* totp = rita.find<QDialog>("totpDialog");
        QTest::keyClicks(rita.find<QLineEdit>("totpPassword"), testing::kDaemonPassword);
        QTest::keyClicks(rita.find<QLineEdit>("totpCurrentCode"),
                         QString::fromStdString(site_.daemon.code("rita")));
        QTest::mouseClick(rita.find<QPushButton>("totpStart"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(rita.find<QLabel>("totpQr")->isVisible(), 20000);
        save(rita, *totp, "totp-change");
        totp->reject();

        // Her compliance report, a control's cited entries, and the audit trail's health.
        QVERIFY(rita.window->showScreen("operationsPage"));
        auto* operations = rita.find<QTabWidget>("operationsTabs");
        operations->setCurrentWidget(rita.find<QWidget>("complianceTab"));
        const QString pdf = site_.path("compliance" + suffix_ + ".pdf");
        rita.find<QLineEdit>("compliancePdfPath")->setText(pdf);
        QTest::mouseClick(rita.find<QPushButton>("complianceMakeButton"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(
            rita.find<QLabel>("complianceSummary")->text().contains("controls passed"), 30000);
        auto& controls = rita.window->findChild<gui::ComplianceTab*>()->controls();
        for (int row = 0; row < controls.rowCount(); ++row)
            if (controls.index(row, gui::ComplianceTableModel::Cited).data().toInt() > 1) {
                rita.find<QTableView>("complianceTable")->selectRow(row);
                break;
            }
        save(rita, "operations-compliance");
        operations->setCurrentWidget(rita.find<QWidget>("trailTab"));
        QTRY_VERIFY_WITH_TIMEOUT(!rita.find<QLabel>("trailKind")->text().isEmpty(), 15000);
        save(rita, "operations-trail");

        rita.window->lock();
        QTRY_VERIFY_WITH_TIMEOUT(rita.window->locked(), 10000);
        save(rita, "locked");

        // The admin's backup, taken, verified, and noted as the last one.
        Desk admin = site_.open("alice", {}, SEALTRAIN_CONTROL_EXECUTABLE);
        site_.signIn(admin, "alice");
        QVERIFY(admin.window->showScreen("operationsPage"));
        admin.find<QLineEdit>("backupPath")
            ->setText(site_.path("sealtrain-2026-12-07" + suffix_ + ".tar"));
        QTest::mouseClick(admin.find<QPushButton>("backupTakeButton"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(admin.find<QLabel>("backupStatus")->text().startsWith("Wrote"),
                                 30000);
        QTest::mouseClick(admin.find<QPushButton>("backupVerifyButton"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(admin.find<QLabel>("backupStatus")->text().startsWith("VERIFIED"),
                                 30000);
        save(admin, "operations-backup");
    }

    void cleanupTestCase()
    {
        gui::callPool().waitForDone(30000);
        QVERIFY(site_.daemon.stop());
    }
};

QTEST_MAIN(GuiTour)
#include "gui_tour.moc"
