// Identity against its attacks: a disabled user's old session, lockout with exponential
// back-off, TOTP replay, no oracle for user names or account states (the same sentence and one
// Argon2id computation for every refused sign-in), and resets that the user completes, with a
// second admin's approval for an admin; all on an injected clock.
#include "service_world.h"

#include "sealtrain/core/identity/password.h"
#include "sealtrain/core/store/sql_audit_store.h"

#include <QtTest/QtTest>

using namespace sealtrain;
using sealtrain::testing::kPassword;
using sealtrain::testing::secret;

class TestIdentity : public QObject {
    Q_OBJECT

private slots:
    void disabledUsersOldSessionIsRefused()
    {
        testing::ServiceWorld w;
        const auto engineer = w.session("engineer-user");
        const auto spec = crypto::sha256(asBytes("x"));
        QVERIFY(w.t.plane->submissions().submit(engineer, "job", "a", "", spec).ok());
        QVERIFY(w.t.plane->identity().disableUser(w.admin, "engineer-user").ok());
        auto refused = w.t.plane->submissions().submit(engineer, "job", "b", "", spec);
        QVERIFY(!refused.ok());
        QCOMPARE(refused.error().code(), ErrorCode::Unauthenticated);
        QCOMPARE(w.last().outcome, audit::Outcome::Denied);
        QCOMPARE(w.last().actor.id, std::string("engineer-user"));
        // A new sign-in is refused too, and audited.
        QVERIFY(w.session("engineer-user").empty());
        QCOMPARE(w.last().action, std::string("session.sign_in"));
        QCOMPARE(w.last().outcome, audit::Outcome::Denied);
        // Re-enabled, the user signs in again; the old session stays revoked.
        QVERIFY(w.t.plane->identity().enableUser(w.admin, "engineer-user").ok());
        QVERIFY(!w.session("engineer-user").empty());
        QVERIFY(!w.t.plane->submissions().submit(engineer, "job", "c", "", spec).ok());
    }

    void lockoutBacksOffExponentially()
    {
        testing::ServiceWorld w;
        const auto code = [&] {
            return core::totpCode(testing::totpSecretFromUri(w.uris["engineer-user"]),
                                  core::totpStep(w.t.clock.now()));
        };
        for (int i = 0; i < 5; ++i)
            QVERIFY(!w.t.plane->identity()
                         .signIn("engineer-user", secret("wrong password!!"), code())
                         .ok());
        QVERIFY(w.last().reason == "wrong password");
        // Locked for 30 s: even the right password is refused.
        w.t.clock.advance(std::chrono::seconds{10});
        auto locked = w.t.plane->identity().signIn("engineer-user", secret(kPassword), code());
        QVERIFY(!locked.ok());
        QVERIFY2(w.last().reason.starts_with("account locked for 20 more seconds"),
                 w.last().reason.c_str());
        w.t.clock.advance(std::chrono::seconds{25});
        // One more failure doubles the lock to 60 s.
        QVERIFY(!w.t.plane->identity()
                     .signIn("engineer-user", secret("wrong password!!"), code())
                     .ok());
        w.t.clock.advance(std::chrono::seconds{45});
        QVERIFY(!w.t.plane->identity().signIn("engineer-user", secret(kPassword), code()).ok());
        w.t.clock.advance(std::chrono::seconds{20});
        QVERIFY(w.t.plane->identity().signIn("engineer-user", secret(kPassword), code()).ok());
    }

