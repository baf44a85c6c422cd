// The client library's profile (api/profile.h, issue #28 item 3), as a client uses it on a
// workstation: the profile names a data directory, starts its control plane (left running, in a
// session of its own, its messages in the run folder's log), signs a user in and keeps their key
// private, chooses whose session a command uses, signs out and stops the control plane. Tried as
// an attacker would: a user name that reaches outside the folder, a profile folder others may
// read, a stale ready file naming another program (which must not be signalled), an expired
// certificate (which must say "sign in again", not "cannot reach").
#include "daemon_fixture.h"
#include "sealtrain/api/profile.h"
#include "sealtrain/base/byte_io.h"
#include "sealtrain/crypto/certificate_authority.h"

#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

using namespace sealtrain;
namespace fs = std::filesystem;

namespace {

unsigned modeOf(const fs::path& path)
{
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0)
        return 0;
    return info.st_mode & 0777U;
}

// The session id (sixth field of /proc/PID/stat, after the command in parentheses).
long sessionOf(pid_t pid)
{
    const std::string stat = testing::fileText("/proc/" + std::to_string(pid) + "/stat");
    std::istringstream fields(stat.substr(stat.rfind(')') + 2));
    std::string state;
    long parent = 0;
    long group = 0;
    long session = 0;
    fields >> state >> parent >> group >> session;
    return session;
}

}  // namespace

class TestApiProfile : public QObject {
    Q_OBJECT

private:
    QTemporaryDir dir_;
    testing::DaemonFixture daemon_;  // its data directory only: the profile starts the daemon
    fs::path root_;

    [[nodiscard]] api::Workstation workstation() const
    {
        return {daemon_.dataDir(), root_ / "run"};
    }

private slots:
    void initTestCase()
    {
        QVERIFY(dir_.isValid());
        root_ = dir_.path().toStdString();
        daemon_.create(root_, "alice", {{"bob", "engineer"}});
        ::unsetenv(api::kUserEnvironment);
    }

    void aFreshProfileSaysWhatToDo()
    {
        api::Profile profile(root_ / "fresh");
        auto endpoint = profile.endpoint();
        QVERIFY(!endpoint);
        QCOMPARE(endpoint.error().code(), ErrorCode::NotFound);
        QVERIFY(endpoint.error().message().find("sealtrainctl init") != std::string::npos);
        QVERIFY(isOneSentence(endpoint.error().message()));
        auto user = profile.chooseUser("");
        QVERIFY(!user);
        QVERIFY(user.error().message().find("sign-in") != std::string::npos);
        QVERIFY(!profile.workstationPid());
        auto stopped = profile.stopWorkstation();
        QVERIFY(!stopped);
        QCOMPARE(stopped.error().code(), ErrorCode::NotFound);
        QVERIFY(isOneSentence(stopped.error().message()));
        // Not a data directory: nothing is written.
        auto named = profile.useWorkstation({root_ / "nowhere", root_ / "run"});
        QVERIFY(!named);
        QVERIFY(named.error().message().find("sealtrainctl init") != std::string::npos);
    }

    // A user name is a file name in the folder: one that reaches outside it is refused before
    // anything is read or written.
    void aUserNameCannotLeaveTheFolder()
    {
        api::Profile profile(root_ / "names");
        QVERIFY(profile.useWorkstation(workstation()));
        fs::create_directories(root_ / "outside");
        std::ofstream(root_ / "outside" / "x.key") << "not a key";
        std::ofstream(root_ / "outside" / "x.crt") << "not a certificate";
        for (const std::string& name :
             std::vector<std::string>{"../outside/x", "Alice", "", "a/b", std::string(65, 'a')}) {
            auto client = profile.client(name);
            QVERIFY2(!client, name.c_str());
            QCOMPARE(client.error().code(), ErrorCode::InvalidArgument);
            QVERIFY(isOneSentence(client.error().message()));
            auto signedIn =
                profile.signIn(name, testing::secret(testing::kDaemonPassword), "000000");
            QVERIFY(!signedIn);
            QCOMPARE(signedIn.error().code(), ErrorCode::InvalidArgument);
        }
    }

    // The folder holds private keys: made 0700, and refused when others may enter it.
    void theFolderIsPrivate()
    {
        api::Profile profile(root_ / "private");
        QVERIFY(profile.useWorkstation(workstation()));
        QCOMPARE(modeOf(root_ / "private"), 0700U);
        fs::permissions(root_ / "private", fs::perms::group_read | fs::perms::group_exec,
                        fs::perm_options::add);
        auto again = profile.useWorkstation(workstation());
        QVERIFY(!again);
        QCOMPARE(again.error().code(), ErrorCode::PermissionDenied);
        QVERIFY(again.error().message().find("chmod 700") != std::string::npos);
        QVERIFY(isOneSentence(again.error().message()));
    }

    // An expired certificate is not sent (the handshake would fail like a network error): the
    // client is told to sign in again.
    void anExpiredSessionSaysSignInAgain()
    {
        api::Profile profile(root_ / "expired");
        QVERIFY(profile.useWorkstation(workstation()));
        {
            auto platform = core::DataDirectory::open(daemon_.dataDir(), testing::daemonUnlock());
            QVERIFY(platform);
            auto keyAndCsr = crypto::makeKeyAndCsr("bob").value();
            crypto::IssueRequest issue;
            issue.csrPem = keyAndCsr.csrPem;
            issue.commonName = "bob";
            issue.purpose = crypto::CertificatePurpose::Client;
            issue.validFor = std::chrono::seconds(1);  // from five minutes ago: expired
            auto certificate = (*platform)->certificateAuthority().issue(issue);
            QVERIFY(certificate);
            QVERIFY(writeFileAtomically(root_ / "expired" / "bob.key",
                                        keyAndCsr.privateKeyPem.bytes(),
                                        AtomicFileSink::Overwrite::Allow));
            std::ofstream(root_ / "expired" / "bob.crt") << *certificate;
        }
        QCOMPARE(profile.sessions().size(), std::size_t{1});
        QCOMPARE(profile.sessions().front().expiresUnix, std::int64_t{0});
        auto client = profile.client("bob");
        QVERIFY(!client);
        QCOMPARE(client.error().code(), ErrorCode::Unauthenticated);
        QVERIFY2(client.error().message().find("sign-in --user bob") != std::string::npos,
                 client.error().message().c_str());
        QVERIFY(isOneSentence(client.error().message()));
    }

