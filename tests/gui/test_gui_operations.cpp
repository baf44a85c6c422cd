// The Operations screen (issue #51, item 2), driven by objectName against a real
// sealtrain-control: a backup taken into a file, noted as the last one, verified against the
// platform's audit key, a changed copy failing, the note saying when the archive is gone; the
// compliance report written as PDF, evidence bundle and JSON, the bundle verifying under the
// platform's key, an existing file refused before anything is asked, the entries a control
// cites shown from the bundle; the audit trail's forwarding and witnesses; each tab only for
// those who may use it.
#include "gui_site.h"

#include "audit/audit_table_model.h"
#include "operations/backup_tab.h"
#include "operations/compliance_tab.h"
#include "operations/operations_page.h"
#include "operations/trail_tab.h"

#include "compliance_report.h"
#include "sealtrain/api/backup_record.h"
#include "sealtrain/audit/bundle.h"
#include "sealtrain/base/byte_io.h"

#include <nlohmann/json.hpp>

#include <QCheckBox>
#include <QDateEdit>
#include <QTabWidget>
#include <QTableView>
#include <QtTest/QtTest>

#include <algorithm>
#include <filesystem>
#include <fstream>

using namespace sealtrain;

namespace {

// The tab titles `tabs` shows, mnemonics stripped.
QStringList shownTabs(const QTabWidget& tabs)
{
    QStringList titles;
    for (int i = 0; i < tabs.count(); ++i)
        if (tabs.isTabVisible(i))
            titles << tabs.tabText(i).remove('&');
    return titles;
}

std::string fileText(const QString& path)
{
    return readWholeFile(path.toStdString()).value();
}

}  // namespace

class TestGuiOperations : public QObject {
    Q_OBJECT

    testing::GuiSite site_;

    testing::Desk signedIn(const std::string& user)
    {
        testing::Desk desk = site_.open(user, {}, SEALTRAIN_CONTROL_EXECUTABLE);
        site_.signIn(desk, user);
        return desk;
    }

private slots:
    void initTestCase() { site_.start(); }
    void cleanupTestCase() { QVERIFY(site_.daemon.stop()); }

    // Each tab for those who may use it: the admin backs up, the auditor reports and watches the
    // trail, an engineer has no Operations screen at all.
    void tabsByPermission()
    {
        testing::Desk alice = signedIn("alice");
        QVERIFY(alice.window->screens().contains("operationsPage"));
        QCOMPARE(shownTabs(*alice.find<QTabWidget>("operationsTabs")), QStringList{"Backup"});
        testing::Desk rita = signedIn("rita");
        QCOMPARE(shownTabs(*rita.find<QTabWidget>("operationsTabs")),
                 (QStringList{"Compliance", "Audit trail"}));
        testing::Desk bob = signedIn("bob");
        QVERIFY(!bob.window->screens().contains("operationsPage"));
    }

    // A backup taken into a file the admin chose, with its facts; noted as the last one (the
    // note sealtrainctl reads too); verified against the platform's audit key; a copy changed in
    // one byte fails; a path that exists is refused and left as it was; a moved archive warns.
    void backupTakenVerifiedAndNoted()
    {
        testing::Desk alice = signedIn("alice");
        QVERIFY(alice.window->showScreen("operationsPage"));
        auto* last = alice.find<QLabel>("backupLast");
        QVERIFY2(last->text().contains("No backup was taken"), qPrintable(last->text()));

        const QString taken = site_.path("gui-backup.tar");
        const QString occupied = site_.path("occupied.tar");
        std::ofstream(occupied.toStdString()) << "not a backup\n";
        alice.find<QLineEdit>("backupPath")->setText(occupied);
        QTest::mouseClick(alice.find<QPushButton>("backupTakeButton"), Qt::LeftButton);
        auto* status = alice.find<QLabel>("backupStatus");
        // Refused before the control plane is asked to write anything.
        QVERIFY(!alice.window->findChild<gui::BackupTab*>()->busy());
        QVERIFY2(status->text().contains("exists already"), qPrintable(status->text()));
        QCOMPARE(fileText(occupied), std::string("not a backup\n"));

        alice.find<QLineEdit>("backupPath")->setText(taken);
        QTest::mouseClick(alice.find<QPushButton>("backupTakeButton"), Qt::LeftButton);
        QTRY_VERIFY2_WITH_TIMEOUT(status->text().startsWith("Wrote"), qPrintable(status->text()),
                                  30000);
        QVERIFY(std::filesystem::is_regular_file(taken.toStdString()));
        QVERIFY2(last->text().contains(taken) && last->text().contains("ago"),
                 qPrintable(last->text()));
        const auto noted = api::lastBackup(alice.session->profile());
        QVERIFY(noted && noted->has_value());
        QCOMPARE((*noted)->archive.string(), taken.toStdString());
        QCOMPARE((*noted)->facts.bytes, std::filesystem::file_size(taken.toStdString()));

        // An empty field verifies the last one.
        QTest::mouseClick(alice.find<QPushButton>("backupVerifyButton"), Qt::LeftButton);
        QTRY_VERIFY2_WITH_TIMEOUT(status->text().startsWith("VERIFIED " + taken),
                                  qPrintable(status->text()), 30000);

        // One byte changed in a copy, near the end where the members are.
        const QString changed = site_.path("changed.tar");
        std::string bytes = fileText(taken);
        bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x01);
        std::ofstream(changed.toStdString(), std::ios::binary) << bytes;
        alice.find<QLineEdit>("backupVerifyPath")->setText(changed);
        QTest::mouseClick(alice.find<QPushButton>("backupVerifyButton"), Qt::LeftButton);
        QTRY_VERIFY2_WITH_TIMEOUT(status->text().startsWith("FAILED " + changed),
                                  qPrintable(status->text()), 30000);

