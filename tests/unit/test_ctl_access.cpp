// sealtrainctl init, user, role, grant, session and audit export on a local data directory, driven
// in-process: the admin's path from an empty folder to a verified audit bundle, and the refusals
// a user meets on the way (wrong role, wrong passphrase, revoked, expired and missing sessions).
#include "core_fixture.h"
#include "ctl_runner.h"
#include "local_platform.h"

#include "sealtrain/audit/bundle.h"

#include <QProcess>
#include <QUrl>
#include <QUrlQuery>
#include <QtTest/QtTest>

#include <fstream>
#include <map>
#include <sys/stat.h>

using namespace sealtrain;
using sealtrain::ctl::kExitFailure;
using sealtrain::ctl::kExitOk;
using sealtrain::ctl::kExitUsage;
using sealtrain::testing::runCtl;

namespace {

constexpr const char* kPassphrase = "correct horse battery staple";
constexpr const char* kPassword = "a long enough password";

std::string readFile(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

unsigned modeOf(const std::string& path)
{
    struct stat info {};
    return ::stat(path.c_str(), &info) == 0 ? (info.st_mode & 0777U) : 0U;
}

// A data directory with an admin, and users who sign in through the command line.
struct Site {
    QTemporaryDir tmp;
    std::string data = tmp.filePath("data").toStdString();
    std::string passphraseFile = secretFile("passphrase", kPassphrase);
    std::string passwordFile = secretFile("password", kPassword);
    std::map<std::string, std::string> uris;
    std::map<std::string, std::uint64_t> lastStep;

    std::string secretFile(const char* name, const std::string& text) const
    {
        std::string path = tmp.filePath(QString::fromLatin1(name)).toStdString();
        std::ofstream(path) << text << '\n';
        ::chmod(path.c_str(), 0600);
        return path;
    }

    std::string uriFile(const std::string& user) const
    {
        return tmp.filePath(QString::fromStdString(user + ".uri")).toStdString();
    }

    testing::CtlOutcome init(const std::string& admin = "alice")
    {
        auto outcome =
            runCtl({"init", "--data-dir", data, "--passphrase-file", passphraseFile, "--admin",
                    admin, "--admin-password-file", passwordFile, "--totp-uri-file", uriFile(admin),
                    "--argon2-ops", "2", "--argon2-mem-mib", "64"});
        if (outcome.code == kExitOk)
            uris[admin] = readFile(uriFile(admin));
        return outcome;
    }

    // The command with the unlock options (and the session file of `as`, when given).
    testing::CtlOutcome ctl(std::vector<std::string> args, const std::string& as = "alice")
    {
        for (const std::string& extra :
             {std::string("--data-dir"), data, std::string("--passphrase-file"), passphraseFile})
            args.push_back(extra);
        if (!as.empty()) {
            args.emplace_back("--session-file");
            args.push_back(sessionFile(as));
        }
        return runCtl(args);
    }

    std::string sessionFile(const std::string& user) const
    {
        return tmp.filePath(QString::fromStdString(user + ".session")).toStdString();
    }

    // A fresh TOTP code each time: a code's step can not be used twice, so later sign-ins use
    // the next step, which the server accepts as clock drift.
    std::string code(const std::string& user)
    {
        auto step = core::totpStep(std::chrono::system_clock::now());
        step = std::max(step, lastStep[user] + 1);
        lastStep[user] = step;
        return core::totpCode(testing::totpSecretFromUri(uris[user]), step);
    }

    testing::CtlOutcome signIn(const std::string& user)
    {
        return ctl({"session", "sign-in", "--user", user, "--password-file", passwordFile,
                    "--totp-code", code(user)},
                   user);
    }

    // alice creates `user` and gets an enrolment code; `user` sets their password with it and
    // gets their TOTP URI, written to `uri`.
    bool enrol(const std::string& user, const std::string& uri)
    {
        const std::string codeFile =
            tmp.filePath(QString::fromStdString(user + ".enrol")).toStdString();
        auto made = ctl({"user", "create", user, "--code-file", codeFile});
        if (made.code != kExitOk) {
            qWarning("%s", made.err.c_str());
            return false;
        }
        auto set = ctl({"session", "sign-in", "--user", user, "--reset-code-file", codeFile,
                        "--password-file", passwordFile, "--totp-uri-file", uri},
                       user);
        if (set.code != kExitOk)
            qWarning("%s", set.err.c_str());
        return set.code == kExitOk;
    }

    // Creates `user` as alice, grants `role` and signs them in.
    void addUser(const std::string& user, const std::string& role)
    {
        const auto uri = uriFile(user);
        QVERIFY2(enrol(user, uri), "enrolment failed");
        uris[user] = readFile(uri);
        if (!role.empty()) {
            auto granted = ctl({"grant", "add", user, role});
            QVERIFY2(granted.code == kExitOk, granted.err.c_str());
            // With two admins a separated duty waits for the second one's same command.
            if (granted.out.starts_with("Requested")) {
                QVERIFY(!admins.empty());
                auto second = ctl({"grant", "add", user, role}, admins.front());
                QVERIFY2(second.code == kExitOk, second.err.c_str());
                QVERIFY2(second.out.starts_with("Granted"), second.out.c_str());
            }
        }
        auto in = signIn(user);
        QVERIFY2(in.code == kExitOk, in.err.c_str());
        if (role == "admin")
            admins.push_back(user);
    }

    std::vector<std::string> admins;  // added by addUser
};

void verifyOneSentenceError(const testing::CtlOutcome& outcome, const std::string& contains)
{
    QCOMPARE(outcome.code, kExitFailure);
    QVERIFY2(outcome.err.find(contains) != std::string::npos, outcome.err.c_str());
    const std::string prefix = "sealtrainctl: ";
    QVERIFY(outcome.err.starts_with(prefix));
    std::string sentence = outcome.err.substr(prefix.size());
    if (!sentence.empty() && sentence.back() == '\n')
        sentence.pop_back();
    QVERIFY2(isOneSentence(sentence), outcome.err.c_str());
}

}  // namespace

class TestCtlAccess : public QObject {
    Q_OBJECT

private slots:
    void initCreatesAnEncryptedDataDirectory()
    {
        Site site;
        const auto made = site.init();
        QVERIFY2(made.code == kExitOk, made.err.c_str());
        QVERIFY(made.out.find("Initialised") != std::string::npos);
        // The TOTP secret went to the 0600 file, not to the terminal.
        QVERIFY(site.uris["alice"].starts_with("otpauth://totp/"));
        QCOMPARE(modeOf(site.uriFile("alice")), 0600U);
        QVERIFY(made.out.find("secret=") == std::string::npos);
        for (const auto name :
             {core::datadir::kKeyring, core::datadir::kDatabase, core::datadir::kSigningKey,
              core::datadir::kSigningPublicKey, core::datadir::kManifestsKey,
              core::datadir::kManifestsPublicKey, core::datadir::kCheckpointsKey,
              core::datadir::kCheckpointsPublicKey, core::datadir::kCaCertificate,
              core::datadir::kCaKey, core::datadir::kWitness})
            QVERIFY2(std::filesystem::exists(site.data + "/" + std::string(name)),
                     std::string(name).c_str());
        QCOMPARE(modeOf(site.data), 0700U);
        // Sealed, never in the clear: no PEM private key anywhere in the directory.
        for (const auto& entry : std::filesystem::directory_iterator(site.data))
            QVERIFY(readFile(entry.path()).find("PRIVATE KEY") == std::string::npos);
        const std::string database = readFile(site.data + "/control.db");
        QVERIFY(!database.starts_with(std::string("SQLite format 3\0", 16)));

        // A second init refuses in one sentence and leaves the directory alone.
        verifyOneSentenceError(site.init("bob"), "already exists");
        QVERIFY(site.signIn("alice").code == kExitOk);
    }

