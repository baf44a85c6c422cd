// The calls a desktop client needs (issue #29), against a running sealtrain-control: WhoAmI with
// the caller's effective permissions and the session's limits, the audit log browsed page by page
// with filters (every page audited, refused to those without audit.read, bounded), and the live
// log verified in the control plane. After SIGTERM the log holds every look and refusal.
#include "daemon_fixture.h"

#include "sealtrain/api/client.h"
#include "sealtrain/audit/tree_head.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/base/version.h"
#include "sealtrain/core/access/permissions.h"
#include "sealtrain/core/identity/totp.h"
#include "sealtrain/crypto/signing.h"

#include "sealtrain/v1/control.grpc.pb.h"

#include <grpcpp/grpcpp.h>

#include <QtTest/QtTest>

#include <algorithm>
#include <chrono>
#include <set>
#include <string>
#include <tuple>

using namespace sealtrain;

class TestApiDesktop : public QObject {
    Q_OBJECT

    QTemporaryDir tmp_;
    testing::DaemonFixture daemon_;

    static std::int64_t now()
    {
        return std::chrono::duration_cast<std::chrono::seconds>(
                   std::chrono::system_clock::now().time_since_epoch())
            .count();
    }

private slots:
    void initTestCase()
    {
        QVERIFY(tmp_.isValid());
        daemon_.create(tmp_.path().toStdString(), "alice",
                       {{"carol", "admin"},
                        {"bob", "engineer"},
                        {"rita", "auditor"},
                        {"dora", "engineer"},
                        {"erin", "engineer"}});
        daemon_.start();
    }

    // A client decides which screens to show from WhoAmI: the permissions each grant gives,
    // global or per project, and when the session ends.
    void whoAmIReportsPermissionsAndLimits()
    {
        auto alice = daemon_.as("alice")->sessions().whoAmI();
        QVERIFY2(alice, alice ? "" : alice.error().message().c_str());
        QVERIFY(alice->holds("user.manage"));
        QVERIFY(alice->holds("keyring.manage"));
        QVERIFY(!alice->holds("job.submit"));
        QVERIFY(!alice->holds("audit.read"));
        QVERIFY(alice->permissions.count("") == 1);
        QVERIFY(!alice->breakGlass);

        // bob: an engineer globally; a project grant shows under its project (two admins: alice
        // asks, carol makes it, issue #48).
        QVERIFY(daemon_.as("alice")->access().grantRole("bob", "engineer", "vision")->pending);
        QVERIFY(!daemon_.as("carol")->access().grantRole("bob", "engineer", "vision")->pending);
        auto bob = daemon_.as("bob")->sessions().whoAmI();
        QVERIFY2(bob, bob ? "" : bob.error().message().c_str());
        QVERIFY(bob->holds("job.submit"));
        QVERIFY(bob->holds("job.submit", "vision"));
        QVERIFY(!bob->holds("user.manage"));
        QVERIFY(!bob->holds("audit.read"));
        QVERIFY(bob->permissions.count("vision") == 1);
        const auto& global = bob->permissions.at("");
        QVERIFY(std::is_sorted(global.begin(), global.end()));

        // The limits: the idle expiry ahead by about the idle limit, the absolute one later.
        QVERIFY(bob->idleTimeoutSeconds > 0);
        QVERIFY(bob->idleExpiresUnix > now());
        QVERIFY(bob->idleExpiresUnix <= now() + bob->idleTimeoutSeconds + 5);
        QVERIFY(bob->absoluteExpiresUnix >= bob->idleExpiresUnix);
        // The certificate lasts exactly as long as the reply says (not 300 s less).
        QVERIFY(bob->expiresUnix > 0 && bob->expiresUnix <= bob->absoluteExpiresUnix + 5);

        auto rita = daemon_.as("rita")->sessions().whoAmI();
        QVERIFY(rita && rita->holds("audit.read") && rita->holds("audit.export"));
        QVERIFY(!rita->holds("job.submit"));
    }