        // Moved away: the note says so.
        std::filesystem::rename(taken.toStdString(), site_.path("moved.tar").toStdString());
        QVERIFY(alice.window->showScreen("operationsPage"));
        QVERIFY2(last->text().contains("no longer there"), qPrintable(last->text()));
    }

    // How old the last backup may get before the tab warns.
    void lastBackupWarnsWhenOldOrGone()
    {
        const QString archive = site_.path("present.tar");
        std::ofstream(archive.toStdString()) << "x";
        api::BackupRecord record;
        record.archive = archive.toStdString();
        record.takenUnix = 1'000'000;
        const std::int64_t day = std::int64_t{24} * 3600;
        QVERIFY(!gui::BackupTab::lastText(record, record.takenUnix + 6 * day).warns);
        const auto old = gui::BackupTab::lastText(record, record.takenUnix + 8 * day);
        QVERIFY(old.warns);
        QVERIFY2(old.text.contains("8 days ago") && old.text.contains("over a week"),
                 qPrintable(old.text));
        record.archive = site_.path("absent.tar").toStdString();
        QVERIFY(gui::BackupTab::lastText(record, record.takenUnix + 60).warns);
        QVERIFY(gui::BackupTab::lastText(std::nullopt, 0).warns);
    }

    // The report written as PDF, evidence bundle and JSON; the bundle verifies under the
    // platform's audit key and holds exactly the entries cited; a chosen control's cited entries
    // listed; the same files again refused before the control plane is asked.
    void complianceReportWritten()
    {
        testing::Desk rita = signedIn("rita");
        QVERIFY(rita.window->showScreen("operationsPage"));
        auto* tabs = rita.find<QTabWidget>("operationsTabs");
        tabs->setCurrentWidget(rita.find<QWidget>("complianceTab"));
        auto* summary = rita.find<QLabel>("complianceSummary");

        // A period that ends before it begins is refused on the form.
        rita.find<QCheckBox>("complianceFromOn")->setChecked(true);
        rita.find<QCheckBox>("complianceToOn")->setChecked(true);
        rita.find<QDateEdit>("complianceFrom")->setDate(QDate(2026, 12, 1));
        rita.find<QDateEdit>("complianceTo")->setDate(QDate(2026, 11, 1));
        const QString pdf = site_.path("compliance.pdf");
        rita.find<QLineEdit>("compliancePdfPath")->setText(pdf);
        QTest::mouseClick(rita.find<QPushButton>("complianceMakeButton"), Qt::LeftButton);
        QVERIFY2(summary->text().contains("ends before it begins"), qPrintable(summary->text()));
        rita.find<QCheckBox>("complianceFromOn")->setChecked(false);
        rita.find<QCheckBox>("complianceToOn")->setChecked(false);

        rita.find<QCheckBox>("complianceJson")->setChecked(true);
        QTest::mouseClick(rita.find<QPushButton>("complianceMakeButton"), Qt::LeftButton);
        QTRY_VERIFY2_WITH_TIMEOUT(summary->text().contains("controls passed"),
                                  qPrintable(summary->text()), 30000);
        const QString bundle = site_.path("compliance.bundle");
        const QString json = site_.path("compliance.json");
        QVERIFY(fileText(pdf).starts_with("%PDF-"));
        const auto keys = site_.daemon.as("rita")->platform().signingKeys();
        QVERIFY(keys.ok());
        const auto verified =
            audit::verifyBundle(fileText(bundle), {keys->auditPem, std::nullopt, true});
        QVERIFY2(verified.verdict() == audit::Verdict::Verified,
                 verified.errors.empty() ? "unconfirmed" : verified.errors.front().c_str());
        const auto document = nlohmann::json::parse(fileText(json));
        QCOMPARE(document.at("format").get<std::string>(),
                 std::string("sealtrain-compliance-report/1"));
        auto& controls = rita.window->findChild<gui::ComplianceTab*>()->controls();
        QCOMPARE(static_cast<std::size_t>(controls.rowCount()), document.at("controls").size());

        // A control that cites entries: its entries listed, exactly those, from the bundle.
        int citing = -1;
        for (int row = 0; row < controls.rowCount() && citing < 0; ++row)
            if (!report::citedBy(*controls.rowAt(row)).empty())
                citing = row;
        QVERIFY(citing >= 0);
        auto* table = rita.find<QTableView>("complianceTable");
        table->setCurrentIndex(controls.index(citing, 0));
        const std::vector<std::uint64_t> wanted = report::citedBy(*controls.rowAt(citing));
        const auto& cited = rita.window->findChild<gui::ComplianceTab*>()->cited();
        QCOMPARE(static_cast<std::size_t>(cited.rowCount()), wanted.size());
        for (int row = 0; row < cited.rowCount(); ++row)
            QVERIFY(std::binary_search(wanted.begin(), wanted.end(), cited.rowAt(row)->sequence));

        // The same files again: refused on the form, the first report untouched.
        const std::string before = fileText(bundle);
        rita.find<QLineEdit>("compliancePdfPath")->setText(pdf);
        QTest::mouseClick(rita.find<QPushButton>("complianceMakeButton"), Qt::LeftButton);
        QVERIFY2(summary->text().contains("exists already"), qPrintable(summary->text()));
        QCOMPARE(fileText(bundle), before);
    }

    // The trail: the site forwards to a file and keeps no witness outside; a failing target and
    // a missing witness are each said in red.
    void auditTrailHealth()
    {
        testing::Desk rita = signedIn("rita");
        QVERIFY(rita.window->showScreen("operationsPage"));
        QTRY_COMPARE_WITH_TIMEOUT(rita.find<QLabel>("trailKind")->text(), QString("file"), 15000);
        QVERIFY(QRegularExpression("^\\d+ of \\d+ entries$")
                    .match(rita.find<QLabel>("trailDelivered")->text())
                    .hasMatch());
        QCOMPARE(rita.find<QLabel>("trailVerdict")->text(),
                 QString("No witness outside the data directory."));

        auto& trail = *rita.window->findChild<gui::TrailTab*>();
        api::ServerInfoView info;
        info.auditWitnessesOutside = 2;
        api::AuditForwardingView forwarding;
        forwarding.kind = "syslog-tls";
        forwarding.delivered = 90;
        forwarding.logSize = 100;
        forwarding.headSize = 80;
        forwarding.lastDeliveryUnix = 1'000'000;
        info.auditForwarding = forwarding;
        trail.show(info, 1'000'000 + 300);
        QCOMPARE(rita.find<QLabel>("trailVerdict")->text(),
                 QString("Forwarded, and witnessed outside the data directory."));
        QCOMPARE(rita.find<QLabel>("trailBehind")->text(), QString("10 entries"));
        QVERIFY(rita.find<QLabel>("trailLastDelivery")->text().startsWith("5 min ago"));
        info.auditForwarding->failingSinceUnix = 1'000'000 + 60;
        info.auditForwarding->failures = 7;
        trail.show(info, 1'000'000 + 4 * 3600);
        QCOMPARE(rita.find<QLabel>("trailVerdict")->text(), QString("Forwarding fails."));
        QVERIFY2(rita.find<QLabel>("trailFailing")->text().contains("7 failures"),
                 qPrintable(rita.find<QLabel>("trailFailing")->text()));
        info.auditForwarding.reset();
        trail.show(info, 0);
        QCOMPARE(rita.find<QLabel>("trailVerdict")->text(), QString("Not forwarded."));
    }
};

QTEST_MAIN(TestGuiOperations)
#include "test_gui_operations.moc"