    // Issue #27, item 9: failures lock an account only for the peer they came from. An
    // attacker who fails five times from one address locks it there, while its user signs in
    // from another, and over the Unix socket (local) whatever any network peer did. An account
    // keeps at most maxLockoutPeers network peers' counts (here 2): further peers share one, so
    // a flood from many addresses costs a bounded number of rows. The entries name nobody as
    // their actor, and the peer the failure counted against.
    void lockoutIsPerPeer()
    {
        core::ControlPlaneOptions options;
        options.maxLockoutPeers = 2;
        testing::ServiceWorld w(options);
        auto& identity = w.t.plane->identity();
        const std::string user = "engineer-user";
        const auto signInFrom = [&](const std::string& peer, const char* password) {
            return identity.signIn(user, secret(password), w.totpCode(user), peer).ok();
        };
        const std::string attacker = core::lockoutPeer("ipv4:203.0.113.7:50412");
        QCOMPARE(attacker, std::string("ipv4:203.0.113.7"));
        for (int i = 0; i < 5; ++i)
            QVERIFY(!signInFrom(attacker, "wrong password!!"));
        QCOMPARE(w.last().actor.id, std::string("unknown"));
        QCOMPARE(w.last().target.id, user);
        QCOMPARE(testing::detailOf(w.last(), "lockout_peer"), attacker);
        QVERIFY(!signInFrom(attacker, kPassword));
        QVERIFY2(w.last().reason.starts_with("account locked for"), w.last().reason.c_str());
        QVERIFY(signInFrom("ipv4:198.51.100.2", kPassword));
        QCOMPARE(w.last().actor.id, user);
        w.t.clock.advance(core::kTotpStep);
        QVERIFY(signInFrom(std::string(core::kLocalPeer), kPassword));

        // A second network peer is kept; every further one shares the count "other", which a
        // flood locks, but never the local peer.
        for (int i = 0; i < 5; ++i)
            QVERIFY(!signInFrom("ipv4:203.0.113.8", "wrong password!!"));
        for (int peer = 9; peer < 14; ++peer)
            QVERIFY(!signInFrom("ipv4:203.0.113." + std::to_string(peer), "wrong password!!"));
        QCOMPARE(testing::detailOf(w.last(), "lockout_peer"), std::string("other"));
        QVERIFY(!signInFrom("ipv4:198.51.100.99", kPassword));
        QVERIFY2(w.last().reason.starts_with("account locked for"), w.last().reason.c_str());
        const auto nextStep = core::totpCode(testing::totpSecretFromUri(w.uris[user]),
                                             core::totpStep(w.t.clock.now()) + 1);
        QVERIFY(identity.signIn(user, secret(kPassword), nextStep, std::string(core::kLocalPeer)));
        QCOMPARE(w.t.database->queryInteger("SELECT count(*) FROM sign_in_failures", {}).value(),
                 std::int64_t{3});
        // A day after a peer's last failure, with its lock over, its count is forgotten.
        w.t.clock.advance(std::chrono::hours{25});
        QVERIFY(!signInFrom("ipv4:192.0.2.1", "wrong password!!"));
        QCOMPARE(w.t.database->queryInteger("SELECT count(*) FROM sign_in_failures", {}).value(),
                 std::int64_t{1});
    }

    // What a lockout counts against: an IPv4 address without its port, an IPv6 /64, the Unix
    // socket and the process itself as local.
    void lockoutPeerOfTransportPeers()
    {
        QCOMPARE(core::lockoutPeer("ipv4:10.1.2.3:443"), std::string("ipv4:10.1.2.3"));
        QCOMPARE(core::lockoutPeer("ipv6:[2001:db8:1:2:aaaa::1]:50000"),
                 std::string("ipv6:2001:db8:1:2::/64"));
        QCOMPARE(core::lockoutPeer("ipv6:[2001:db8:1:2:bbbb::9]:1"),
                 std::string("ipv6:2001:db8:1:2::/64"));
        QCOMPARE(core::lockoutPeer("ipv6:[fe80::1%eth0]:22"), std::string("ipv6:fe80::/64"));
        QCOMPARE(core::lockoutPeer("unix:/run/sealtrain/control.sock"), std::string("local"));
        QCOMPARE(core::lockoutPeer(""), std::string("local"));
        for (const char* odd : {"ipv4:not-an-address:1", "ipv6:[zz]:1", "ipv6:[::1", "tcp:x"})
            QCOMPARE(core::lockoutPeer(odd), std::string("unknown"));
    }