    // Pages of decoded entries, newest first by default: each page continues where the last
    // stopped, none overlap, and together they are the whole log; filters select by actor,
    // action and outcome; oldest first starts at entry 0.
    void auditPagesCoverTheLogWithoutOverlap()
    {
        auto bob = daemon_.as("bob");
        for (int i = 0; i < 3; ++i)
            QVERIFY(!bob->users().listUsers());  // three refusals to find later
        auto rita = daemon_.as("rita");
        std::set<std::uint64_t> seen;
        std::uint64_t cursor = 0;
        std::uint64_t previous = UINT64_MAX;
        std::uint64_t size = 0;
        int pages = 0;
        do {
            api::AuditQueryOptions options;
            options.limit = 7;
            options.cursor = cursor;
            auto page = rita->audit().queryAudit(options);
            QVERIFY2(page, page ? "" : page.error().message().c_str());
            QVERIFY(page->entries.size() <= 7);
            if (pages == 0)
                size = page->logSize;
            for (const api::AuditEntryView& entry : page->entries) {
                QVERIFY(entry.sequence < previous);  // newest first, no overlap
                previous = entry.sequence;
                QVERIFY(seen.insert(entry.sequence).second);
                QVERIFY(!entry.action.empty() && !entry.outcome.empty());
            }
            cursor = page->nextCursor;
            ++pages;
        } while (cursor != 0 && pages < 1000);
        QVERIFY(size > 10);
        // Every entry up to the size the first page saw (the pages' own looks come after).
        for (std::uint64_t s = 0; s < size; ++s)
            QVERIFY2(seen.count(s) == 1, qPrintable(QString::number(s)));

        api::AuditQueryOptions denied;
        denied.selection.actor = "bob";
        denied.selection.action = "user.list";
        denied.outcome = "denied";
        auto refusals = rita->audit().queryAudit(denied);
        QVERIFY2(refusals, refusals ? "" : refusals.error().message().c_str());
        QCOMPARE(refusals->entries.size(), std::size_t{3});
        for (const api::AuditEntryView& entry : refusals->entries) {
            QCOMPARE(entry.actor, std::string("bob"));
            QCOMPARE(entry.outcome, std::string("denied"));
            QVERIFY(entry.reason.find("user.manage") != std::string::npos);
            QVERIFY(std::any_of(entry.details.begin(), entry.details.end(),
                                [](const api::AuditDetailView& d) { return d.name == "peer"; }));
        }

        api::AuditQueryOptions oldest;
        oldest.oldestFirst = true;
        oldest.limit = 3;
        auto first = rita->audit().queryAudit(oldest);
        QVERIFY(first && first->entries.size() == 3);
        QCOMPARE(first->entries[0].sequence, std::uint64_t{0});
        QCOMPARE(first->entries[2].sequence, std::uint64_t{2});
        QCOMPARE(first->nextCursor, std::uint64_t{3});
    }

    // Only audit.read browses; a page is bounded; every look is in the log with its filter.
    void auditQueryIsGuardedAndBounded()
    {
        auto bob = daemon_.as("bob")->audit().queryAudit({});
        QVERIFY(!bob);
        QCOMPARE(bob.error().code(), ErrorCode::PermissionDenied);
        auto anonymous = daemon_.anonymous()->audit().queryAudit({});
        QVERIFY(!anonymous);
        QCOMPARE(anonymous.error().code(), ErrorCode::Unauthenticated);

        api::AuditQueryOptions huge;
        huge.limit = 5000;
        auto tooMany = daemon_.as("rita")->audit().queryAudit(huge);
        QVERIFY(!tooMany);
        QCOMPARE(tooMany.error().code(), ErrorCode::InvalidArgument);
        QVERIFY(isOneSentence(tooMany.error().message()));
        api::AuditQueryOptions odd;
        odd.outcome = "maybe";
        auto badOutcome = daemon_.as("rita")->audit().queryAudit(odd);
        QVERIFY(!badOutcome);
        QCOMPARE(badOutcome.error().code(), ErrorCode::InvalidArgument);

        api::AuditQueryOptions looks;
        looks.selection.action = "audit.read";
        looks.selection.actor = "rita";
        auto page = daemon_.as("rita")->audit().queryAudit(looks);
        QVERIFY(page && !page->entries.empty());
        const auto& newest = page->entries.front();  // this very look, audited first
        QVERIFY(std::any_of(
            newest.details.begin(), newest.details.end(), [](const api::AuditDetailView& d) {
                return d.name == "filter" && d.text.find("actor=rita") != std::string::npos;
            }));
        api::AuditQueryOptions bobsLooks;
        bobsLooks.selection.action = "audit.read";
        bobsLooks.selection.actor = "bob";
        bobsLooks.outcome = "denied";
        auto refused = daemon_.as("rita")->audit().queryAudit(bobsLooks);
        QVERIFY(refused && refused->entries.size() == 1);
    }