    void failedInitLeavesNothingBehind()
    {
        Site site;
        const auto weak = site.secretFile("weak", "short");
        const auto outcome =
            runCtl({"init", "--data-dir", site.data, "--passphrase-file", site.passphraseFile,
                    "--admin", "alice", "--admin-password-file", weak, "--argon2-ops", "2",
                    "--argon2-mem-mib", "64"});
        verifyOneSentenceError(outcome, "password");
        QVERIFY(!std::filesystem::exists(site.data));
        for (const auto& entry : std::filesystem::directory_iterator(site.tmp.path().toStdString()))
            QVERIFY2(entry.path().filename().string().find(".init-") == std::string::npos,
                     entry.path().c_str());
    }

    void adminManagesUsersRolesAndGrants()
    {
        Site site;
        QCOMPARE(site.init().code, kExitOk);
        QCOMPARE(site.signIn("alice").code, kExitOk);
        QCOMPARE(modeOf(site.sessionFile("alice")), 0600U);
        site.addUser("bob", "engineer");

        auto users = site.ctl({"user", "list"});
        QVERIFY2(users.code == kExitOk, users.err.c_str());
        QVERIFY(users.out.find("bob") != std::string::npos);
        QVERIFY(users.out.find("engineer") != std::string::npos);

        QCOMPARE(site.ctl({"role", "create", "reviewer", "--permission", "audit.read"}).code,
                 kExitOk);
        auto roles = site.ctl({"role", "list", "--json"});
        QVERIFY2(roles.code == kExitOk, roles.err.c_str());
        QVERIFY(roles.out.find("\"reviewer\"") != std::string::npos);
        QVERIFY(site.ctl({"grant", "add", "bob", "reviewer", "--project", "oncology"}).code
                == kExitOk);
        auto grants = site.ctl({"grant", "list", "bob"});
        QVERIFY(grants.out.find("oncology") != std::string::npos);
        QCOMPARE(site.ctl({"grant", "remove", "bob", "reviewer", "--project", "oncology"}).code,
                 kExitOk);
        QCOMPARE(site.ctl({"role", "delete", "reviewer"}).code, kExitOk);
        verifyOneSentenceError(site.ctl({"role", "create", "mixed", "--permission", "user.manage",
                                         "--permission", "job.submit"}),
                               "may not combine");
        verifyOneSentenceError(site.ctl({"role", "delete", "engineer"}), "default role");

        QCOMPARE(site.ctl({"user", "disable", "bob"}).code, kExitOk);
        QCOMPARE(site.ctl({"user", "enable", "bob"}).code, kExitOk);
        auto reset = site.ctl({"user", "reset", "bob"});
        QVERIFY2(reset.code == kExitOk, reset.err.c_str());
        QVERIFY(reset.out.find("rc_") != std::string::npos);

        auto sessions = site.ctl({"session", "list"});
        QVERIFY2(sessions.code == kExitOk, sessions.err.c_str());
        QVERIFY(sessions.out.find("alice") != std::string::npos);
        QVERIFY(sessions.out.find("revoked") != std::string::npos);  // bob's, by the reset

        // The last admin can not remove themselves.
        verifyOneSentenceError(site.ctl({"grant", "remove", "alice", "admin"}), "last admin");
        verifyOneSentenceError(site.ctl({"user", "disable", "alice"}), "last admin");
    }