    // The lock clears on a successful sign-in, on `user enable` and on `user reset`; the
    // back-off stops doubling at its cap (one hour); the refusal while locked is audited.
    void lockoutClearsAndStopsAtItsCap()
    {
        testing::ServiceWorld w;
        auto& identity = w.t.plane->identity();
        const auto fail = [&](const std::string& user) {
            QVERIFY(!identity.signIn(user, secret("wrong password!!"), w.totpCode(user)).ok());
        };
        // The right password and a fresh code, now.
        const auto signInNow = [&](const std::string& user) {
            return identity.signIn(user, secret(kPassword), w.totpCode(user)).ok();
        };
        const auto lock = [&](const std::string& user) {
            for (int i = 0; i < 5; ++i)
                fail(user);
            QVERIFY(!signInNow(user));
            QCOMPARE(w.last().action, std::string("session.sign_in"));
            QCOMPARE(w.last().outcome, audit::Outcome::Denied);
            QVERIFY2(w.last().reason.starts_with("account locked for"), w.last().reason.c_str());
        };
        // Success clears the count: four more failures after it do not lock. (No time passes
        // after them, so a lock would refuse the sign-in; the next step's code is in the drift
        // window and not used yet.)
        for (int i = 0; i < 4; ++i)
            fail("engineer-user");
        w.t.clock.advance(core::kTotpStep);
        QVERIFY(signInNow("engineer-user"));
        for (int i = 0; i < 4; ++i)
            fail("engineer-user");
        const auto nextStep = core::totpCode(testing::totpSecretFromUri(w.uris["engineer-user"]),
                                             core::totpStep(w.t.clock.now()) + 1);
        QVERIFY(identity.signIn("engineer-user", secret(kPassword), nextStep).ok());
        // `user enable` and `user reset` end a lock at once.
        lock("approver-user");
        QVERIFY(identity.enableUser(w.admin, "approver-user").ok());
        QVERIFY(signInNow("approver-user"));
        lock("auditor-user");
        auto reset = identity.resetUser(w.admin, "auditor-user");
        QVERIFY(reset.ok());
        auto enrolled = identity.completeReset("auditor-user", reset->resetCode, secret(kPassword));
        QVERIFY(enrolled.ok());
        w.uris["auditor-user"] = enrolled->otpauthUri;
        QVERIFY(signInNow("auditor-user"));
        // The cap: wait out each lock and fail again until the lock would pass one hour.
        lock("engineer-user");
        for (int i = 0; i < 10; ++i) {
            w.t.clock.advance(std::chrono::hours{2});
            fail("engineer-user");
        }
        const auto locked = w.last();
        const auto until =
            std::find_if(locked.details.begin(), locked.details.end(),
                         [](const audit::Detail& d) { return d.name == "locked_until"; });
        QVERIFY(until != locked.details.end());
        const auto now =
            std::chrono::duration_cast<std::chrono::seconds>(w.t.clock.now().time_since_epoch())
                .count();
        QCOMPARE(std::stoll(std::string(until->value.begin(), until->value.end())) - now,
                 std::int64_t{3600});
    }

    // A code from a step older than one already used is refused too (not only the same code):
    // a code seen over a shoulder a minute ago is no use after the user has signed in since.
    void olderTotpStepIsRefused()
    {
        testing::ServiceWorld w;
        w.t.clock.advance(core::kTotpStep * 4);
        const auto secretBytes = testing::totpSecretFromUri(w.uris["engineer-user"]);
        const auto step = core::totpStep(w.t.clock.now());
        // The next step (clock drift) is accepted and used…
        QVERIFY(
            w.t.plane->identity()
                .signIn("engineer-user", secret(kPassword), core::totpCode(secretBytes, step + 1))
                .ok());
        // …so the current and the previous step, both within the drift window, are refused.
        for (const auto older : {step, step - 1}) {
            auto refused = w.t.plane->identity().signIn("engineer-user", secret(kPassword),
                                                        core::totpCode(secretBytes, older));
            QVERIFY(!refused.ok());
            QCOMPARE(w.last().reason, std::string("TOTP code reused"));
        }
    }