    // The live log verifies in the control plane, with the heads an export signed; only
    // audit.read may ask, and the check is itself audited.
    void liveLogVerifies()
    {
        auto rita = daemon_.as("rita");
        QVERIFY(rita->audit().exportAuditBundle({}));  // signs a head
        auto checked = rita->audit().verifyAuditLog();
        QVERIFY2(checked, checked ? "" : checked.error().message().c_str());
        QVERIFY2(checked->ok, checked->error.c_str());
        QVERIFY(checked->error.empty());
        QVERIFY(checked->entries > 10);
        QVERIFY(checked->heads >= 1);
        QVERIFY(checked->newestHeadSize > 0 && checked->newestHeadSize <= checked->entries);
        QCOMPARE(checked->newestHeadRoot.size(), std::size_t{64});
        QVERIFY(checked->keyId.rfind("sha256:", 0) == 0);

        // The newest head alone, as the overview reads it: the head VerifyLog found newest,
        // signed with the published audit key.
        auto note = rita->audit().newestAuditHead();
        QVERIFY2(note, note ? "" : note.error().message().c_str());
        auto keys = rita->platform().signingKeys();
        QVERIFY(keys);
        auto key = crypto::PublicKey::fromPem(keys->auditPem);
        QVERIFY(key);
        const std::string origin = note->substr(0, note->find('\n'));
        auto head = audit::verifyTreeHead(*note, {origin, *key});
        QVERIFY2(head, head ? "" : head.error().message().c_str());
        QCOMPARE(head->size, checked->newestHeadSize);
        QCOMPARE(toHex(head->root), checked->newestHeadRoot);
        auto notForBob = daemon_.as("bob")->audit().newestAuditHead();
        QCOMPARE(notForBob.error().code(), ErrorCode::PermissionDenied);

        auto bob = daemon_.as("bob")->audit().verifyAuditLog();
        QVERIFY(!bob);
        QCOMPARE(bob.error().code(), ErrorCode::PermissionDenied);
        api::AuditQueryOptions verifies;
        verifies.selection.action = "audit.verify";
        auto page = rita->audit().queryAudit(verifies);
        QVERIFY(page);
        std::set<std::pair<std::string, std::string>> seen;
        for (const auto& entry : page->entries)
            seen.insert({entry.actor, entry.outcome});
        QVERIFY(seen.count({"rita", "ok"}) == 1);
        QVERIFY(seen.count({"bob", "denied"}) == 1);
    }

