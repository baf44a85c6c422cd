// The client library's workstation launcher (api/local_control.h, issue #28 item 3): it starts
// sealtrain-control on a local data directory with the passphrase on a pipe, on a Unix socket in
// a folder of this user's alone, and stops it on request. Tried as a client would use it: the
// daemon serves the pinned CA on the socket, the passphrase is nowhere in its argv or environment,
// a wrong passphrase or a shared folder starts nothing, and a second daemon on the same data
// directory is refused while the first one serves.
#include "daemon_fixture.h"
#include "sealtrain/api/client.h"
#include "sealtrain/api/local_control.h"
#include "sealtrain/crypto/certificate_authority.h"

#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

using namespace sealtrain;
namespace fs = std::filesystem;

namespace {

}  // namespace

class TestApiLocalControl : public QObject {
    Q_OBJECT

private:
    QTemporaryDir dir_;
    testing::DaemonFixture daemon_;  // only its data directory: this test starts the daemon
    fs::path root_;

    [[nodiscard]] api::LocalControlOptions options(const std::string& runFolder) const
    {
        api::LocalControlOptions local;
        local.executable = SEALTRAIN_CONTROL_TEST_EXECUTABLE;
        local.dataDir = daemon_.dataDir();
        local.runFolder = root_ / runFolder;
        return local;
    }

private slots:
    void initTestCase()
    {
        QVERIFY(dir_.isValid());
        root_ = dir_.path().toStdString();
        daemon_.create(root_, "alice", {});
    }

    void startsServesAndStops()
    {
        auto plane = api::LocalControlPlane::start(options("run"),
                                                   testing::secret(testing::kDaemonPassphrase));
        QVERIFY2(plane, plane ? "" : plane.error().message().c_str());
        QCOMPARE(plane->endpoint(), "unix:" + (root_ / "run" / "control.sock").string());
        struct stat folder {};
        QCOMPARE(::stat((root_ / "run").c_str(), &folder), 0);
        QCOMPARE(folder.st_mode & 0777U, 0700U);

        // It serves: the CA it presents on the socket is the data directory's.
        const std::string fingerprint = crypto::certificateFingerprint(daemon_.caPem()).value();
        auto ca = api::fetchPinnedCaCertificate(plane->endpoint(), "localhost", fingerprint);
        QVERIFY2(ca, ca ? "" : ca.error().message().c_str());

        // The passphrase is in neither its arguments nor its environment.
        const fs::path proc = "/proc/" + std::to_string(plane->pid());
        for (const char* file : {"cmdline", "environ"})
            QVERIFY(testing::fileText(proc / file).find(testing::kDaemonPassphrase)
                    == std::string::npos);

        // A second control plane on the same data directory is refused, and leaves none running.
        auto second = api::LocalControlPlane::start(options("run-2"),
                                                    testing::secret(testing::kDaemonPassphrase));
        QVERIFY(!second);
        QCOMPARE(second.error().code(), ErrorCode::Io);
        QVERIFY2(isOneSentence(second.error().message()), second.error().message().c_str());

        QVERIFY2(plane->stop(), "the daemon did not stop cleanly");
        QVERIFY(!fs::exists(proc));
        QVERIFY(plane->stop());  // stopping again is no error
    }

    void aWrongPassphraseStartsNothing()
    {
        auto plane = api::LocalControlPlane::start(options("run-wrong"),
                                                   testing::secret("not the passphrase at all"));
        QVERIFY(!plane);
        QCOMPARE(plane.error().code(), ErrorCode::Io);
        QVERIFY2(plane.error().message().find("passphrase") != std::string::npos,
                 plane.error().message().c_str());
        QVERIFY2(isOneSentence(plane.error().message()), plane.error().message().c_str());
    }

    void aFolderOthersMayEnterIsRefused()
    {
        const fs::path shared = root_ / "shared";
        fs::create_directories(shared);
        fs::permissions(shared,
                        fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec);
        auto plane = api::LocalControlPlane::start(options("shared"),
                                                   testing::secret(testing::kDaemonPassphrase));
        QVERIFY(!plane);
        QCOMPARE(plane.error().code(), ErrorCode::PermissionDenied);
        QVERIFY2(isOneSentence(plane.error().message()), plane.error().message().c_str());
        QVERIFY(!fs::exists(shared / "control.sock"));
    }
};

QTEST_GUILESS_MAIN(TestApiLocalControl)
#include "test_api_local_control.moc"