    void refusalsAreOneSentenceAndAudited()
    {
        Site site;
        QCOMPARE(site.init().code, kExitOk);
        QCOMPARE(site.signIn("alice").code, kExitOk);
        site.addUser("bob", "engineer");
        site.addUser("carol", "auditor");

        // Each refusal: who tried, the action its entry must name, and what the user was told.
        struct Refusal {
            std::string actor;
            std::string action;
            std::string sentence;
        };
        std::vector<Refusal> refusals;
        const auto refuse = [&](const std::vector<std::string>& args, const std::string& as,
                                const std::string& contains, const std::string& action) {
            const auto outcome = site.ctl(args, as);
            verifyOneSentenceError(outcome, contains);
            std::string sentence = outcome.err.substr(std::string("sealtrainctl: ").size());
            if (!sentence.empty() && sentence.back() == '\n')
                sentence.pop_back();
            refusals.push_back({as, action, sentence});
        };
        // An engineer granting themselves admin.
        refuse({"grant", "add", "bob", "admin"}, "bob", "lacks the permission", "grant.create");
        // An auditor changing anything.
        refuse({"user", "disable", "bob"}, "carol", "lacks the permission", "user.disable");
        // An engineer exporting the audit log.
        const std::string bundle = site.tmp.filePath("log.bundle").toStdString();
        refuse({"audit", "export", "--out", bundle}, "bob", "lacks the permission", "audit.export");
        // Infrastructure operators hold no data permissions.
        site.addUser("dave", "operator");
        refuse({"grant", "add", "dave", "engineer"}, "alice", "may not also hold data or job",
               "grant.create");
        // Admins hold no data, job, approval or audit roles, not even by their own grant.
        refuse({"grant", "add", "alice", "steward"}, "alice", "may not also hold data or job",
               "grant.create");
        refuse({"grant", "add", "alice", "auditor"}, "alice", "may not also hold audit",
               "grant.create");
        // Nobody signed in: refused before any call reaches the control plane.
        verifyOneSentenceError(site.ctl({"user", "list"}, ""), "not signed in");

        // The auditor exports; the bundle verifies against the platform key and the witness file
        // and holds the refusals.
        const std::string key = site.tmp.filePath("log.pem").toStdString();
        auto exported =
            site.ctl({"audit", "export", "--out", bundle, "--public-key-out", key}, "carol");
        QVERIFY2(exported.code == kExitOk, exported.err.c_str());
        // One admin here: the export says plainly that four eyes is not guaranteed.
        QVERIFY2(exported.err.find("warning: Four eyes is not guaranteed") != std::string::npos,
                 exported.err.c_str());
        auto verified = runCtl({"audit", "verify", bundle, "--key", key, "--witness",
                                site.data + "/" + std::string(core::datadir::kWitness)});
        QVERIFY2(verified.code == kExitOk, verified.out.c_str());
        QVERIFY(verified.out.find("VERIFIED") != std::string::npos);
        // Every refusal has its own entry, in order: its actor, its action, denied, and the
        // sentence the user read as its reason.
        const auto report = audit::verifyBundle(readFile(bundle), {});
        auto next = report.entries.begin();
        for (const auto& refusal : refusals) {
            next = std::find_if(next, report.entries.end(), [&](const audit::Entry& entry) {
                return entry.outcome == audit::Outcome::Denied && entry.actor.id == refusal.actor
                       && entry.action == refusal.action && entry.reason == refusal.sentence;
            });
            QVERIFY2(next != report.entries.end(),
                     (refusal.actor + " " + refusal.action + ": " + refusal.sentence).c_str());
            ++next;
        }
        QVERIFY(std::any_of(report.entries.begin(), report.entries.end(), [](const auto& entry) {
            return entry.action == "audit.export" && entry.actor.id == "carol"
                   && entry.outcome == audit::Outcome::Ok;
        }));
    }