    // A sign-in as a name nobody has is audited with the actor "unknown" and the name only as a
    // keyed hash under the audit key (it may be a password typed into the wrong field): a
    // reviewer holding the key can test a guess, the log's bytes never show it.
    void unknownUserIsAuditedOnlyAsAKeyedHash()
    {
        QTemporaryDir dir;
        testing::TestClock clock;
        const auto signingKey = crypto::SigningKey::generate().value();
        const auto auditKey =
            audit::AuditKey::create(
                crypto::SecretBytes::fromBytes(std::vector<std::uint8_t>(32, 0x3c)).value(),
                "audit-hmac-test")
                .value();
        auto database =
            core::Database::open((dir.path() + "/c.db").toStdString(), testing::databaseKey(3))
                .value();
        core::SqlAuditStore store(*database);
        auto plane =
            core::ControlPlane::open(*database, store, signingKey, &auditKey, clock).value();
        QVERIFY(plane->identity().init("alice", secret(kPassword)).ok());
        const std::string typed = "Tr0ub4dor&3-typed-as-a-name";
        auto refused = plane->identity().signIn(typed, secret(kPassword), "123456");
        QVERIFY(!refused.ok());

        const auto stored = store.readEntries(plane->auditLog().size() - 1, 1).value().front();
        const auto entry = audit::decodeEntry(stored.bytes).value();
        QCOMPARE(entry.action, std::string("session.sign_in"));
        QCOMPARE(entry.outcome, audit::Outcome::Denied);
        QCOMPARE(entry.actor.id, std::string("unknown"));
        QCOMPARE(entry.target.id, std::string("unknown"));
        const std::string bytes(stored.bytes.begin(), stored.bytes.end());
        QVERIFY(bytes.find(typed) == std::string::npos);
        QVERIFY(auditKey.matches(entry, "user_name", typed));
        QVERIFY(!auditKey.matches(entry, "user_name", "alice"));
    }

    void totpCodeCanNotBeReplayed()
    {
        testing::ServiceWorld w;
        w.t.clock.advance(core::kTotpStep);
        const auto code = core::totpCode(testing::totpSecretFromUri(w.uris["engineer-user"]),
                                         core::totpStep(w.t.clock.now()));
        QVERIFY(w.t.plane->identity().signIn("engineer-user", secret(kPassword), code).ok());
        auto replay = w.t.plane->identity().signIn("engineer-user", secret(kPassword), code);
        QVERIFY(!replay.ok());
        QCOMPARE(w.last().reason, std::string("TOTP code reused"));
    }