    // What a client may know of the control plane, and the permission catalogue for a role
    // editor: for signed-in callers only.
    void serverInfoAndPermissions()
    {
        auto info = daemon_.as("bob")->platform().serverInfo();
        QVERIFY2(info, info ? "" : info.error().message().c_str());
        QCOMPARE(info->version, std::string(kVersion));
        QCOMPARE(info->apiVersion, std::string("sealtrain.v1"));
        QCOMPARE(info->sessionIdleSeconds, std::int64_t{900});
        QCOMPARE(info->sessionMaxSeconds, std::int64_t{12} * 3600);
        QCOMPARE(info->maxAuditPage, std::uint32_t{1000});
        QVERIFY(info->maxUploads > 0 && info->maxWatches > 0 && info->maxImportBytes > 0);
        auto anonymous = daemon_.anonymous()->platform().serverInfo();
        QVERIFY(!anonymous);
        QCOMPARE(anonymous.error().code(), ErrorCode::Unauthenticated);

        auto permissions = daemon_.as("bob")->access().listPermissions();
        QVERIFY2(permissions, permissions ? "" : permissions.error().message().c_str());
        QCOMPARE(permissions->size(), core::permission::all().size());
        for (const api::PermissionView& permission : *permissions)
            QVERIFY2(!permission.description.empty(), permission.name.c_str());
        QVERIFY(std::any_of(permissions->begin(), permissions->end(),
                            [](const api::PermissionView& p) { return p.name == "audit.read"; }));
        auto nobody = daemon_.anonymous()->access().listPermissions();
        QVERIFY(!nobody);
        QCOMPARE(nobody.error().code(), ErrorCode::Unauthenticated);
    }

    // Sessions.ListSessions pages: newest first, at most `limit` a page, together the whole list;
    // a page out of bounds refused; only session.manage may list.
    void sessionsComeInPages()
    {
        daemon_.signIn("bob");
        daemon_.signIn("rita");  // a few sessions more than a page of two
        auto alice = daemon_.as("alice");
        auto all = alice->sessions().listSessions();
        QVERIFY2(all, all ? "" : all.error().message().c_str());
        QVERIFY(all->size() >= 4);
        std::vector<std::string> paged;
        std::int64_t before = 0;
        int pages = 0;
        do {
            auto page = alice->sessions().listSessionsPage(before, 2);
            QVERIFY2(page, page ? "" : page.error().message().c_str());
            QVERIFY(page->items.size() <= 2);
            for (const api::SessionSummary& session : page->items)
                paged.push_back(session.id);
            before = page->nextBefore;
            QVERIFY(++pages <= 50);
        } while (before != 0);
        QVERIFY(pages >= 2);
        std::vector<std::string> whole;
        for (const api::SessionSummary& session : *all)
            whole.push_back(session.id);
        QCOMPARE(paged, whole);
        auto tooMany = alice->sessions().listSessionsPage(0, 1001);
        QVERIFY(!tooMany);
        QCOMPARE(tooMany.error().code(), ErrorCode::InvalidArgument);
        auto bob = daemon_.as("bob")->sessions().listSessionsPage(0, 10);
        QVERIFY(!bob);
        QCOMPARE(bob.error().code(), ErrorCode::PermissionDenied);
    }

    // A sign-in whose CSR the CA would refuse (an RSA key) is refused before the password and
    // the TOTP code are checked: the same code then still signs in (a spent code would not).
    void csrIsCheckedBeforeTheCredentials()
    {
        QProcess openssl;
        const QString key = tmp_.filePath("rsa.key");
        const QString csr = tmp_.filePath("rsa.csr");
        openssl.start("openssl", {"req", "-new", "-newkey", "rsa:2048", "-nodes", "-subj",
                                  "/CN=carol", "-keyout", key, "-out", csr});
        QVERIFY(openssl.waitForFinished(60000) && openssl.exitCode() == 0);
        QFile file(csr);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const std::string code = daemon_.code("carol");
        sealtrain::v1::SignInRequest request;
        request.set_user("carol");
        request.set_password(testing::kDaemonPassword);
        request.set_totp_code(code);
        request.set_csr_pem(file.readAll().toStdString());
        auto stub = sealtrain::v1::Sessions::NewStub(daemon_.rawChannel());
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
        sealtrain::v1::SignInReply reply;
        const grpc::Status refused = stub->SignIn(&context, request, &reply);
        QCOMPARE(refused.error_code(), grpc::StatusCode::UNIMPLEMENTED);
        QVERIFY2(refused.error_message().find("P-256") != std::string::npos,
                 refused.error_message().c_str());
        QVERIFY(reply.certificate_pem().empty());

        auto signedIn = daemon_.anonymous()->sessions().signIn(
            "carol", testing::secret(testing::kDaemonPassword), code);
        QVERIFY2(signedIn, signedIn ? "" : signedIn.error().message().c_str());
    }