    void wrongPassphraseIsOneSentence()
    {
        Site site;
        QCOMPARE(site.init().code, kExitOk);
        const auto wrong = site.secretFile("wrong", "not the passphrase");
        const auto outcome =
            runCtl({"user", "list", "--data-dir", site.data, "--passphrase-file", wrong});
        QCOMPARE(outcome.code, kExitFailure);
        QVERIFY2(outcome.err.find("passphrase") != std::string::npos, outcome.err.c_str());
        verifyOneSentenceError(
            runCtl({"user", "list", "--data-dir", site.tmp.filePath("nowhere").toStdString(),
                    "--passphrase-file", site.passphraseFile}),
            "sealtrainctl init");
    }

    void revokedExpiredAndSignedOutSessionsAreRefused()
    {
        Site site;
        QCOMPARE(site.init().code, kExitOk);
        QCOMPARE(site.signIn("alice").code, kExitOk);
        site.addUser("bob", "engineer");
        site.addUser("carol", "auditor");

        QCOMPARE(site.ctl({"session", "revoke", "--user", "bob"}).code, kExitOk);
        verifyOneSentenceError(site.ctl({"grant", "list"}, "bob"), "revoked");
        // Signing out of a revoked session still forgets its token.
        QCOMPARE(site.ctl({"session", "sign-out"}, "bob").code, kExitOk);
        QVERIFY(!std::filesystem::exists(site.sessionFile("bob")));

        QCOMPARE(site.ctl({"user", "disable", "carol"}).code, kExitOk);
        const std::string bundle = site.tmp.filePath("x.bundle").toStdString();
        verifyOneSentenceError(site.ctl({"audit", "export", "--out", bundle}, "carol"), "revoked");

        // A session signed in two hours ago and idle since has expired. (erin has never signed
        // in: a TOTP step older than one already used would be refused as a replay.)
        const auto erinUri = site.uriFile("erin");
        QVERIFY(site.enrol("erin", erinUri));
        {
            testing::TestClock past;
            past.time = std::chrono::system_clock::now() - std::chrono::hours(2);
            ctl::UnlockOptions unlock;
            unlock.dataDir = site.data;
            unlock.passphraseFile = site.passphraseFile;
            core::DataDirectoryOptions options;
            options.clock = &past;
            auto platform = core::DataDirectory::open(unlock.resolvedDataDir(),
                                                      unlock.keyringUnlock(), options);
            QVERIFY2(platform.ok(), platform.ok() ? "" : platform.error().message().c_str());
            const auto code = core::totpCode(testing::totpSecretFromUri(readFile(erinUri)),
                                             core::totpStep(past.now()));
            auto token = (*platform)->controlPlane().identity().signIn(
                "erin", testing::secret(kPassword), code);
            QVERIFY(token.ok());
            QVERIFY(ctl::storeSession(**platform, *token, site.sessionFile("old")).ok());
        }
        verifyOneSentenceError(site.ctl({"user", "list"}, "old"), "expired");

        QCOMPARE(site.ctl({"session", "sign-out"}).code, kExitOk);
        verifyOneSentenceError(site.ctl({"user", "list"}), "not signed in");
    }