    // No oracle for user names or account states (issue #13 item 8): an unknown name, a
    // disabled, a locked and a reset account are refused with the sentence a wrong password
    // gets, each after exactly one Argon2id computation; only the audit entry says why.
    void everyRefusedSignInReadsAndCostsTheSame()
    {
        testing::ServiceWorld w;
        auto& identity = w.t.plane->identity();
        QVERIFY(identity.disableUser(w.admin, "approver-user").ok());
        for (int i = 0; i < 5; ++i)
            QVERIFY(!identity.signIn("engineer-user", secret("wrong password!!"), "000000").ok());
        w.addUser("rita", "auditor");
        QVERIFY(identity.resetUser(w.admin, "rita").ok());

        struct Attempt {
            std::string user;
            std::string reason;
        };
        const std::vector<Attempt> attempts{
            {"auditor-user", "wrong password"},
            {"nobody", "unknown user"},
            {"approver-user", "account disabled"},
            {"engineer-user", "account locked for"},
            {"rita", "account reset"},
        };
        std::string firstMessage;
        for (const auto& attempt : attempts) {
            const auto before = core::argon2idComputations();
            // The right password where the account has one: the state alone refuses.
            const auto password = attempt.user == "auditor-user" ? "wrong password!!" : kPassword;
            auto refused = identity.signIn(attempt.user, secret(password), "000000");
            QCOMPARE(core::argon2idComputations() - before, std::uint64_t{1});
            QVERIFY(!refused.ok());
            QCOMPARE(refused.error().code(), ErrorCode::Unauthenticated);
            if (firstMessage.empty())
                firstMessage = refused.error().message();
            QCOMPARE(refused.error().message(), firstMessage);
            QVERIFY(firstMessage.find(attempt.user) == std::string::npos);
            const auto entry = w.last();
            QCOMPARE(entry.action, std::string("session.sign_in"));
            QCOMPARE(entry.outcome, audit::Outcome::Denied);
            QCOMPARE(entry.actor.id, std::string("unknown"));
            QCOMPARE(entry.target.id, attempt.user == "nobody" ? "unknown" : attempt.user);
            QVERIFY2(entry.reason.starts_with(attempt.reason), entry.reason.c_str());

            // Finished without its password checked first, an attempt costs the same.
            const auto unchecked = identity.startSignIn(attempt.user);
            const auto beforeUnchecked = core::argon2idComputations();
            QVERIFY(!identity.finishSignIn(unchecked, secret(password), "000000").ok());
            QCOMPARE(core::argon2idComputations() - beforeUnchecked, std::uint64_t{1});
            QVERIFY2(w.last().reason.starts_with(attempt.reason), w.last().reason.c_str());
        }
    }

    // sealtrain-control checks the password before its group commit (startSignIn,
    // checkPassword, finishSignIn): the Argon2id computation is checkPassword's, finishing
    // spends none and audits what signIn audits, and a password checked against a hash that a
    // reset has since replaced is checked again, so the old password no longer signs in.
    void signInChecksThePasswordBeforeItsTransaction()
    {
        testing::ServiceWorld w;
        auto& identity = w.t.plane->identity();
        w.t.clock.advance(core::kTotpStep);

        auto attempt = identity.startSignIn("engineer-user");
        auto before = core::argon2idComputations();
        attempt.checkPassword(secret(kPassword));
        QCOMPARE(core::argon2idComputations() - before, std::uint64_t{1});
        before = core::argon2idComputations();
        auto token = identity.finishSignIn(attempt, secret(kPassword), w.totpCode("engineer-user"));
        QVERIFY2(token.ok(), token.ok() ? "" : token.error().message().c_str());
        QCOMPARE(core::argon2idComputations() - before, std::uint64_t{0});
        QVERIFY(identity.whoAmI(*token).ok());
        QCOMPARE(w.last().action, std::string("session.sign_in"));
        QCOMPARE(w.last().outcome, audit::Outcome::Ok);

        auto wrong = identity.startSignIn("auditor-user");
        wrong.checkPassword(secret("wrong password!!"));
        before = core::argon2idComputations();
        auto refused =
            identity.finishSignIn(wrong, secret("wrong password!!"), w.totpCode("auditor-user"));
        QVERIFY(!refused.ok());
        QCOMPARE(core::argon2idComputations() - before, std::uint64_t{0});
        QCOMPARE(w.last().outcome, audit::Outcome::Denied);
        QCOMPARE(w.last().reason, std::string("wrong password"));

        auto stale = identity.startSignIn("approver-user");
        stale.checkPassword(secret(kPassword));
        auto reset = identity.resetUser(w.admin, "approver-user");
        QVERIFY(reset.ok() && !reset->pending());
        auto enrolled = identity.completeReset("approver-user", reset->resetCode,
                                               secret("another long enough passphrase"));
        QVERIFY(enrolled.ok());
        w.uris["approver-user"] = enrolled->otpauthUri;
        w.t.clock.advance(core::kTotpStep);
        before = core::argon2idComputations();
        auto old = identity.finishSignIn(stale, secret(kPassword), w.totpCode("approver-user"));
        QVERIFY(!old.ok());
        QCOMPARE(core::argon2idComputations() - before, std::uint64_t{1});
        QCOMPARE(w.last().reason, std::string("wrong password"));
    }

