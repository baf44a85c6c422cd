// Replacing one's own TOTP secret (core/identity/totp_change.cpp) against its attacks, on an
// injected clock: a stolen session alone starts nothing (the password and a fresh code from the
// current secret are both needed, and a wrong one ends the session); the new secret counts only
// once a code from it confirms it, within ten minutes and three wrong codes; confirming ends the
// user's other sessions, spends the confirming code, and the old secret stops working.
#include "service_world.h"

#include "sealtrain/core/identity/identity.h"

#include <QtTest/QtTest>

using namespace sealtrain;
using sealtrain::testing::kPassword;
using sealtrain::testing::secret;

namespace {

std::string codeAt(const std::string& uri, const testing::TestClock& clock, std::int64_t offset = 0)
{
    const auto step =
        static_cast<std::uint64_t>(static_cast<std::int64_t>(core::totpStep(clock.now())) + offset);
    return core::totpCode(testing::totpSecretFromUri(uri), step);
}

// startTotpChange, TotpChange::check and finishTotpStart in a row, as the daemon runs them.
Result<core::PendingTotp> startChange(core::Identity& identity, const std::string& session,
                                      const std::string& password, const std::string& code)
{
    core::TotpChange change = identity.startTotpChange(session);
    change.check(secret(password));
    return identity.finishTotpStart(change, code);
}

}  // namespace

class TestTotpChange : public QObject {
    Q_OBJECT

private slots:
    void replacingTheSecret()
    {
        testing::ServiceWorld w;
        auto& identity = w.t.plane->identity();
        const std::string oldUri = w.uris["engineer-user"];
        const auto kept = w.session("engineer-user");
        const auto other = w.session("engineer-user");
        w.t.clock.advance(core::kTotpStep);
        auto pending = startChange(identity, kept, kPassword, codeAt(oldUri, w.t.clock));
        QVERIFY2(pending, pending ? "" : pending.error().message().c_str());
        QVERIFY(pending->enrollment.otpauthUri.starts_with("otpauth://totp/"));
        QCOMPARE(pending->enrollment.user, std::string("engineer-user"));
        const std::int64_t now =
            std::chrono::duration_cast<std::chrono::seconds>(w.t.clock.now().time_since_epoch())
                .count();
        QCOMPARE(pending->expires, now + core::kTotpChangeLifetimeSeconds);
        QCOMPARE(w.last().action, std::string("user.totp_start"));
        QCOMPARE(w.last().outcome, audit::Outcome::Ok);
        // The entry names the change, never the secret.
        const std::string uri = pending->enrollment.otpauthUri;
        const std::string encoded = uri.substr(uri.find("secret=") + 7, 32);
        for (const auto& detail : w.last().details)
            QVERIFY(std::string(detail.value.begin(), detail.value.end()).find(encoded)
                    == std::string::npos);

        // Until confirmed, the old secret is the one that signs in.
        w.t.clock.advance(core::kTotpStep);
        QVERIFY(!identity.signIn("engineer-user", secret(kPassword), codeAt(uri, w.t.clock)));
        const std::string confirming = codeAt(uri, w.t.clock);
        auto ended = identity.confirmTotpChange(kept, confirming);
        QVERIFY2(ended, ended ? "" : ended.error().message().c_str());
        QCOMPARE(*ended, std::uint32_t{1});
        QCOMPARE(w.last().action, std::string("user.totp_confirm"));
        QCOMPARE(testing::detailOf(w.last(), "sessions_ended"), std::string("1"));
        QVERIFY(identity.whoAmI(kept));
        QCOMPARE(identity.whoAmI(other).error().code(), ErrorCode::Unauthenticated);

        // The confirming code is spent; the old secret signs nobody in; the new one does.
        QVERIFY(!identity.signIn("engineer-user", secret(kPassword), confirming));
        w.t.clock.advance(core::kTotpStep);
        QVERIFY(!identity.signIn("engineer-user", secret(kPassword), codeAt(oldUri, w.t.clock)));
        QVERIFY(identity.signIn("engineer-user", secret(kPassword), codeAt(uri, w.t.clock)));
        // Nothing is left waiting: a second confirmation has nothing to confirm.
        w.t.clock.advance(core::kTotpStep);
        auto again = identity.confirmTotpChange(kept, codeAt(uri, w.t.clock));
        QCOMPARE(again.error().code(), ErrorCode::FailedPrecondition);
    }

