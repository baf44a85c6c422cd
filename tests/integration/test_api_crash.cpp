// sealtrain-control killed with SIGKILL during a stream of concurrent audited mutations (issue
// #15). Several client threads, each signed in as its own admin, create users (who redeem their
// codes), ask for a role for them (a request: with several admins it waits for a second one,
// issue #48) and withdraw it, and disable them through the client library; every acknowledged call
// is checked at once through an independent read connection to the database (an answer means
// committed, never "about to be"). The daemon is killed mid-stream, twice, and restarted on the
// same data directory. Afterwards every acknowledged mutation is in the database and in the audit
// log, the database holds exactly what the log's entries say (nothing unacknowledged is half there:
// no row without its entry, no entry without its row), and the log, its heads and its witness file
// verify.
#include "../support/totp_clock.h"
#include "../unit/core_fixture.h"
#include "sealtrain/api/client.h"
#include "sealtrain/audit/bundle.h"
#include "sealtrain/audit/entry.h"
#include "sealtrain/audit/witness.h"
#include "sealtrain/core/data_directory/data_directory.h"
#include "sealtrain/core/identity/totp.h"

#include <QThread>
#include <QtTest/QtTest>

#include <array>
#include <atomic>
#include <csignal>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string_view>
#include <sys/stat.h>
#include <thread>

using namespace sealtrain;

namespace {

constexpr const char* kPassphrase = "a long test passphrase for the keyring";
constexpr const char* kPassword = "a long test password for every one of the users";
constexpr int kClients = 4;
constexpr int kAcknowledgedBeforeKill = 40;  // per round, over all clients
constexpr int kRounds = 2;

// What a client does to each of its users, in this order: the user redeems their enrolment code,
// then the client (one of several admins) asks for a grant, which waits for a second admin and
// so is a request (issue #48), withdraws it and asks again, then disables the user.
constexpr std::array<std::string_view, 6> kSequence = {"user.create",   "user.complete_reset",
                                                       "grant.request", "grant.revoke",
                                                       "grant.request", "user.disable"};

crypto::SecretBytes secret(const std::string& text)
{
    return crypto::SecretBytes::fromBytes(
               {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()})
        .value();
}

core::KeyringUnlock passphraseUnlock()
{
    core::KeyringUnlock unlock;
    unlock.passphrase = [] { return crypto::SecretBytes::fromBytes(secret(kPassphrase).bytes()); };
    return unlock;
}

// One mutation: the audit action and the user it is about.
struct Mutation {
    std::string action;
    std::string user;
};

// The state of one target user as the database holds it, or as the log's entries imply it.
struct UserState {
    bool exists = false;
    bool redeemed = false;  // the user set their own credentials with the enrolment code
    bool engineer = false;  // a request for the engineer role waits for a second admin
    bool disabled = false;
    bool operator==(const UserState&) const = default;
};

}  // namespace

class TestApiCrash : public QObject {
    Q_OBJECT

    QTemporaryDir tmp_;
    std::filesystem::path dataDir_;
    std::string caPem_;
    std::optional<crypto::SecretBytes> databaseKey_;
    std::map<std::string, std::string> uris_;
    testing::TotpCodes codes_;
    QProcess daemon_;
    std::string address_;

    std::mutex recordLock_;
    std::vector<Mutation> acknowledged_;            // answered OK by the daemon
    std::map<std::string, int> acknowledgedCount_;  // by user
    std::map<std::string, int> inFlight_;           // by user: 1 when a call was never answered
    std::vector<std::string> failures_;

    // The next code of `user`: a step no earlier sign-in of theirs spent, the test clock moved
    // forward when it must be (tests/support/totp_clock.h).
    std::string code(const std::string& user) { return codes_.next(user, uris_.at(user)); }

    api::SignedIn signIn(const std::string& user)
    {
        auto client = api::ControlClient::connect({address_, "localhost", caPem_}, nullptr);
        if (!client)
            qFatal("connect: %s", client.error().message().c_str());
        auto signedIn = (*client)->sessions().signIn(user, secret(kPassword), code(user));
        if (!signedIn)
            qFatal("sign-in of %s: %s", user.c_str(), signedIn.error().message().c_str());
        return std::move(signedIn).value();
    }