    // A signed-in user changes their own password: a new one the policy refuses changes nothing;
    // the right current password stores the new one and ends the user's other sessions (their
    // certificates refused), this one kept; a wrong current password changes nothing and ends
    // the session that tried it. The old password no longer signs in, the new one does; without
    // a session nothing is read.
    void changeOwnPassword()
    {
        const std::string next = "a long fresh passphrase, 2026";
        const api::ClientIdentity first = daemon_.signIn("dora").identity;
        const api::ClientIdentity second = daemon_.signIn("dora").identity;
        auto dora = daemon_.as(first);
        auto unfit = dora->sessions().changePassword(testing::secret(testing::kDaemonPassword),
                                                     testing::secret("dora is my password 2026"));
        QVERIFY(!unfit);
        QCOMPARE(unfit.error().code(), ErrorCode::InvalidArgument);
        QVERIFY(dora->sessions().whoAmI());
        QVERIFY(daemon_.as(second)->sessions().whoAmI());

        auto changed = dora->sessions().changePassword(testing::secret(testing::kDaemonPassword),
                                                       testing::secret(next));
        QVERIFY2(changed, changed ? "" : changed.error().message().c_str());
        QVERIFY(*changed >= 1);  // `second`, and the fixture's kept session
        QVERIFY(dora->sessions().whoAmI());
        auto ended = daemon_.as(second)->sessions().whoAmI();
        QVERIFY(!ended);
        QCOMPARE(ended.error().code(), ErrorCode::Unauthenticated);

        auto wrong = dora->sessions().changePassword(testing::secret("not the password at all 1"),
                                                     testing::secret("yet another passphrase 77"));
        QVERIFY(!wrong);
        QCOMPARE(wrong.error().code(), ErrorCode::Unauthenticated);
        QVERIFY(wrong.error().message().find("sign in again") != std::string::npos);
        QVERIFY(!dora->sessions().whoAmI());
        // Ended in the control plane itself, not only its certificate refused: no live session
        // of dora's is left.
        auto sessions = daemon_.as("alice")->sessions().listSessions();
        QVERIFY2(sessions, sessions ? "" : sessions.error().message().c_str());
        for (const api::SessionSummary& session : *sessions)
            if (session.user == "dora")
                QVERIFY2(session.revoked, session.id.c_str());

        auto old = daemon_.anonymous()->sessions().signIn(
            "dora", testing::secret(testing::kDaemonPassword), daemon_.code("dora"));
        QVERIFY(!old);
        auto fresh = daemon_.anonymous()->sessions().signIn("dora", testing::secret(next),
                                                            daemon_.code("dora"));
        QVERIFY2(fresh, fresh ? "" : fresh.error().message().c_str());

        auto anonymous = daemon_.anonymous()->sessions().changePassword(
            testing::secret(next), testing::secret("whatever it is 12"));
        QVERIFY(!anonymous);
        QCOMPARE(anonymous.error().code(), ErrorCode::Unauthenticated);
    }