    // Issue #13 item 9: every user who signs in gets a session file of their own; the last
    // sign-in does not become everyone's identity.
    void sessionsOfTwoUsersCoexist()
    {
        Site site;
        QCOMPARE(site.init().code, kExitOk);
        QCOMPARE(site.signIn("alice").code, kExitOk);
        site.addUser("bob", "engineer");
        const auto signInHere = [&](const std::string& user) {
            auto in = site.ctl({"session", "sign-in", "--user", user, "--password-file",
                                site.passwordFile, "--totp-code", site.code(user)},
                               "");
            QVERIFY2(in.code == kExitOk, in.err.c_str());
        };
        signInHere("alice");
        // Alone, alice's session is the default.
        QCOMPARE(site.ctl({"user", "list"}, "").code, kExitOk);
        signInHere("bob");
        const std::string sessions = site.data + "/sessions";
        QCOMPARE(modeOf(sessions), 0700U);
        QCOMPARE(modeOf(sessions + "/alice.session"), 0600U);
        QCOMPARE(modeOf(sessions + "/bob.session"), 0600U);

        // With two, nobody's session is taken by default.
        verifyOneSentenceError(site.ctl({"user", "list"}, ""), "Several users are signed in");
        // Each acts as themselves: bob's sign-in did not make alice's commands his.
        QCOMPARE(site.ctl({"user", "list", "--as", "alice"}, "").code, kExitOk);
        verifyOneSentenceError(site.ctl({"user", "list", "--as", "bob"}, ""),
                               "lacks the permission");
        ::setenv(ctl::kUserEnvironment, "alice", 1);
        const auto asAlice = site.ctl({"user", "list"}, "");
        ::unsetenv(ctl::kUserEnvironment);
        QVERIFY2(asAlice.code == kExitOk, asAlice.err.c_str());
        verifyOneSentenceError(site.ctl({"user", "list", "--as", "carol"}, ""),
                               "'carol' is not signed in");
        verifyOneSentenceError(site.ctl({"user", "list", "--as", "../bob"}, ""), "user name");

        // bob signs out; alice's session stays and is the default again.
        QCOMPARE(site.ctl({"session", "sign-out", "--as", "bob"}, "").code, kExitOk);
        QVERIFY(!std::filesystem::exists(sessions + "/bob.session"));
        QCOMPARE(site.ctl({"user", "list"}, "").code, kExitOk);
    }