    void startDaemon(int round)
    {
        const QString ready = tmp_.filePath(QString("ready-%1.json").arg(round));
        address_ = "unix:" + tmp_.filePath("control.sock").toStdString();
        daemon_.setProgram(QStringLiteral(SEALTRAIN_CONTROL_TEST_EXECUTABLE));
        daemon_.setArguments({"--data-dir", QString::fromStdString(dataDir_.string()), "--listen",
                              QString::fromStdString(address_), "--ready-file", ready});
        daemon_.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        daemon_.start();
        QVERIFY(daemon_.waitForStarted());
        daemon_.write(QByteArray(kPassphrase) + "\n");
        daemon_.closeWriteChannel();
        QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(ready), 60000);
    }

    void fail(const std::string& failure)
    {
        const std::lock_guard guard(recordLock_);
        failures_.push_back(failure);
    }

    // What an independent connection sees of `mutation` right after its acknowledgment: the
    // change must already be committed.
    static std::optional<std::string> visible(core::Database& reader, const Mutation& mutation)
    {
        auto state = readState(reader, mutation.user);
        if (!state)
            return state.error().message();
        const bool seen = mutation.action == "user.create"           ? state->exists
                          : mutation.action == "user.complete_reset" ? state->redeemed
                          : mutation.action == "grant.request"       ? state->engineer
                          : mutation.action == "grant.revoke"        ? !state->engineer
                                                                     : state->disabled;
        if (!seen)
            return mutation.action + " of " + mutation.user
                   + " was acknowledged before another connection could see it committed";
        return std::nullopt;
    }

    static Result<UserState> readState(core::Database& database, const std::string& user)
    {
        UserState state;
        auto found = database.queryOne(
            "SELECT u.disabled, (SELECT count(*) FROM pending_grants g WHERE g.user_id = u.id AND "
            "g.role = 'engineer' AND g.project = ''), u.reset_code_hash IS NULL FROM users u "
            "WHERE u.name = ?",
            {user}, [&](const core::Statement& row) {
                state.disabled = row.integer(0) != 0;
                state.engineer = row.integer(1) != 0;
                state.redeemed = row.integer(2) != 0;
            });
        if (!found)
            return found.error();
        state.exists = *found;
        return state;
    }

    // One client thread: its own session and channel, its own users, until the daemon dies.
    void mutate(int round, int client, const api::ClientIdentity& identity,
                const std::atomic<bool>& killed, std::atomic<int>& count)
    {
        auto reader = core::Database::open(dataDir_ / core::datadir::kDatabase, *databaseKey_);
        if (!reader)
            return fail("reader: " + reader.error().message());
        auto connection = api::ControlClient::connect({address_, "localhost", caPem_}, &identity);
        if (!connection)
            return fail("connect: " + connection.error().message());
        api::ControlClient& api = **connection;
        auto unsigned_ = api::ControlClient::connect({address_, "localhost", caPem_}, nullptr);
        if (!unsigned_)
            return fail("connect: " + unsigned_.error().message());
        api::ControlClient* anonymous = unsigned_->get();
        for (int i = 0;; ++i) {
            std::string code;
            const std::string user = "r" + std::to_string(round) + "c" + std::to_string(client)
                                     + "u" + std::to_string(i);
            for (const std::string_view step : kSequence) {
                const std::string action(step);
                {
                    const std::lock_guard guard(recordLock_);
                    inFlight_[user] = 1;
                }
                Result<void> done = success();
                if (action == "user.create") {
                    auto created = api.users().createUser(user);
                    done = created ? success() : Result<void>(created.error());
                    if (created)
                        code = created->enrolmentCode;
                } else if (action == "user.complete_reset") {
                    auto uri = anonymous->users().completeReset(user, code, secret(kPassword));
                    done = uri ? success() : Result<void>(uri.error());
                } else if (action == "grant.request") {
                    auto granted = api.access().grantRole(user, "engineer", "");
                    done =
                        !granted ? Result<void>(granted.error())
                        : granted->pending
                            ? success()
                            : Result<void>(Error(ErrorCode::Internal, "The grant was made by one "
                                                                      "admin of several."));
                } else if (action == "grant.revoke") {
                    auto revoked = api.access().revokeRole(user, "engineer", "");
                    done = revoked ? success() : Result<void>(revoked.error());
                } else {
                    auto disabled = api.users().disableUser(user);
                    done = disabled ? success() : Result<void>(disabled.error());
                }
                if (!done) {
                    if (!killed)
                        fail(std::string(action).append(" of ").append(user).append(": ").append(
                            done.error().message()));
                    return;
                }
                const Mutation mutation{action, user};
                if (auto invisible = visible(**reader, mutation))
                    fail(*invisible);
                const std::lock_guard guard(recordLock_);
                inFlight_[user] = 0;
                acknowledged_.push_back(mutation);
                ++acknowledgedCount_[user];
                ++count;
            }
        }
    }

    // Kills the daemon with SIGKILL once the clients have `kAcknowledgedBeforeKill` answers,
    // while they go on calling.
    void streamAndKill(int round)
    {
        std::vector<api::SignedIn> sessions;
        sessions.reserve(kClients);
        for (int client = 0; client < kClients; ++client)
            sessions.push_back(signIn("admin" + std::to_string(client)));
        std::atomic<bool> killed = false;
        std::atomic<int> count = 0;
        std::vector<std::thread> clients;
        clients.reserve(kClients);
        for (int client = 0; client < kClients; ++client)
            clients.emplace_back([&, client] {
                mutate(round, client, sessions[static_cast<std::size_t>(client)].identity, killed,
                       count);
            });
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
        while (count < kAcknowledgedBeforeKill && std::chrono::steady_clock::now() < deadline) {
            {
                const std::lock_guard guard(recordLock_);
                if (!failures_.empty())
                    break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
        killed = true;
        QCOMPARE(::kill(static_cast<pid_t>(daemon_.processId()), SIGKILL), 0);
        for (auto& thread : clients)
            thread.join();
        QVERIFY(daemon_.waitForFinished(30000));
        QCOMPARE(daemon_.exitStatus(), QProcess::CrashExit);
        QVERIFY2(failures_.empty(), failures_.empty() ? "" : failures_.front().c_str());
        QVERIFY(count >= kAcknowledgedBeforeKill);
    }

private slots:
    void initTestCase()
    {
        QVERIFY(tmp_.isValid());
        dataDir_ = std::filesystem::path(tmp_.path().toStdString()) / "data";
        core::NewDataDirectory request;
        request.path = dataDir_;
        request.passphrase = secret(kPassphrase);
        request.argon2 = crypto::kArgon2Floor;
        request.adminName = "alice";
        request.adminPassword = secret(kPassword);
        auto created = core::DataDirectory::create(request);
        QVERIFY2(created, created ? "" : created.error().message().c_str());
        uris_["alice"] = created->otpauthUri;
        {
            // Before the daemon owns it: one admin per client thread.
            auto platform = core::DataDirectory::open(dataDir_, passphraseUnlock(),
                                                      testing::testClockOptions());
            QVERIFY2(platform, platform ? "" : platform.error().message().c_str());
            auto& identity = (*platform)->controlPlane().identity();
            auto token = identity.signIn("alice", secret(kPassword), code("alice"));
            QVERIFY(token);
            // From the third admin on, admin0 makes the grant alice requested (issue #27).
            std::optional<std::string> second;
            for (int client = 0; client < kClients; ++client) {
                const std::string name = "admin" + std::to_string(client);
                auto enrolled = testing::enrolUser(identity, *token, name, secret(kPassword));
                QVERIFY(enrolled);
                uris_[name] = enrolled->otpauthUri;
                auto& access = (*platform)->controlPlane().access();
                auto granted = access.grantRole(*token, name, "admin", "");
                QVERIFY(granted);
                if (granted->pending) {
                    QVERIFY(second);
                    granted = access.grantRole(*second, name, "admin", "");
                    QVERIFY(granted && !granted->pending);
                }
                if (!second) {
                    auto signedIn = identity.signIn(name, secret(kPassword), code(name));
                    QVERIFY(signedIn);
                    second = std::move(signedIn).value();
                }
            }
            caPem_ = (*platform)->certificateAuthority().certificatePem();
            auto key = core::deriveDatabaseKey((*platform)->keyring());
            QVERIFY(key);
            databaseKey_ = std::move(*key);
            QVERIFY((*platform)->signPendingEntries());
        }
        QCOMPARE(::chmod(dataDir_.c_str(), 0700), 0);
    }

    void sigkillLosesNothingAcknowledged()
    {
        for (int round = 0; round < kRounds; ++round) {
            startDaemon(round);
            streamAndKill(round);
            if (QTest::currentTestFailed())
                return;
        }

        // Restarted on the same directory, the daemon serves every acknowledged change.
        startDaemon(kRounds);
        {
            const api::SignedIn alice = signIn("alice");
            auto client =
                api::ControlClient::connect({address_, "localhost", caPem_}, &alice.identity);
            QVERIFY(client);
            auto users = (*client)->users().listUsers();
            QVERIFY2(users, users ? "" : users.error().message().c_str());
            std::map<std::string, bool> disabled;
            for (const api::UserSummary& user : *users)
                disabled[user.name] = user.disabled;
            for (const Mutation& mutation : acknowledged_) {
                QVERIFY2(disabled.count(mutation.user) == 1, mutation.user.c_str());
                if (mutation.action == "user.disable")
                    QVERIFY2(disabled[mutation.user], mutation.user.c_str());
            }
        }
        ::kill(static_cast<pid_t>(daemon_.processId()), SIGTERM);
        QVERIFY(daemon_.waitForFinished(30000));
        QCOMPARE(daemon_.exitCode(), 0);
    }

    // The log verifies, holds every acknowledged mutation, and says exactly what the database
    // holds.
    void databaseAndLogAgree()
    {
        if (acknowledged_.empty())
            QSKIP("the stream did not run");
        auto platform = core::DataDirectory::open(dataDir_, passphraseUnlock());
        QVERIFY2(platform, platform ? "" : platform.error().message().c_str());
        const audit::AuditLog& log = (*platform)->controlPlane().auditLog();
        auto stored = log.store().readEntries(0, log.size());
        QVERIFY(stored);
        QCOMPARE(stored->size(), log.size());

        audit::LogVerifier verifier;
        std::map<std::string, UserState> replayed;
        std::map<std::string, std::vector<std::string>> actions;  // Ok entries by target user
        for (const audit::StoredEntry& bytes : *stored) {
            audit::Entry entry;
            auto added = verifier.add(bytes.bytes, entry);
            QVERIFY2(added, added ? "" : added.error().message().c_str());
            if (entry.target.id.rfind('r', 0) != 0 || entry.outcome != audit::Outcome::Ok)
                continue;
            UserState& state = replayed[entry.target.id];
            if (entry.action == "user.create")
                state.exists = true;
            else if (entry.action == "user.complete_reset")
                state.redeemed = true;
            else if (entry.action == "grant.request")
                state.engineer = true;
            else if (entry.action == "grant.revoke")
                state.engineer = false;
            else if (entry.action == "user.disable")
                state.disabled = true;
            actions[entry.target.id].push_back(entry.action);
        }
        QCOMPARE(verifier.root(), log.tree().rootAt(log.size()).value());

        // The database holds exactly what the entries say, for every user the clients touched.
        std::set<std::string> users;
        QVERIFY((*platform)->database().query(
            "SELECT name FROM users WHERE name LIKE 'r%'", {},
            [&](const core::Statement& row) { users.insert(row.text(0)); }));
        for (const auto& [user, state] : replayed)
            users.insert(user);
        for (const std::string& user : users) {
            auto state = readState((*platform)->database(), user);
            QVERIFY(state);
            QVERIFY2(*state == replayed[user],
                     (user + ": the database and its audit log disagree").c_str());
            // The entries follow the client's order; all acknowledged calls are among them, and
            // at most the one call that was never answered besides.
            const auto& done = actions[user];
            QVERIFY(done.size() <= kSequence.size());
            QVERIFY(std::equal(done.begin(), done.end(), kSequence.begin()));
            const auto answered = static_cast<std::size_t>(acknowledgedCount_[user]);
            QVERIFY2(done.size() >= answered, (user + ": an acknowledged call is missing").c_str());
            QVERIFY2(done.size() <= answered + static_cast<std::size_t>(inFlight_[user]),
                     (user + ": a call nobody made is in the log").c_str());
        }

        // The heads (in the database and the witness file) verify over the whole log.
        const auto heads = audit::readWitness(dataDir_ / core::datadir::kWitness);
        QVERIFY(heads);
        const auto bundle = audit::exportBundle((*platform)->controlPlane().auditLog(), {});
        QVERIFY(bundle);
        audit::VerifyOptions options;
        options.trustedKey = (*platform)->signingKey().publicKey().toPem();
        options.witnessHeads = *heads;
        const auto report = audit::verifyBundle(*bundle, options);
        QVERIFY2(report.ok(), report.ok() ? "" : report.errors.front().c_str());
        QCOMPARE(report.entriesVerified, static_cast<std::uint64_t>(stored->size()));
    }
};

QTEST_GUILESS_MAIN(TestApiCrash)
#include "test_api_crash.moc"