    // A signed-in user moves their TOTP to a new authenticator over the API: a wrong code from the
    // new secret keeps the session; the right one makes it the user's and ends their other
    // sessions, certificates and all; then a code from the old secret starts nothing and ends the
    // session that tried it. Without a session nothing is read.
    void changeOwnTotp()
    {
        const api::ClientIdentity first = daemon_.signIn("erin").identity;
        const api::ClientIdentity second = daemon_.signIn("erin").identity;
        auto erin = daemon_.as(first);
        const std::string oldCode = daemon_.code("erin");
        auto pending =
            erin->sessions().startTotpChange(testing::secret(testing::kDaemonPassword), oldCode);
        QVERIFY2(pending, pending ? "" : pending.error().message().c_str());
        QVERIFY(pending->otpauthUri.starts_with("otpauth://totp/"));
        QVERIFY(pending->expiresUnix > now() + 500 && pending->expiresUnix <= now() + 600);

        const auto longAgo = testing::TestTotpClock::instance().step() - 40;
        auto wrong = erin->sessions().confirmTotpChange(
            core::totpCode(testing::totpSecretFromUri(pending->otpauthUri), longAgo));
        QVERIFY(!wrong);
        QCOMPARE(wrong.error().code(), ErrorCode::PermissionDenied);
        QVERIFY(erin->sessions().whoAmI());

        daemon_.reenrolled("erin", pending->otpauthUri);
        auto ended = erin->sessions().confirmTotpChange(daemon_.code("erin"));
        QVERIFY2(ended, ended ? "" : ended.error().message().c_str());
        QCOMPARE(*ended, std::uint32_t{1});
        QVERIFY(erin->sessions().whoAmI());
        auto other = daemon_.as(second)->sessions().whoAmI();
        QVERIFY(!other);
        QCOMPARE(other.error().code(), ErrorCode::Unauthenticated);

        // The new secret signs in; the old one's code starts no change on that session.
        auto again = daemon_.as(daemon_.signIn("erin").identity);
        auto stale =
            again->sessions().startTotpChange(testing::secret(testing::kDaemonPassword), oldCode);
        QVERIFY(!stale);
        QCOMPARE(stale.error().code(), ErrorCode::Unauthenticated);
        QVERIFY(!again->sessions().whoAmI());

        auto anonymous = daemon_.anonymous()->sessions().startTotpChange(
            testing::secret(testing::kDaemonPassword), daemon_.code("erin"));
        QCOMPARE(anonymous.error().code(), ErrorCode::Unauthenticated);
        QCOMPARE(daemon_.anonymous()->sessions().confirmTotpChange("123456").error().code(),
                 ErrorCode::Unauthenticated);
    }

    // After the control plane stopped: the password and TOTP changes are in its log, each with
    // its actor and outcome.
    void passwordChangesAreAudited()
    {
        QVERIFY(daemon_.stop());
        auto entries = daemon_.auditEntries();
        QVERIFY2(entries, entries ? "" : entries.error().message().c_str());
        std::multiset<std::pair<std::string, audit::Outcome>> changes;
        for (const audit::Entry& entry : *entries) {
            if (entry.action != "user.change_password")
                continue;
            changes.insert({entry.actor.id, entry.outcome});
            if (entry.outcome == audit::Outcome::Ok)
                QVERIFY(!testing::detailOf(entry, "sessions_ended").empty());
        }
        QCOMPARE(changes.count({"dora", audit::Outcome::Ok}), std::size_t{1});
        QCOMPARE(changes.count({"dora", audit::Outcome::Denied}), std::size_t{1});
        QCOMPARE(changes.count({"dora", audit::Outcome::Failed}), std::size_t{1});
        QVERIFY(changes.size() >= 3);  // and the anonymous refusal, counted

        std::multiset<std::tuple<std::string, std::string, audit::Outcome>> totp;
        for (const audit::Entry& entry : *entries)
            if (entry.action.starts_with("user.totp_"))
                totp.insert({entry.action, entry.actor.id, entry.outcome});
        QCOMPARE(totp.count({"user.totp_start", "erin", audit::Outcome::Ok}), std::size_t{1});
        QCOMPARE(totp.count({"user.totp_start", "erin", audit::Outcome::Denied}), std::size_t{1});
        QCOMPARE(totp.count({"user.totp_confirm", "erin", audit::Outcome::Denied}), std::size_t{1});
        QCOMPARE(totp.count({"user.totp_confirm", "erin", audit::Outcome::Ok}), std::size_t{1});
    }

    void cleanupTestCase() { daemon_.kill(); }
};

QTEST_GUILESS_MAIN(TestApiDesktop)
#include "test_api_desktop.moc"