    // Issue #13 item 7 on the command line: the admin hands out a one-time code, never the new
    // password or TOTP secret; an admin's reset needs a second admin.
    void resetThroughTheCommandLine()
    {
        Site site;
        QCOMPARE(site.init().code, kExitOk);
        QCOMPARE(site.signIn("alice").code, kExitOk);
        site.addUser("bob", "engineer");
        const std::string codeFile = site.tmp.filePath("bob.code").toStdString();
        auto reset = site.ctl({"user", "reset", "bob", "--code-file", codeFile});
        QVERIFY2(reset.code == kExitOk, reset.err.c_str());
        QCOMPARE(modeOf(codeFile), 0600U);
        QVERIFY(reset.out.find("rc_") == std::string::npos);
        // The old password and TOTP secret no longer sign in.
        verifyOneSentenceError(site.signIn("bob"), "may not sign in now");

        const auto newPassword = site.secretFile("bob-new", "a passphrase of his choosing");
        const auto newUri = site.uriFile("bob-new");
        auto completed =
            site.ctl({"session", "sign-in", "--user", "bob", "--reset-code-file", codeFile,
                      "--password-file", newPassword, "--totp-uri-file", newUri},
                     "");
        QVERIFY2(completed.code == kExitOk, completed.err.c_str());
        QVERIFY(readFile(newUri) != site.uris["bob"]);
        verifyOneSentenceError(site.ctl({"session", "sign-in", "--user", "bob", "--reset-code-file",
                                         codeFile, "--password-file", newPassword},
                                        ""),
                               "reset code is wrong");
        // A new secret: its codes have not been used yet.
        site.uris["bob"] = readFile(newUri);
        site.lastStep["bob"] = 0;
        auto in = site.ctl({"session", "sign-in", "--user", "bob", "--password-file", newPassword,
                            "--totp-code", site.code("bob")},
                           "bob");
        QVERIFY2(in.code == kExitOk, in.err.c_str());

        // An admin's reset: alice asks, alice can not approve, dora can.
        site.addUser("carl", "admin");
        site.addUser("dora", "admin");
        auto requested = site.ctl({"user", "reset", "carl"});
        QVERIFY2(requested.code == kExitOk, requested.err.c_str());
        QVERIFY(requested.out.find("--approve") != std::string::npos);
        QCOMPARE(site.ctl({"user", "list"}, "carl").code, kExitOk);
        verifyOneSentenceError(site.ctl({"user", "reset", "carl", "--approve"}), "yourself");
        auto approved = site.ctl({"user", "reset", "carl", "--approve"}, "dora");
        QVERIFY2(approved.code == kExitOk, approved.err.c_str());
        QVERIFY(approved.out.find("rc_") != std::string::npos);
        verifyOneSentenceError(site.ctl({"user", "list"}, "carl"), "revoked");
    }

    void breakGlassNeedsAReasonAndADuration()
    {
        Site site;
        QCOMPARE(site.init().code, kExitOk);
        QCOMPARE(site.signIn("alice").code, kExitOk);
        site.addUser("bob", "engineer");
        QCOMPARE(site.ctl({"grant", "break-glass", "bob", "auditor", "--reason", "incident 42",
                           "--duration", "soon"})
                     .code,
                 kExitUsage);
        verifyOneSentenceError(site.ctl({"grant", "break-glass", "bob", "auditor", "--reason",
                                         "incident 42", "--duration", "5h"}),
                               "at most");
        auto granted = site.ctl({"grant", "break-glass", "bob", "auditor", "--reason",
                                 "incident 42", "--duration", "30m"});
        QVERIFY2(granted.code == kExitOk, granted.err.c_str());
        auto grants = site.ctl({"grant", "list", "bob"});
        QVERIFY(grants.out.find("break-glass") != std::string::npos);
        // bob's export under the grant is flagged.
        const std::string bundle = site.tmp.filePath("bg.bundle").toStdString();
        QCOMPARE(site.ctl({"audit", "export", "--out", bundle}, "bob").code, kExitOk);
        const auto report = audit::verifyBundle(readFile(bundle), {});
        bool flagged = false;
        for (const auto& entry : report.entries) {
            if (entry.action != "audit.export")
                continue;
            for (const auto& detail : entry.details)
                flagged = flagged || detail.name == "break_glass";
        }
        QVERIFY(flagged);
    }