    // A ready file left by a control plane that was killed may name a pid that is now another
    // program's: it is not taken for the control plane, and nothing is signalled.
    void aStaleReadyFileSignalsNobody()
    {
        api::Profile profile(root_ / "stale");
        const api::Workstation stale{daemon_.dataDir(), root_ / "stale-run"};
        QVERIFY(profile.useWorkstation(stale));
        fs::create_directories(stale.runFolder);
        std::ofstream(stale.runFolder / "ready.json") << "{\"pid\": " << ::getpid() << "}\n";
        QVERIFY(!profile.workstationPid());
        auto stopped = profile.stopWorkstation();
        QVERIFY(stopped);
        QVERIFY(!*stopped);  // and this test, the pid named, is still running
    }

    void theWorkstationStartsSignsInAndStops()
    {
        api::Profile profile(root_ / "client");
        QVERIFY(profile.useWorkstation(workstation()));
        auto named = profile.workstation();
        QVERIFY(named && *named);
        QCOMPARE((*named)->dataDir, fs::path(daemon_.dataDir()));
        QCOMPARE(profile.endpoint()->address, "unix:" + (root_ / "run" / "control.sock").string());

        auto pid = profile.startWorkstation(SEALTRAIN_CONTROL_TEST_EXECUTABLE,
                                            testing::secret(testing::kDaemonPassphrase));
        QVERIFY2(pid, pid ? "" : pid.error().message().c_str());
        QCOMPARE(profile.workstationPid(), std::optional<pid_t>(*pid));
        QCOMPARE(sessionOf(*pid), static_cast<long>(*pid));  // its own session: no terminal
        // Neither our standard output nor our standard error: its log (a pipe of ours held open
        // would keep whoever reads it waiting until the daemon ends).
        const fs::path fds = "/proc/" + std::to_string(*pid) + "/fd";
        for (const char* fd : {"1", "2"})
            QCOMPARE(fs::read_symlink(fds / fd), root_ / "run" / "control.log");
        auto second = profile.startWorkstation(SEALTRAIN_CONTROL_TEST_EXECUTABLE,
                                               testing::secret(testing::kDaemonPassphrase));
        QVERIFY(!second);
        QCOMPARE(second.error().code(), ErrorCode::AlreadyExists);

        auto signedIn =
            profile.signIn("bob", testing::secret(testing::kDaemonPassword), daemon_.code("bob"));
        QVERIFY2(signedIn, signedIn ? "" : signedIn.error().message().c_str());
        QCOMPARE(modeOf(root_ / "client" / "bob.key"), 0600U);
        const auto sessions = profile.sessions();
        QCOMPARE(sessions.size(), std::size_t{1});
        QCOMPARE(sessions.front().user, std::string("bob"));
        const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
        QVERIFY(sessions.front().expiresUnix > now);
        // The certificate lasts exactly as long as sign-in said, not five minutes less.
        QVERIFY2(std::abs(sessions.front().expiresUnix - signedIn->expiresUnix) <= 1,
                 (std::to_string(sessions.front().expiresUnix) + " vs "
                  + std::to_string(signedIn->expiresUnix))
                     .c_str());
        QCOMPARE(profile.chooseUser("").value(), std::string("bob"));
        QCOMPARE(profile.chooseUser("alice").value(), std::string("alice"));
        auto client = profile.client("bob");
        QVERIFY2(client, client ? "" : client.error().message().c_str());
        QCOMPARE((*client)->sessions().whoAmI()->user, std::string("bob"));
        client->reset();

        QVERIFY(profile.signOut("bob"));
        QVERIFY(!fs::exists(root_ / "client" / "bob.key"));
        QCOMPARE(profile.client("bob").error().code(), ErrorCode::NotFound);

        auto stopped = profile.stopWorkstation();
        QVERIFY2(stopped, stopped ? "" : stopped.error().message().c_str());
        QVERIFY(*stopped);
        QVERIFY(!fs::exists("/proc/" + std::to_string(*pid)));
        QVERIFY(!profile.workstationPid());
        QVERIFY(testing::fileText(root_ / "run" / "control.log").find("stopped")
                != std::string::npos);
        QCOMPARE(modeOf(root_ / "run" / "control.log"), 0600U);
    }

    // Naming another control plane forgets the sessions of this one.
    void anotherEndpointForgetsTheSessions()
    {
        api::Profile profile(root_ / "switch");
        QVERIFY(profile.useWorkstation(workstation()));
        std::ofstream(root_ / "switch" / "bob.key") << "key";
        std::ofstream(root_ / "switch" / "bob.crt") << "certificate";
        QCOMPARE(profile.sessions().size(), std::size_t{1});
        QVERIFY(profile.useWorkstation(workstation()));
        QVERIFY(profile.sessions().empty());
        QVERIFY(!fs::exists(root_ / "switch" / "bob.key"));
    }
};

QTEST_GUILESS_MAIN(TestApiProfile)
#include "test_api_profile.moc"