    // Issue #48 item 4: wrong codes sent without a session cost the log one entry per peer and
    // window, like every anonymous refusal, and name nobody as their actor; the count is written
    // when the window has passed.
    void resetCodeRefusalsAreCounted()
    {
        testing::ServiceWorld w;
        auto& identity = w.t.plane->identity();
        QVERIFY(identity.createUser(w.admin, "target"));
        const auto before = w.t.plane->auditLog().size();
        for (int i = 0; i < 50; ++i)
            QVERIFY(!identity.completeReset("target", "rc_guess" + std::to_string(i),
                                            secret("my own new passphrase")));
        QCOMPARE(w.t.plane->auditLog().size(), before + 1);
        QCOMPARE(w.last().actor.id, std::string("unknown"));
        QCOMPARE(w.last().target.id, std::string("target"));
        QCOMPARE(w.last().reason, std::string("wrong reset code"));
        w.t.clock.advance(std::chrono::seconds{11});
        QVERIFY(w.t.plane->flushAnonymousRefusals(false));
        QCOMPARE(w.t.plane->auditLog().size(), before + 2);
        QCOMPARE(testing::detailOf(w.last(), "repeated"), std::string("49"));
        QCOMPARE(w.last().action, std::string("user.complete_reset"));
    }

    // Issue #13 item 7: a reset leaves no password and no TOTP secret; the old ones no longer
    // work, and the user alone chooses the new ones with the one-time code.
    void resetUserSetsTheirOwnCredentials()
    {
        testing::ServiceWorld w;
        auto& identity = w.t.plane->identity();
        const auto oldUri = w.uris["engineer-user"];
        const auto oldSession = w.session("engineer-user");
        QVERIFY(!oldSession.empty());
        auto reset = identity.resetUser(w.admin, "engineer-user");
        QVERIFY(reset.ok());
        QVERIFY(!reset->pending());
        QVERIFY(reset->resetCode.starts_with("rc_"));
        QCOMPARE(w.last().action, std::string("user.reset"));
        QCOMPARE(w.last().outcome, audit::Outcome::Ok);
        // The old session, and the old password with the old TOTP secret, are refused.
        // (Refused as a session that is no longer valid, not for lack of a permission.)
        auto afterReset = w.t.plane->identity().signOut(oldSession);
        QVERIFY(!afterReset.ok());
        QCOMPARE(afterReset.error().code(), ErrorCode::Unauthenticated);
        QVERIFY(w.t.signIn("engineer-user", kPassword, oldUri).empty());
        QVERIFY(w.last().reason.starts_with("account reset"));

        // A wrong code, and the right code for another user, are refused and audited.
        const auto completeRefused = [&](const std::string& user, const std::string& code,
                                         const std::string& reason) {
            // Past the window in which anonymous refusals from one peer are counted, so that each
            // is written as itself (resetCodeRefusalsAreCounted).
            w.t.clock.advance(std::chrono::seconds{11});
            auto refused = identity.completeReset(user, code, secret("my own new passphrase"));
            QVERIFY(!refused.ok());
            QVERIFY(isOneSentence(refused.error().message()));
            const auto entry = w.last();
            QCOMPARE(entry.action, std::string("user.complete_reset"));
            QCOMPARE(entry.outcome, audit::Outcome::Denied);
            QCOMPARE(entry.reason, reason);
            // Nobody was authenticated (issue #48): anonymous, against the account named.
            QCOMPARE(entry.actor.id, std::string("unknown"));
            QCOMPARE(entry.target.id, user == "nobody" ? std::string("unknown") : user);
        };
        completeRefused("engineer-user", "rc_guessed", "wrong reset code");
        completeRefused("auditor-user", reset->resetCode, "no reset is open");
        completeRefused("nobody", reset->resetCode, "unknown user");

        auto enrolled = identity.completeReset("engineer-user", reset->resetCode,
                                               secret("my own new passphrase"));
        QVERIFY2(enrolled.ok(), enrolled.ok() ? "" : enrolled.error().message().c_str());
        QVERIFY(enrolled->otpauthUri != oldUri);
        QCOMPARE(w.last().outcome, audit::Outcome::Ok);
        QCOMPARE(w.last().actor.id, std::string("engineer-user"));
        // The code works once.
        completeRefused("engineer-user", reset->resetCode, "no reset is open");
        // Old password with the new secret, new password with the old secret: refused.
        QVERIFY(w.t.signIn("engineer-user", kPassword, enrolled->otpauthUri).empty());
        QCOMPARE(w.last().reason, std::string("wrong password"));
        QVERIFY(w.t.signIn("engineer-user", "my own new passphrase", oldUri).empty());
        QCOMPARE(w.last().reason, std::string("wrong TOTP code"));
        QVERIFY(
            !w.t.signIn("engineer-user", "my own new passphrase", enrolled->otpauthUri).empty());
    }