    // Someone holding only a session (a stolen certificate, an unlocked screen) can not move the
    // second factor to a device of theirs: each wrong factor ends the session, audited.
    void aSessionAloneStartsNothing()
    {
        testing::ServiceWorld w;
        auto& identity = w.t.plane->identity();
        const std::string uri = w.uris["engineer-user"];

        auto session = w.session("engineer-user");
        w.t.clock.advance(core::kTotpStep);
        auto wrongPassword =
            startChange(identity, session, "not the password at all", codeAt(uri, w.t.clock));
        QCOMPARE(wrongPassword.error().code(), ErrorCode::Unauthenticated);
        QVERIFY(wrongPassword.error().message().find("sign in again") != std::string::npos);
        QCOMPARE(w.last().outcome, audit::Outcome::Denied);
        QVERIFY(w.last().reason.starts_with("wrong password"));
        QCOMPARE(identity.whoAmI(session).error().code(), ErrorCode::Unauthenticated);

        session = w.session("engineer-user");
        // A code from long ago, then the code the sign-in just used.
        auto wrongCode = startChange(identity, session, kPassword, codeAt(uri, w.t.clock, -40));
        QCOMPARE(wrongCode.error().code(), ErrorCode::Unauthenticated);
        QVERIFY(w.last().reason.starts_with("wrong TOTP code"));
        QVERIFY(!identity.whoAmI(session));

        session = w.session("engineer-user");
        auto reused = startChange(identity, session, kPassword, codeAt(uri, w.t.clock));
        QCOMPARE(reused.error().code(), ErrorCode::Unauthenticated);
        QVERIFY(w.last().reason.starts_with("TOTP code reused"));
        QVERIFY(!identity.whoAmI(session));

        // Nothing was started: there is nothing to confirm, and the old secret still signs in.
        session = w.session("engineer-user");
        QVERIFY(!session.empty());
        auto nothing = identity.confirmTotpChange(session, codeAt(uri, w.t.clock));
        QCOMPARE(nothing.error().code(), ErrorCode::FailedPrecondition);
        QCOMPARE(w.last().outcome, audit::Outcome::Failed);

        // No session at all: refused and audited before anything is read.
        auto anonymous = startChange(identity, "st_forged", kPassword, codeAt(uri, w.t.clock));
        QCOMPARE(anonymous.error().code(), ErrorCode::Unauthenticated);
        QCOMPARE(identity.confirmTotpChange("st_forged", "123456").error().code(),
                 ErrorCode::Unauthenticated);
    }

    // Guessing the new secret's code is bounded: the third wrong code discards it, and the old
    // secret holds.
    void wrongConfirmationsAreBounded()
    {
        testing::ServiceWorld w;
        auto& identity = w.t.plane->identity();
        const std::string oldUri = w.uris["engineer-user"];
        const auto session = w.session("engineer-user");
        w.t.clock.advance(core::kTotpStep);
        auto pending = startChange(identity, session, kPassword, codeAt(oldUri, w.t.clock));
        QVERIFY(pending);
        const std::string uri = pending->enrollment.otpauthUri;
        for (std::int64_t attempt = 1; attempt <= core::kTotpConfirmAttempts; ++attempt) {
            auto wrong = identity.confirmTotpChange(session, codeAt(uri, w.t.clock, -40 - attempt));
            QCOMPARE(wrong.error().code(), ErrorCode::PermissionDenied);
            QCOMPARE(w.last().outcome, audit::Outcome::Denied);
            QCOMPARE(testing::detailOf(w.last(), "wrong_codes"), std::to_string(attempt));
            const bool last = attempt == core::kTotpConfirmAttempts;
            QCOMPARE(wrong.error().message().find("start the change again") != std::string::npos,
                     last);
        }
        // Wrong codes do not end the session (it proved both factors moments ago)...
        QVERIFY(identity.whoAmI(session));
        // ...but the discarded secret's right code confirms nothing now.
        auto late = identity.confirmTotpChange(session, codeAt(uri, w.t.clock));
        QCOMPARE(late.error().code(), ErrorCode::FailedPrecondition);
        w.t.clock.advance(core::kTotpStep);
        QVERIFY(identity.signIn("engineer-user", secret(kPassword), codeAt(oldUri, w.t.clock)));
    }

    // The new secret waits ten minutes; an admin's reset discards it with everything else.
    void aPendingSecretLapses()
    {
        testing::ServiceWorld w;
        auto& identity = w.t.plane->identity();
        const std::string oldUri = w.uris["engineer-user"];
        auto session = w.session("engineer-user");
        w.t.clock.advance(core::kTotpStep);
        auto pending = startChange(identity, session, kPassword, codeAt(oldUri, w.t.clock));
        QVERIFY(pending);
        w.t.clock.advance(std::chrono::seconds(core::kTotpChangeLifetimeSeconds));
        // Still signed in (each call within the idle limit keeps the session alive).
        QVERIFY(identity.whoAmI(session));
        auto lapsed =
            identity.confirmTotpChange(session, codeAt(pending->enrollment.otpauthUri, w.t.clock));
        QCOMPARE(lapsed.error().code(), ErrorCode::FailedPrecondition);
        QVERIFY(lapsed.error().message().find("lapsed") != std::string::npos);

        // Started again, then reset by the admin: the reset's new credentials are all there is.
        w.t.clock.advance(core::kTotpStep);
        pending = startChange(identity, session, kPassword, codeAt(oldUri, w.t.clock));
        QVERIFY(pending);
        const auto admin = w.session("alice");
        auto reset = identity.resetUser(admin, "engineer-user");
        QVERIFY2(reset, reset ? "" : reset.error().message().c_str());
        QVERIFY(!reset->pending());
        auto enrolled =
            identity.completeReset("engineer-user", reset->resetCode, secret(kPassword));
        QVERIFY(enrolled);
        w.uris["engineer-user"] = enrolled->otpauthUri;
        session = w.session("engineer-user");
        QVERIFY(!session.empty());
        auto stale =
            identity.confirmTotpChange(session, codeAt(pending->enrollment.otpauthUri, w.t.clock));
        QCOMPARE(stale.error().code(), ErrorCode::FailedPrecondition);
    }
};

QTEST_GUILESS_MAIN(TestTotpChange)
#include "test_core_totp_change.moc"
