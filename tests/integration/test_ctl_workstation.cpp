// sealtrainctl as one command tree over a workstation's control plane (issue #28, item 4), driven
// in-process as a person types it: init, start, users, roles and grants, a dataset import, a job
// submitted, approved and run, the audit export verified offline, stop; and the refusals a user
// meets on the way (wrong role, wrong passphrase, signed-out and revoked sessions, a restored
// database). sealtrainctl never opens the data directory after init: sealtrain-control does.
#include "ctl_site.h"

#include "sealtrain/core/data_directory/data_directory.h"
#include "sealtrain/core/store/database.h"
#include "sealtrain/crypto/keyring.h"

#include <QProcess>
#include <QStandardPaths>
#include <QTimeZone>
#include <QUrl>
#include <QUrlQuery>
#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include <fstream>

using namespace sealtrain;
using sealtrain::ctl::kExitFailure;
using sealtrain::ctl::kExitOk;
using sealtrain::ctl::kExitUsage;
using sealtrain::testing::modeOf;
using sealtrain::testing::readFile;
using sealtrain::testing::runCtl;
using sealtrain::testing::Site;
using sealtrain::testing::verifyOneSentenceError;
namespace fs = std::filesystem;

class TestCtlWorkstation : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { ::unsetenv(api::kUserEnvironment); }

    // The whole shape through the one command tree: init, start, users, an import, a job, the
    // audit export, stop.
    void theWorkstationEndToEnd()
    {
        Site site;
        site.open();
        const auto status = site.plain({"status", "--json"});
        QVERIFY2(status.code == kExitOk, status.err.c_str());
        const auto state = nlohmann::json::parse(status.out);
        QCOMPARE(state["running"].get<bool>(), true);
        QCOMPARE(state["data_dir"].get<std::string>(), site.data);
        site.addUser("sam", "steward");
        site.addUser("eve", "engineer");
        site.addUser("ann", "approver");
        site.addUser("rita", "auditor");

        const fs::path corpus = site.root / "corpus.txt";
        {
            std::ofstream text(corpus);
            for (int line = 0; line < 400; ++line)
                text << "line " << line << " of a small corpus for a workstation test.\n";
        }
        const auto imported = site.ctl(
            {"dataset", "import", "--name", "notes", "--format", "text-files", corpus.string()},
            "sam");
        QVERIFY2(imported.code == kExitOk, imported.err.c_str());
        QVERIFY(site.ctl({"dataset", "grant", "notes", "eve"}, "sam").code == kExitOk);

        const fs::path spec = site.root / "job.yaml";
        std::ofstream(spec) << "spec_version: 1\nname: notes-small\nproject: demo\n"
                               "dataset: notes\nmodel: {layers: 1, heads: 2, width: 16, "
                               "context: 16}\nschedule: {steps: 3, batch: 2}\n"
                               "resources: {pool: cpu, device: cpu, threads: 1}\n";
        const auto submitted = site.ctl({"job", "submit", spec.string()}, "eve");
        QVERIFY2(submitted.code == kExitOk, submitted.err.c_str());
        QVERIFY2(submitted.out.find(": vetted") != std::string::npos, submitted.out.c_str());
        const std::string id = submitted.out.substr(4, submitted.out.find(' ', 4) - 4);
        const auto shown = site.ctl({"job", "show", id, "--json"}, "ann");
        QVERIFY2(shown.code == kExitOk, shown.err.c_str());
        const std::string sha = nlohmann::json::parse(shown.out)["spec_sha256"];
        // The spec hash a reviewer computes offline, with the dataset pinned to its id as the
        // control plane pins it (docs/formats/job-spec.md), is the one the approval binds to.
        const auto dataset = site.ctl({"dataset", "show", "notes", "--json"}, "eve");
        const std::string datasetId = nlohmann::json::parse(dataset.out)["id"];
        const fs::path pinned = site.root / "pinned.yaml";
        std::string text = readFile(spec);
        text.replace(text.find("dataset: notes"), 14, "dataset: \"" + datasetId + "\"");
        std::ofstream(pinned) << text;
        const auto validated = runCtl({"job", "validate", pinned.string()});
        QVERIFY2(validated.out.find("sha256 " + sha) != std::string::npos, validated.out.c_str());
        const auto approved = site.ctl({"job", "approve", id, "--sha256", sha}, "ann");
        QVERIFY2(approved.code == kExitOk, approved.err.c_str());
        const auto ran = site.ctl({"job", "run", id}, "eve");
        QVERIFY2(ran.code == kExitOk, ran.err.c_str());
        QVERIFY2(ran.out.find("\"kind\":\"checkpoint\"") != std::string::npos, ran.out.c_str());
        verifyRunCommands(site, spec, id);

        // The checkpoint verifies offline with the platform's checkpoint key.
        const fs::path keys = site.root / "keys";
        QCOMPARE(site.ctl({"signing-keys", "--out-dir", keys.string()}, "eve").code, kExitOk);
        fs::path checkpoint;  // where the control plane's own run keeps it (data/runs/RUN/)
        for (const auto& entry : fs::recursive_directory_iterator(fs::path(site.data) / "runs"))
            if (entry.path().filename().string().starts_with("checkpoint-")
                && entry.path().extension() == ".sealed")
                checkpoint = entry.path();
        QVERIFY(!checkpoint.empty());
        const auto verifiedCheckpoint = runCtl({"checkpoint", "verify", checkpoint.string(),
                                                "--key", (keys / "checkpoints.pub.pem").string()});
        QVERIFY2(verifiedCheckpoint.code == kExitOk, verifiedCheckpoint.err.c_str());

        // The auditor's export verifies offline with the audit key and the witness file, and
        // says (one admin here) that four eyes is not guaranteed.
        const std::string bundle = (site.root / "log.bundle").string();
        const auto exported = site.ctl({"audit", "export", "--out", bundle}, "rita");
        QVERIFY2(exported.code == kExitOk, exported.err.c_str());
        QVERIFY2(exported.err.find("warning: Four eyes is not guaranteed") != std::string::npos,
                 exported.err.c_str());
        const auto doctor = site.ctl({"doctor", "--json"}, "eve");
        QVERIFY2(doctor.out.find("Four eyes is not guaranteed") != std::string::npos,
                 doctor.out.c_str());

        QCOMPARE(site.stop().code, kExitOk);
        QVERIFY(!api::Profile(site.client).workstationPid());
        const auto verified =
            runCtl({"audit", "verify", bundle, "--key", (keys / "signing.pub.pem").string(),
                    "--witness", site.data + "/" + std::string(core::datadir::kWitness)});
        QVERIFY2(verified.code == kExitOk, verified.out.c_str());
        QVERIFY(verified.out.find("VERIFIED") != std::string::npos);
        const auto report = audit::verifyBundle(readFile(bundle), {});
        for (const std::string action : {"dataset.import", "job.submit", "job.approve", "job.run"})
            QVERIFY2(std::any_of(report.entries.begin(), report.entries.end(),
                                 [&](const audit::Entry& entry) {
                                     return entry.action == action
                                            && entry.outcome == audit::Outcome::Ok;
                                 }),
                     action.c_str());
        // Stopped: a command says how to start it again (no terminal to ask a passphrase on).
        verifyOneSentenceError(site.ctl({"user", "list"}), "sealtrainctl start");
    }

    // Issue #30: `run list|show|compare|metrics` on the job `id` just run (and a second one with
    // another step count, run the same way), as its submitter; the auditor, who may not see
    // jobs, is refused in one sentence.
    void verifyRunCommands(Site& site, const fs::path& spec, const std::string& id)
    {
        std::string text = readFile(spec);
        text.replace(text.find("name: notes-small"), 17, "name: notes-shorter");
        text.replace(text.find("steps: 3"), 8, "steps: 2");
        const fs::path second = site.root / "second.yaml";
        std::ofstream(second) << text;
        const auto submitted = site.ctl({"job", "submit", second.string(), "--json"}, "eve");
        QVERIFY2(submitted.code == kExitOk, submitted.err.c_str());
        const auto job = nlohmann::json::parse(submitted.out);
        const std::string other = std::to_string(job["id"].get<std::int64_t>());
        QCOMPARE(site.ctl({"job", "approve", other, "--sha256", job["spec_sha256"]}, "ann").code,
                 kExitOk);
        QCOMPARE(site.ctl({"job", "run", other}, "eve").code, kExitOk);

        const auto listed = site.ctl({"run", "list", "--json"}, "eve");
        QVERIFY2(listed.code == kExitOk, listed.err.c_str());
        const auto runs = nlohmann::json::parse(listed.out);
        QCOMPARE(runs.size(), std::size_t{2});
        QCOMPARE(runs[0]["run"].get<std::int64_t>(), std::stoll(other));  // newest first
        QCOMPARE(runs[1]["summary"]["steps_done"].get<int>(), 3);
        QCOMPARE(runs[1]["attempts"][0]["worker"].get<std::string>(), std::string());

        const auto shown = site.ctl({"run", "show", id}, "eve");
        QVERIFY2(shown.code == kExitOk, shown.err.c_str());
        for (const char* expected :
             {"steps 3 of 3", "1 on the control plane", "succeeded", "schedule.steps = 3"})
            QVERIFY2(shown.out.find(expected) != std::string::npos, shown.out.c_str());

        const auto compared = site.ctl({"run", "compare", id, other}, "eve");
        QVERIFY2(compared.code == kExitOk, compared.err.c_str());
        QVERIFY2(compared.out.find("schedule.steps") != std::string::npos, compared.out.c_str());
        QVERIFY2(compared.out.find("model.layers") == std::string::npos, compared.out.c_str());
        QCOMPARE(site.ctl({"run", "compare", id}, "eve").code, kExitUsage);

        const fs::path csv = site.root / "runs.csv";
        const auto exported =
            site.ctl({"run", "metrics", id, other, "--csv", "--out", csv.string()}, "eve");
        QVERIFY2(exported.code == kExitOk, exported.err.c_str());
        const std::string lines = readFile(csv);
        QVERIFY2(lines.starts_with("run,name,step,attempt,loss,"), lines.c_str());
        QCOMPARE(std::count(lines.begin(), lines.end(), '\n'), std::ptrdiff_t{1 + 3 + 2});
        QCOMPARE(fs::status(csv).permissions() & fs::perms::others_read, fs::perms::none);

        verifyOneSentenceError(site.ctl({"run", "show", id}, "rita"), "may neither");
    }

    void initCreatesAnEncryptedDataDirectory()
    {
        Site site;
        const auto made = site.init();
        QVERIFY2(made.code == kExitOk, made.err.c_str());
        QVERIFY(made.out.find("Initialised") != std::string::npos);
        QVERIFY(made.out.find("sealtrainctl start") != std::string::npos);
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
            QVERIFY2(fs::exists(site.data + "/" + std::string(name)), std::string(name).c_str());
        QCOMPARE(modeOf(site.data), 0700U);
        // Sealed, never in the clear: no PEM private key anywhere in the directory.
        for (const auto& entry : fs::directory_iterator(site.data))
            QVERIFY(readFile(entry.path()).find("PRIVATE KEY") == std::string::npos);
        const std::string database = readFile(site.data + "/control.db");
        QVERIFY(!database.starts_with(std::string("SQLite format 3\0", 16)));
        // The profile names it, and holds no key of the platform's.
        QCOMPARE(modeOf(site.client), 0700U);
        for (const auto& entry : fs::directory_iterator(site.client))
            QVERIFY2(readFile(entry.path()).find("PRIVATE KEY") == std::string::npos,
                     entry.path().c_str());

        // A second init refuses in one sentence and leaves the directory alone.
        verifyOneSentenceError(site.init("bob"), "already exists");
        QCOMPARE(site.start().code, kExitOk);
        QCOMPARE(site.signIn("alice").code, kExitOk);
        QCOMPARE(site.stop().code, kExitOk);

        // Another profile names the same data directory without creating anything (after a
        // restore, or on a new account); a folder that is no data directory is refused.
        const std::string other = (site.root / "other-client").string();
        verifyOneSentenceError(runCtl({"init", "--existing", "--data-dir",
                                       (site.root / "nowhere").string(), "--client-dir", other}),
                               "not a data directory");
        QCOMPARE(runCtl({"init", "--data-dir", site.data, "--client-dir", other}).code, kExitUsage);
        const auto named =
            runCtl({"init", "--existing", "--data-dir", site.data, "--client-dir", other});
        QVERIFY2(named.code == kExitOk, named.err.c_str());
        QVERIFY(named.out.find("Platform CA fingerprint: sha256:") != std::string::npos);
        const auto started =
            runCtl({"start", "--passphrase-file", site.passphraseFile, "--client-dir", other});
        QVERIFY2(started.code == kExitOk, started.err.c_str());
        const auto in = runCtl({"sign-in", "--user", "alice", "--password-file", site.passwordFile,
                                "--totp-code", site.code("alice"), "--client-dir", other});
        QVERIFY2(in.code == kExitOk, in.err.c_str());
        QCOMPARE(runCtl({"stop", "--client-dir", other}).code, kExitOk);
    }

    void failedInitLeavesNothingBehind()
    {
        Site site;
        const auto weak = site.secretFile("weak", "short");
        const auto outcome =
            runCtl({"init", "--data-dir", site.data, "--passphrase-file", site.passphraseFile,
                    "--admin", "alice", "--admin-password-file", weak, "--argon2-ops", "2",
                    "--argon2-mem-mib", "64", "--client-dir", site.client});
        verifyOneSentenceError(outcome, "password");
        QVERIFY(!fs::exists(site.data));
        QVERIFY(!fs::exists(site.client));
        for (const auto& entry : fs::directory_iterator(site.root))
            QVERIFY2(entry.path().filename().string().find(".init-") == std::string::npos,
                     entry.path().c_str());
    }

    void adminManagesUsersRolesAndGrants()
    {
        Site site;
        site.open();
        QCOMPARE(modeOf(site.client + "/alice.key"), 0600U);
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
        QVERIFY(site.ctl({"user", "list"}).out.find("oncology") != std::string::npos);
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
        QVERIFY2(reset.out.find("sealtrainctl sign-in --user bob --reset-code-file")
                     != std::string::npos,
                 reset.out.c_str());

        auto sessions = site.ctl({"session", "list"});
        QVERIFY2(sessions.code == kExitOk, sessions.err.c_str());
        QVERIFY(sessions.out.find("alice") != std::string::npos);
        QVERIFY(sessions.out.find("revoked") != std::string::npos);  // bob's, by the reset
        // Tables for people, JSON for scripts.
        const auto sessionsJson =
            nlohmann::json::parse(site.ctl({"session", "list", "--json"}).out);
        QVERIFY(std::any_of(sessionsJson.begin(), sessionsJson.end(), [](const auto& session) {
            return session["user"] == "bob" && session["revoked"] == true;
        }));
        const auto usersJson = nlohmann::json::parse(site.ctl({"user", "list", "--json"}).out);
        QVERIFY(std::any_of(usersJson.begin(), usersJson.end(), [](const auto& user) {
            return user["name"] == "alice" && user["grants"] == nlohmann::json::array({"admin"});
        }));

        // The last admin can not remove themselves.
        verifyOneSentenceError(site.ctl({"grant", "remove", "alice", "admin"}), "last admin");
        verifyOneSentenceError(site.ctl({"user", "disable", "alice"}), "last admin");
    }

    void refusalsAreOneSentenceAndAudited()
    {
        Site site;
        site.open();
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
        const std::string bundle = (site.root / "log.bundle").string();
        refuse({"audit", "export", "--out", bundle}, "bob", "lacks the permission", "audit.export");
        // An engineer changing the keyring.
        refuse({"keyring", "rotate", "datasets"}, "bob", "keyring.manage", "keyring.rotate");
        // Infrastructure operators hold no data permissions.
        site.addUser("dave", "operator");
        refuse({"grant", "add", "dave", "engineer"}, "alice", "may not also hold data permissions",
               "grant.create");
        // Admins hold no data, job, approval or audit roles, not even by their own grant.
        refuse({"grant", "add", "alice", "steward"}, "alice", "may not also hold data permissions",
               "grant.create");
        refuse({"grant", "add", "alice", "auditor"}, "alice", "may not also hold audit",
               "grant.create");
        // Someone not signed in here: refused before any call reaches the control plane.
        verifyOneSentenceError(site.ctl({"user", "list"}, "zoe"), "has not signed in");

        const auto entries = site.auditEntries("carol");
        auto next = entries.begin();
        for (const auto& refusal : refusals) {
            next = std::find_if(next, entries.end(), [&](const audit::Entry& entry) {
                return entry.outcome == audit::Outcome::Denied && entry.actor.id == refusal.actor
                       && entry.action == refusal.action && entry.reason == refusal.sentence;
            });
            QVERIFY2(next != entries.end(),
                     (refusal.actor + " " + refusal.action + ": " + refusal.sentence).c_str());
            ++next;
        }
    }

    // The passphrase goes to the control plane, which alone says whether it is right.
    void wrongPassphraseIsOneSentence()
    {
        Site site;
        QCOMPARE(site.init().code, kExitOk);
        const auto wrong = site.secretFile("wrong", "not the passphrase");
        const auto outcome = site.plain({"start", "--passphrase-file", wrong});
        verifyOneSentenceError(outcome, "passphrase");
        QVERIFY2(outcome.err.find("control.log") != std::string::npos, outcome.err.c_str());
        QVERIFY(readFile(site.client + "/run/control.log").find("passphrase") != std::string::npos);
        QVERIFY(!api::Profile(site.client).workstationPid());
        // A passphrase file others, or its group alone, may read is refused before anything
        // starts.
        for (const mode_t mode : {0644U, 0640U}) {
            ::chmod(site.passphraseFile.c_str(), mode);
            verifyOneSentenceError(site.start(), "chmod 600");
        }
        ::chmod(site.passphraseFile.c_str(), 0600);
        QCOMPARE(site.start().code, kExitOk);
        QCOMPARE(site.start().code, kExitOk);  // already running: said, not an error
        QVERIFY(site.start().out.find("already running") != std::string::npos);

        Site empty;
        verifyOneSentenceError(empty.start(), "sealtrainctl init");
        verifyOneSentenceError(empty.ctl({"user", "list"}), "sealtrainctl init");
    }

    void signedOutAndRevokedSessionsAreRefused()
    {
        Site site;
        site.open();
        site.addUser("bob", "engineer");
        site.addUser("carol", "auditor");

        QCOMPARE(site.ctl({"session", "revoke", "--user", "bob"}).code, kExitOk);
        const auto revoked = site.ctl({"user", "list"}, "bob");
        QCOMPARE(revoked.code, kExitFailure);
        // Told to sign in again, not that the control plane is out of reach (issue #29).
        QVERIFY2(revoked.err.find("sign in again") != std::string::npos, revoked.err.c_str());
        QVERIFY2(revoked.err.find("Cannot reach") == std::string::npos, revoked.err.c_str());
        QCOMPARE(site.ctl({"user", "disable", "carol"}).code, kExitOk);
        const std::string bundle = (site.root / "x.bundle").string();
        QCOMPARE(site.ctl({"audit", "export", "--out", bundle}, "carol").code, kExitFailure);
        QVERIFY(!fs::exists(bundle));

        // Signing out forgets the key and certificate; the next command says to sign in.
        QCOMPARE(site.ctl({"sign-out"}).code, kExitOk);
        QVERIFY(!fs::exists(site.client + "/alice.key"));
        QVERIFY(!fs::exists(site.client + "/alice.crt"));
        verifyOneSentenceError(site.ctl({"user", "list"}), "sign-in --user alice");
    }

    // Every user signed in here has a key and certificate of their own; the last sign-in does
    // not become everyone's identity.
    void sessionsOfTwoUsersCoexist()
    {
        Site site;
        site.open();
        // Alone, alice's session is the default.
        QCOMPARE(site.ctl({"user", "list"}, "").code, kExitOk);
        site.addUser("bob", "engineer");
        QCOMPARE(modeOf(site.client + "/alice.key"), 0600U);
        QCOMPARE(modeOf(site.client + "/bob.key"), 0600U);

        // With two, nobody's session is taken by default.
        verifyOneSentenceError(site.ctl({"user", "list"}, ""), "Several users have signed in");
        // Each acts as themselves: bob's sign-in did not make alice's commands his.
        QCOMPARE(site.ctl({"user", "list"}, "alice").code, kExitOk);
        verifyOneSentenceError(site.ctl({"user", "list"}, "bob"), "lacks the permission");
        ::setenv(api::kUserEnvironment, "alice", 1);
        const auto asAlice = site.ctl({"user", "list"}, "");
        ::unsetenv(api::kUserEnvironment);
        QVERIFY2(asAlice.code == kExitOk, asAlice.err.c_str());
        verifyOneSentenceError(site.ctl({"user", "list"}, "carol"), "'carol' has not signed in");
        verifyOneSentenceError(site.ctl({"user", "list"}, "../bob"), "user name");

        // bob signs out; alice's session stays and is the default again.
        QCOMPARE(site.ctl({"sign-out"}, "bob").code, kExitOk);
        QVERIFY(!fs::exists(site.client + "/bob.key"));
        QCOMPARE(site.ctl({"user", "list"}, "").code, kExitOk);
        const auto whoami = site.ctl({"whoami"}, "");
        QVERIFY2(whoami.out.starts_with("alice (session "), whoami.out.c_str());
        QVERIFY(whoami.out.find("warning: Four eyes is not guaranteed") != std::string::npos);
        // Her own permissions, as WhoAmI reports them (issue #29).
        QVERIFY2(whoami.out.find("  everywhere: grant.manage keyring.manage platform.backup "
                                 "role.manage session.manage user.manage")
                     != std::string::npos,
                 whoami.out.c_str());
    }

    // The admin hands out a one-time code, never the new password or TOTP secret; an admin's
    // reset needs a second admin.
    void resetThroughTheCommandLine()
    {
        Site site;
        site.open();
        site.addUser("bob", "engineer");
        const std::string codeFile = (site.root / "bob.code").string();
        auto reset = site.ctl({"user", "reset", "bob", "--code-file", codeFile});
        QVERIFY2(reset.code == kExitOk, reset.err.c_str());
        QCOMPARE(modeOf(codeFile), 0600U);
        QVERIFY(reset.out.find("rc_") == std::string::npos);
        // The old password and TOTP secret no longer sign in.
        verifyOneSentenceError(site.signIn("bob"), "may not sign in now");

        const auto newPassword = site.secretFile("bob-new", "a passphrase of his choosing");
        const auto newUri = site.uriFile("bob-new");
        auto completed = site.plain({"sign-in", "--user", "bob", "--reset-code-file", codeFile,
                                     "--password-file", newPassword, "--totp-uri-file", newUri});
        QVERIFY2(completed.code == kExitOk, completed.err.c_str());
        QVERIFY(readFile(newUri) != site.uris["bob"]);
        verifyOneSentenceError(site.plain({"sign-in", "--user", "bob", "--reset-code-file",
                                           codeFile, "--password-file", newPassword}),
                               "reset code is wrong");
        // A new secret: later codes come from it.
        site.uris["bob"] = readFile(newUri);
        auto in = site.signIn("bob", newPassword);
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
        QCOMPARE(site.ctl({"user", "list"}, "carl").code, kExitFailure);
        // Two admins now: nobody is told that four eyes is not guaranteed.
        QVERIFY(site.ctl({"whoami"}).out.find("warning") == std::string::npos);
    }

    // change-totp as a script runs it (no terminal): started with the password and a current
    // code, the new URI written to a private file, confirmed with --confirm and a code from it;
    // the old secret no longer signs in.
    void changeTotpThroughTheCommandLine()
    {
        Site site;
        site.open();
        site.addUser("bob", "engineer");
        const auto uri = site.uriFile("bob-next");
        auto started = site.ctl({"change-totp", "--password-file", site.passwordFile, "--totp-code",
                                 site.code("bob"), "--totp-uri-file", uri},
                                "bob");
        QVERIFY2(started.code == kExitOk, started.err.c_str());
        QCOMPARE(modeOf(uri), 0600U);
        QVERIFY(started.out.find("secret=") == std::string::npos);
        QVERIFY2(started.out.find("change-totp --confirm CODE") != std::string::npos,
                 started.out.c_str());
        const std::string oldUri = site.uris["bob"];
        site.uris["bob"] = readFile(uri);
        auto confirmed = site.ctl({"change-totp", "--confirm", site.code("bob")}, "bob");
        QVERIFY2(confirmed.code == kExitOk, confirmed.err.c_str());
        QVERIFY(confirmed.out.find("is yours now") != std::string::npos);
        QVERIFY(site.signIn("bob").code == kExitOk);
        site.uris["bob"] = oldUri;
        verifyOneSentenceError(site.signIn("bob"), "TOTP code is wrong");
        // Nothing waits now: a second confirmation says what to do.
        verifyOneSentenceError(site.ctl({"change-totp", "--confirm", "123456"}, "bob"),
                               "start the change again");
        QCOMPARE(site.ctl({"change-totp", "--confirm", "1", "--totp-code", "2"}, "bob").code,
                 kExitUsage);
    }

    void breakGlassNeedsAReasonAndADuration()
    {
        Site site;
        site.open();
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
        QVERIFY(site.ctl({"user", "list"}).out.find("auditor") != std::string::npos);
        // bob's export under the grant is flagged.
        const auto entries = site.auditEntries("bob");
        QVERIFY(std::any_of(entries.begin(), entries.end(), [](const audit::Entry& entry) {
            return entry.action == "audit.export"
                   && std::any_of(entry.details.begin(), entry.details.end(),
                                  [](const audit::Detail& d) { return d.name == "break_glass"; });
        }));
    }

    // What docs/operations/access-control.md tells script writers: the URI file and oathtool.
    void scriptsSignInWithOathtool()
    {
        if (QStandardPaths::findExecutable("oathtool").isEmpty())
            QSKIP("The oathtool command is not installed (scripts/setup installs it).");
        Site site;
        QCOMPARE(site.init().code, kExitOk);
        QCOMPARE(site.start().code, kExitOk);
        const auto uri = QString::fromStdString(site.uris["alice"]);
        const auto secret = QUrlQuery(QUrl(uri.trimmed())).queryItemValue("secret");
        QVERIFY(!secret.isEmpty());
        QProcess oathtool;
        // At the daemon's TOTP time (the test clock may be ahead: tests/support/totp_clock.h).
        const auto now = QDateTime::fromSecsSinceEpoch(
            std::chrono::duration_cast<std::chrono::seconds>(
                testing::TestTotpClock::instance().now().time_since_epoch())
                .count(),
            QTimeZone::utc());
        oathtool.start("oathtool", {"--totp", "-b", "--now",
                                    now.toString("yyyy-MM-dd HH:mm:ss") + " UTC", secret});
        QVERIFY(oathtool.waitForFinished(10000));
        QCOMPARE(oathtool.exitCode(), 0);
        const auto code = QString::fromLatin1(oathtool.readAllStandardOutput()).trimmed();
        auto in = site.plain({"sign-in", "--user", "alice", "--password-file", site.passwordFile,
                              "--totp-code", code.toStdString()});
        QVERIFY2(in.code == kExitOk, in.err.c_str());
    }

    // A restored backup of control.db would bring back a revoked session: the control plane
    // refuses the database once the witness file holds a newer head than the database's log.
    // `sealtrainctl backup` notes the archive as the profile's last backup (the note the
    // desktop's Backup tab reads); `backup last` says where it is and fails once it is gone or
    // when none was taken.
    void backupLastSaysWhereTheNewestIs()
    {
        Site site;
        site.open();
        const auto none = site.ctl({"backup", "last"});
        QCOMPARE(none.code, kExitFailure);
        QVERIFY2(none.err.find("no backup yet") != std::string::npos, none.err.c_str());
        const fs::path archive = site.root / "first.tar";
        const auto taken = site.ctl({"backup", "--out", archive.string()});
        QVERIFY2(taken.code == kExitOk, taken.err.c_str());
        const auto last = site.ctl({"backup", "last"});
        QVERIFY2(last.code == kExitOk, last.err.c_str());
        QVERIFY2(last.out.find("Last backup: " + fs::absolute(archive).string())
                     != std::string::npos,
                 last.out.c_str());
        QVERIFY2(last.out.find("minutes ago") != std::string::npos, last.out.c_str());
        fs::rename(archive, site.root / "moved.tar");
        const auto gone = site.ctl({"backup", "last"});
        QCOMPARE(gone.code, kExitFailure);
        QVERIFY2(gone.err.find("no longer at") != std::string::npos, gone.err.c_str());
    }

    // `sealtrainctl pending`: the requests waiting for a second admin, as text and JSON; an
    // engineer is refused in a sentence.
    void pendingListsWhatWaitsForASecondAdmin()
    {
        Site site;
        site.open();
        site.addUser("eve", "engineer");
        site.addUser("bea", "admin");
        const auto asked = site.ctl({"grant", "add", "eve", "approver"});
        QVERIFY2(asked.code == kExitOk, asked.err.c_str());
        const auto listed = site.ctl({"pending"}, "bea");
        QVERIFY2(listed.code == kExitOk, listed.err.c_str());
        QVERIFY2(listed.out.find("grant") != std::string::npos
                     && listed.out.find("approver") != std::string::npos
                     && listed.out.find("a second admin") != std::string::npos,
                 listed.out.c_str());
        const auto json = site.ctl({"pending", "--json"}, "bea");
        QVERIFY2(json.code == kExitOk, json.err.c_str());
        const auto requests = nlohmann::json::parse(json.out);
        QCOMPARE(requests.size(), std::size_t{1});
        QCOMPARE(requests[0]["subject"].get<std::string>(), std::string("eve"));
        QCOMPARE(requests[0]["requested_by"].get<std::string>(), std::string("alice"));
        const auto refused = site.ctl({"pending"}, "eve");
        QCOMPARE(refused.code, kExitFailure);
        QVERIFY2(refused.err.find("Only admins") != std::string::npos, refused.err.c_str());
    }

    void restoredDatabaseBackupIsRefused()
    {
        Site site;
        site.open();
        site.addUser("bob", "engineer");
        QCOMPARE(site.stop().code, kExitOk);
        const fs::path database = fs::path(site.data) / "control.db";
        const fs::path backup = site.root / "control.db.bak";
        fs::copy_file(database, backup);

        QCOMPARE(site.start().code, kExitOk);
        QCOMPARE(site.signIn("alice").code, kExitOk);
        QCOMPARE(site.ctl({"session", "revoke", "--user", "bob"}).code, kExitOk);
        QCOMPARE(site.stop().code, kExitOk);

        fs::copy_file(backup, database, fs::copy_options::overwrite_existing);
        verifyOneSentenceError(site.start(), "control.log");
        const std::string log = readFile(site.client + "/run/control.log");
        QVERIFY2(log.find("older copy") != std::string::npos, log.c_str());
        QVERIFY(!api::Profile(site.client).workstationPid());
    }

    // Rotating the database KEK re-keys the database while the control plane serves: the old
    // version no longer opens it.
    void rotatingTheDatabaseKekReKeysTheDatabase()
    {
        Site site;
        site.open();
        auto rotated = site.ctl({"keyring", "rotate", "database"});
        QVERIFY2(rotated.code == kExitOk, rotated.err.c_str());
        QVERIFY(rotated.out.find("re-keyed") != std::string::npos);
        QCOMPARE(site.ctl({"user", "list"}).code, kExitOk);
        QCOMPARE(site.ctl({"keyring", "retire", "database", "1"}).code, kExitOk);
        QCOMPARE(site.ctl({"user", "list"}).code, kExitOk);
        QCOMPARE(site.stop().code, kExitOk);
        auto keyring = crypto::Keyring::unlockWithPassphrase(
            site.data + "/keyring.json", testing::secret(testing::kSitePassphrase));
        QVERIFY(keyring.ok());
        QVERIFY(!keyring->findKek("database", 1).ok());  // retired: erased
        auto active = keyring->activeKek("database");
        QVERIFY(active.ok());
        QCOMPARE((*active)->version, 2U);
        QCOMPARE(site.start().code, kExitOk);
    }

    void everyCommandHasHelp_data()
    {
        QTest::addColumn<QStringList>("command");
        for (const auto& command :
             {QStringList{"start"}, QStringList{"stop"}, QStringList{"status"},
              QStringList{"sign-in"}, QStringList{"change-totp"}, QStringList{"user", "create"},
              QStringList{"user", "list"}, QStringList{"role", "create"},
              QStringList{"grant", "break-glass"}, QStringList{"session", "revoke"},
              QStringList{"user", "reset"}, QStringList{"audit", "export"},
              QStringList{"keyring", "rotate"}, QStringList{"dataset", "import"},
              QStringList{"job", "submit"}, QStringList{"worker", "list"},
              QStringList{"run", "metrics"}, QStringList{"run", "compare"}})
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
        QVERIFY(outcome.out.find("--client-dir") != std::string::npos);
    }

    // One command tree: no `remote`, and no command that opens a data directory but init.
    void thereIsOneCommandTree()
    {
        const auto help = runCtl({"--help"});
        QCOMPARE(help.code, kExitOk);
        QVERIFY(help.out.find("remote") == std::string::npos);
        QCOMPARE(runCtl({"remote", "user", "list"}).code, kExitUsage);
        for (const QStringList& command :
             {QStringList{"user", "list"}, QStringList{"keyring", "list"},
              QStringList{"dataset", "import"}, QStringList{"audit", "export"}}) {
            std::vector<std::string> args;
            for (const auto& word : command)
                args.push_back(word.toStdString());
            args.emplace_back("--help");
            const auto outcome = runCtl(args);
            QVERIFY2(outcome.out.find("--passphrase-file") == std::string::npos,
                     command.join(' ').toLatin1().constData());
            QVERIFY2(outcome.out.find("--data-dir") == std::string::npos,
                     command.join(' ').toLatin1().constData());
        }
    }
};

QTEST_GUILESS_MAIN(TestCtlWorkstation)
#include "test_ctl_workstation.moc"