    // Issue #13 item 7: resetting someone who administers identities waits for a second admin,
    // who is neither the one who asked nor the admin being reset.
    void adminResetWaitsForASecondAdmin()
    {
        testing::ServiceWorld w;
        auto& identity = w.t.plane->identity();
        w.addUser("bea", "admin");
        w.addUser("cy", "admin");
        const auto bea = w.session("bea");
        const auto cy = w.session("cy");
        QVERIFY(!bea.empty() && !cy.empty());

        auto requested = identity.resetUser(w.admin, "bea");
        QVERIFY(requested.ok());
        QVERIFY(requested->pending());
        QCOMPARE(w.last().action, std::string("user.reset"));
        QVERIFY(std::find(w.last().details.begin(), w.last().details.end(),
                          audit::textDetail("approval", "pending"))
                != w.last().details.end());
        // Not in effect yet: bea's session and credentials still work.
        QVERIFY(w.t.plane->identity().listUsers(bea).ok());
        QVERIFY(!w.session("bea").empty());

        // The requester can not approve, nor can bea herself.
        verifyDenied(w, identity.approveReset(w.admin, "bea"), "user.reset_approve");
        QCOMPARE(w.last().actor.id, std::string("alice"));
        QVERIFY(w.last().reason.find("yourself") != std::string::npos);
        verifyDenied(w, identity.approveReset(bea, "bea"), "user.reset_approve");
        QCOMPARE(w.last().actor.id, std::string("bea"));
        QVERIFY(w.last().reason.find("own account") != std::string::npos);
        QVERIFY(!w.session("bea").empty());

        // A second admin approves: now it takes effect.
        auto approved = identity.approveReset(cy, "bea");
        QVERIFY2(approved.ok(), approved.ok() ? "" : approved.error().message().c_str());
        QVERIFY(!approved->pending());
        QCOMPARE(w.last().action, std::string("user.reset_approve"));
        QCOMPARE(w.last().outcome, audit::Outcome::Ok);
        QVERIFY(std::find(w.last().details.begin(), w.last().details.end(),
                          audit::textDetail("requested_by", "alice"))
                != w.last().details.end());
        QVERIFY(!w.t.plane->identity().listUsers(bea).ok());
        QVERIFY(w.session("bea").empty());
        // Approved once: there is nothing left to approve.
        QVERIFY(!identity.approveReset(cy, "bea").ok());
        QVERIFY(
            identity.completeReset("bea", approved->resetCode, secret("a fresh passphrase of hers"))
                .ok());
    }
};

QTEST_APPLESS_MAIN(TestIdentity)
#include "test_core_identity.moc"