    void rotatingTheDatabaseKekReKeysTheDatabase()
    {
        Site site;
        QCOMPARE(site.init().code, kExitOk);
        QCOMPARE(site.signIn("alice").code, kExitOk);
        auto rotated = site.ctl({"keyring", "rotate", "database"});  // as alice (keyring.manage)
        QVERIFY2(rotated.code == kExitOk, rotated.err.c_str());
        QVERIFY(rotated.out.find("re-keyed") != std::string::npos);
        // The old version no longer opens the database; the platform still does, and the
        // session sealed under the old version still reads until it is retired.
        {
            auto keyring = crypto::Keyring::unlockWithPassphrase(site.data + "/keyring.json",
                                                                 testing::secret(kPassphrase));
            QVERIFY(keyring.ok());
            auto old = keyring->findKek("database", 1);
            QVERIFY(old.ok());
            auto oldKey = core::deriveDatabaseKey(**old);
            auto opened = core::Database::open(site.data + "/control.db", *oldKey);
            QVERIFY(!opened.ok());
            QCOMPARE(opened.error().code(), ErrorCode::Unauthenticated);
        }
        QCOMPARE(site.ctl({"user", "list"}).code, kExitOk);
        QCOMPARE(site.ctl({"keyring", "retire", "database", "1"}).code, kExitOk);
        verifyOneSentenceError(site.ctl({"user", "list"}), "sign in again");
        QCOMPARE(site.signIn("alice").code, kExitOk);
        QCOMPARE(site.ctl({"user", "list"}).code, kExitOk);
    }

    // What docs/operations/access-control.md tells script writers: the URI file and oathtool.
    void scriptsSignInWithOathtool()
    {
        if (QStandardPaths::findExecutable("oathtool").isEmpty())
            QSKIP("The oathtool command is not installed (scripts/setup installs it).");
        Site site;
        QCOMPARE(site.init().code, kExitOk);
        const auto uri = QString::fromStdString(site.uris["alice"]);
        const auto secret = QUrlQuery(QUrl(uri.trimmed())).queryItemValue("secret");
        QVERIFY(!secret.isEmpty());
        QProcess oathtool;
        oathtool.start("oathtool", {"--totp", "-b", secret});
        QVERIFY(oathtool.waitForFinished(10000));
        QCOMPARE(oathtool.exitCode(), 0);
        const auto code = QString::fromLatin1(oathtool.readAllStandardOutput()).trimmed();
        auto in = site.ctl({"session", "sign-in", "--user", "alice", "--password-file",
                            site.passwordFile, "--totp-code", code.toStdString()});
        QVERIFY2(in.code == kExitOk, in.err.c_str());
    }

    // A restored backup of control.db would bring back a revoked session: every command refuses
    // the database once the witness file holds a newer head than the database's log.
    void restoredDatabaseBackupIsRefused()
    {
        Site site;
        QCOMPARE(site.init().code, kExitOk);
        QCOMPARE(site.signIn("alice").code, kExitOk);
        site.addUser("bob", "engineer");
        const std::filesystem::path database = std::filesystem::path(site.data) / "control.db";
        const std::filesystem::path backup = site.tmp.filePath("control.db.bak").toStdString();
        std::filesystem::copy_file(database, backup);

        QCOMPARE(site.ctl({"session", "revoke", "--user", "bob"}).code, kExitOk);
        verifyOneSentenceError(site.ctl({"grant", "list"}, "bob"), "revoked");

        std::filesystem::copy_file(backup, database,
                                   std::filesystem::copy_options::overwrite_existing);
        const auto restored = site.ctl({"grant", "list"}, "bob");
        verifyOneSentenceError(restored, "older copy");
        QVERIFY2(restored.err.find("revoked sessions") != std::string::npos, restored.err.c_str());
        QCOMPARE(site.ctl({"user", "list"}).code, kExitFailure);
    }

    void everyCommandHasHelp_data()
    {
        QTest::addColumn<QStringList>("command");
        for (const auto& command :
             {QStringList{"init"}, QStringList{"user", "create"}, QStringList{"user", "list"},
              QStringList{"role", "create"}, QStringList{"grant", "break-glass"},
              QStringList{"session", "sign-in"}, QStringList{"session", "revoke"},
              QStringList{"user", "reset"}, QStringList{"audit", "export"}})
            QTest::newRow(command.join(' ').toLatin1().constData()) << command;
    }

    void everyCommandHasHelp()
    {
        QFETCH(QStringList, command);
        std::vector<std::string> args;
        for (const auto& word : command)
            args.push_back(word.toStdString());
        args.emplace_back("--help");
        const auto outcome = runCtl(args);
        QCOMPARE(outcome.code, kExitOk);
        QVERIFY(outcome.out.find("--data-dir") != std::string::npos);
    }
};

QTEST_APPLESS_MAIN(TestCtlAccess)
#include "test_ctl_access.moc"
