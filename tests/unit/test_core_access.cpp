// Access against the attacks of issues #5 and #13, each refused and audited as denied: granting
// oneself admin, removing the last admin, mixing operator and data duties, giving an admin data,
// job, approval or audit roles (or an admin role to their holder); and break-glass grants, custom
// roles and project-scoped grants.
#include "service_world.h"

#include <QtTest/QtTest>

#include <algorithm>

using namespace sealtrain;
using sealtrain::testing::kPassword;
using sealtrain::testing::secret;
using sealtrain::testing::verifyDenied;

class TestAccess : public QObject {
    Q_OBJECT

private slots:
    void engineerCanNotGrantThemselvesAdmin()
    {
        testing::ServiceWorld w;
        const auto engineer = w.session("engineer-user");
        QVERIFY(!engineer.empty());
        verifyDenied(w, w.t.plane->access().grantRole(engineer, "engineer-user", "admin", ""),
                     "grant.create");
        QCOMPARE(w.last().actor.id, std::string("engineer-user"));
    }

    // Issue #27, item 3: with two admins, one can not give anyone a separated duty alone. The
    // first grant of approver is a request (grant.request); the requester repeating it is
    // refused; another admin's same grant makes it, naming who asked. A role without a separated
    // duty is granted at once, and a revoked request is gone.
    void separatedDutiesNeedTwoAdmins()
    {
        testing::ServiceWorld w;
        auto& access = w.t.plane->access();
        w.addUser("bea", "admin");
        w.addUser("eve", "engineer");
        const auto bea = w.session("bea");
        const auto holds = [&](const std::string& role) {
            return w.t.database
                       ->queryInteger("SELECT count(*) FROM grants g JOIN users u ON "
                                      "u.id = g.user_id WHERE u.name = 'eve' AND g.role = ?",
                                      {role})
                       .value()
                   > 0;
        };
        auto requested = access.grantRole(w.admin, "eve", "approver", "");
        QVERIFY2(requested, requested ? "" : requested.error().message().c_str());
        QVERIFY(requested->pending);
        QVERIFY(!holds("approver"));
        QCOMPARE(w.last().action, std::string("grant.request"));
        QCOMPARE(w.last().outcome, audit::Outcome::Ok);
        QCOMPARE(w.last().actor.id, std::string("alice"));
        verifyDenied(w, access.grantRole(w.admin, "eve", "approver", ""), "grant.create");
        QVERIFY(w.last().reason.find("another admin") != std::string::npos);
        QVERIFY(!holds("approver"));
        auto made = access.grantRole(bea, "eve", "approver", "");
        QVERIFY2(made, made ? "" : made.error().message().c_str());
        QVERIFY(!made->pending);
        QVERIFY(holds("approver"));
        QCOMPARE(w.last().action, std::string("grant.create"));
        QCOMPARE(testing::detailOf(w.last(), "requested_by"), std::string("alice"));
        // Every duty class is separated (issue #48): the engineer's too.
        auto engineer = access.grantRole(w.admin, "eve", "engineer", "oncology");
        QVERIFY(engineer && engineer->pending);
        // A revoked request is gone: the next grant is a new request.
        QVERIFY(access.grantRole(w.admin, "eve", "steward", "")->pending);
        QVERIFY(access.revokeRole(w.admin, "eve", "steward", ""));
        QVERIFY(access.grantRole(bea, "eve", "steward", "")->pending);
        QVERIFY(!holds("steward"));
    }

    void lastAdminCanNotRemoveThemselves()
    {
        testing::ServiceWorld w;
        verifyDenied(w, w.t.plane->identity().disableUser(w.admin, "alice"), "user.disable");
        verifyDenied(w, w.t.plane->access().revokeRole(w.admin, "alice", "admin", ""),
                     "grant.revoke");
        // With a second admin, it is allowed once she agrees (issue #48: one of two admins
        // alone never returns the plane to single-admin mode).
        w.addUser("bea", "admin");
        auto asked = w.t.plane->access().revokeRole(w.admin, "alice", "admin", "");
        QVERIFY(asked && asked->pending);
        QCOMPARE(w.last().action, std::string("grant.revoke_request"));
        auto agreed = w.t.plane->access().revokeRole(w.session("bea"), "alice", "admin", "");
        QVERIFY(agreed && !agreed->pending);
        QCOMPARE(w.last().outcome, audit::Outcome::Ok);
        QCOMPARE(testing::detailOf(w.last(), "requested_by"), std::string("alice"));
    }

    // The last-admin rule counts enabled admins with a standing global grant: a disabled admin
    // and a break-glass admin do not count, so with only those beside her alice stays.
    void lastAdminRuleIgnoresDisabledAndBreakGlassAdmins()
    {
        testing::ServiceWorld w;
        w.addUser("bea", "admin");
        // One of two admins is disabled by both (issue #48): alice asks, bea agrees.
        QVERIFY(w.t.plane->identity().disableUser(w.admin, "bea")->pending);
        QVERIFY(!w.t.plane->identity().disableUser(w.session("bea"), "bea")->pending);
        QVERIFY(testing::enrolUser(w.t.plane->identity(), w.admin, "cem", secret(kPassword)));
        QVERIFY(w.t.plane->access()
                    .grantBreakGlass(w.admin, "cem", "admin", "", "incident 7: admin away",
                                     std::chrono::seconds{3600})
                    .ok());
        verifyDenied(w, w.t.plane->identity().disableUser(w.admin, "alice"), "user.disable");
        QVERIFY(w.last().reason.find("last admin") != std::string::npos);
        verifyDenied(w, w.t.plane->access().revokeRole(w.admin, "alice", "admin", ""),
                     "grant.revoke");
        QVERIFY(w.last().reason.find("last admin") != std::string::npos);
        // Enabled again, bea counts: alice's admin role goes once bea agrees.
        QVERIFY(w.t.plane->identity().enableUser(w.admin, "bea").ok());
        QVERIFY(w.t.plane->access().revokeRole(w.admin, "alice", "admin", "")->pending);
        QVERIFY(!w.t.plane->access().revokeRole(w.session("bea"), "alice", "admin", "")->pending);
    }

    void breakGlassIsTimeLimitedAndFlagged()
    {
        testing::ServiceWorld w;
        const auto engineer = w.session("engineer-user");
        QVERIFY(!w.t.plane->access()
                     .grantBreakGlass(w.admin, "engineer-user", "auditor", "", "",
                                      std::chrono::seconds{600})
                     .ok());
        QCOMPARE(w.last().outcome, audit::Outcome::Failed);
        auto granted = w.t.plane->access().grantBreakGlass(w.admin, "engineer-user", "auditor", "",
                                                           "incident 42: trace a leak",
                                                           std::chrono::seconds{600});
        QVERIFY2(granted.ok(), granted.ok() ? "" : granted.error().message().c_str());
        QVERIFY(w.t.plane->auditQueries().read(engineer, 0, 1).ok());
        const auto flagged = w.last();
        QCOMPARE(flagged.action, std::string("audit.read"));
        QVERIFY(std::find(flagged.details.begin(), flagged.details.end(),
                          audit::textDetail("break_glass", "true"))
                != flagged.details.end());
        w.t.clock.advance(std::chrono::seconds{601});
        verifyDenied(w, w.t.plane->auditQueries().read(engineer, 0, 1), "audit.read");
    }

    void customRolesAndProjectGrants()
    {
        testing::ServiceWorld w;
        QVERIFY(w.t.plane->access()
                    .createRole(w.admin, "reviewer", {"job.approve", "audit.read"})
                    .ok());
        auto mixed =
            w.t.plane->access().createRole(w.admin, "superuser", {"user.manage", "dataset.read"});
        QVERIFY(!mixed.ok());
        // Managing the keyring is identity administration too: it holds every KEK.
        QVERIFY(!w.t.plane->access()
                     .createRole(w.admin, "keydata", {"keyring.manage", "dataset.read"})
                     .ok());
        QVERIFY(!w.t.plane->access().createRole(w.admin, "odd", {"everything.all"}).ok());
        QVERIFY(
            w.t.plane->access().grantRole(w.admin, "auditor-user", "reviewer", "oncology").ok());
        const auto engineer = w.session("engineer-user");
        const auto reviewer = w.session("auditor-user");
        const auto spec = crypto::sha256(asBytes("p"));
        auto inScope = *w.t.plane->submissions().submit(engineer, "job", "j1", "oncology", spec);
        auto outOfScope =
            *w.t.plane->submissions().submit(engineer, "job", "j2", "cardiology", spec);
        QVERIFY(w.t.plane->submissions().approve(reviewer, inScope, spec).ok());
        verifyDenied(w, w.t.plane->submissions().approve(reviewer, outOfScope, spec),
                     "job.approve");
        QVERIFY(!w.t.plane->access().deleteRole(w.admin, "reviewer").ok());  // still granted
        QVERIFY(
            w.t.plane->access().revokeRole(w.admin, "auditor-user", "reviewer", "oncology").ok());
        QVERIFY(w.t.plane->access().deleteRole(w.admin, "reviewer").ok());
        QVERIFY(!w.t.plane->access().deleteRole(w.admin, "admin").ok());
        QVERIFY(!w.t.plane->identity().init("eve", secret(kPassword)).ok());
    }

    // Operators of the infrastructure hold no data or job permissions: not in one role, not
    // through two grants (either order, any project, break-glass included).
    void operatorsHoldNoDataPermissions()
    {
        testing::ServiceWorld w;
        auto mixed =
            w.t.plane->access().createRole(w.admin, "opsdata", {"worker.manage", "dataset.read"});
        QVERIFY(!mixed.ok());
        QCOMPARE(mixed.error().code(), ErrorCode::PermissionDenied);
        w.addUser("olivia", "operator");
        verifyDenied(w, w.t.plane->access().grantRole(w.admin, "olivia", "engineer", "oncology"),
                     "grant.create");
        verifyDenied(w,
                     w.t.plane->access().grantBreakGlass(w.admin, "olivia", "steward", "",
                                                         "incident 7", std::chrono::seconds{600}),
                     "grant.break_glass");
        verifyDenied(w, w.t.plane->access().grantRole(w.admin, "engineer-user", "operator", ""),
                     "grant.create");
        // Roles without data permissions are fine for an operator.
        QVERIFY(w.t.plane->access().grantRole(w.admin, "olivia", "auditor", "").ok());
    }

    // Issue #13 item 6, reproduced from the quickstart: the admin granting themselves steward or
    // auditor. Refused at grant time for every data, job, approval and audit role, globally or in
    // a project, by themselves, by another admin and by break-glass; and the other way round.
    void adminsHoldNoDataJobApprovalOrAuditRoles_data()
    {
        QTest::addColumn<QString>("role");
        QTest::addColumn<QString>("project");
        for (const char* role : {"steward", "engineer", "approver", "auditor", "operator"}) {
            QTest::newRow(role) << role << "";
            QTest::newRow((std::string(role) + "@oncology").c_str()) << role << "oncology";
        }
    }

    void adminsHoldNoDataJobApprovalOrAuditRoles()
    {
        QFETCH(QString, role);
        QFETCH(QString, project);
        testing::ServiceWorld w;
        auto& access = w.t.plane->access();
        w.addUser("bea", "admin");
        const auto expectRefused = [&](const auto& result, const std::string& action,
                                       const std::string& actor) {
            verifyDenied(w, result, action);
            const auto entry = w.last();
            QCOMPARE(entry.actor.id, actor);
            QCOMPARE(entry.target.id, std::string("alice"));
            QVERIFY2(entry.reason.find("identity administration") != std::string::npos,
                     entry.reason.c_str());
        };
        const std::string name = role.toStdString();
        const std::string scope = project.toStdString();
        // By herself, by another admin, and as a break-glass grant.
        expectRefused(access.grantRole(w.admin, "alice", name, scope), "grant.create", "alice");
        const auto bea = w.session("bea");
        QVERIFY(!bea.empty());
        expectRefused(access.grantRole(bea, "alice", name, scope), "grant.create", "bea");
        expectRefused(access.grantBreakGlass(bea, "alice", name, scope, "incident 13",
                                             std::chrono::seconds{600}),
                      "grant.break_glass", "bea");
        // Nothing was granted.
        const auto users = w.t.plane->identity().listUsers(w.admin);
        QVERIFY(users.ok());
        for (const auto& user : *users)
            if (user.name == "alice")
                QCOMPARE(user.grants, std::vector<std::string>{"admin"});
    }

    // Issue #48 item 2: every permission declares a duty class, and with two admins a grant of
    // a role holding any one permission, and the making of that role, take both of them. The
    // catalogue is enumerated, so that a permission added without its class is caught.
    void everyPermissionTakesTwoAdmins_data()
    {
        QTest::addColumn<QString>("permission");
        for (const auto permission : core::permission::all())
            QTest::newRow(std::string(permission).c_str())
                << QString::fromUtf8(permission.data(), static_cast<qsizetype>(permission.size()));
    }

    void everyPermissionTakesTwoAdmins()
    {
        QFETCH(QString, permission);
        const std::string name = permission.toStdString();
        QVERIFY(core::permission::dutyOf(name).has_value());
        QVERIFY(core::permission::isSeparated(*core::permission::dutyOf(name)));
        QVERIFY(!core::permission::description(name).empty());
        testing::ServiceWorld w;
        auto& access = w.t.plane->access();
        w.addUser("bea", "admin");
        const auto bea = w.session("bea");
        // The role: asked by alice, made by bea.
        auto asked = access.createRole(w.admin, "only-one", {name});
        QVERIFY2(asked, asked ? "" : asked.error().message().c_str());
        QVERIFY(asked->pending);
        QCOMPARE(w.last().action, std::string("role.request"));
        QVERIFY(!w.t.database->exists("SELECT 1 FROM roles WHERE name = 'only-one'", {}).value());
        auto made = access.createRole(bea, "only-one", {name});
        QVERIFY2(made, made ? "" : made.error().message().c_str());
        QVERIFY(!made->pending);
        QCOMPARE(w.last().action, std::string("role.create"));
        QCOMPARE(testing::detailOf(w.last(), "requested_by"), std::string("alice"));
        // The grant: to someone with no other duty, asked by alice, made by bea.
        QVERIFY(testing::enrolUser(w.t.plane->identity(), w.admin, "fresh", secret(kPassword)));
        auto granted = access.grantRole(w.admin, "fresh", "only-one", "");
        QVERIFY2(granted, granted ? "" : granted.error().message().c_str());
        QVERIFY(granted->pending);
        QVERIFY(!access.grantRole(w.admin, "fresh", "only-one", ""));
        auto confirmed = access.grantRole(bea, "fresh", "only-one", "");
        QVERIFY2(confirmed, confirmed ? "" : confirmed.error().message().c_str());
        QVERIFY(!confirmed->pending);
    }

    // Issue #48 item 2 (ii), the attack: with two admins, one of them makes a role holding only
    // model.approve and grants it to a fresh account at once. Neither happens alone; the requester
    // repeating herself is refused and audited with her as the actor; a second admin asking for
    // other permissions under the same name is refused.
    void oneAdminAloneMakesNoApproverRole()
    {
        testing::ServiceWorld w;
        auto& access = w.t.plane->access();
        w.addUser("bea", "admin");
        auto asked = access.createRole(w.admin, "promoter", {"model.approve"});
        QVERIFY(asked && asked->pending);
        verifyDenied(w, access.createRole(w.admin, "promoter", {"model.approve"}), "role.create");
        QCOMPARE(w.last().actor.id, std::string("alice"));
        QVERIFY(w.last().reason.find("another admin") != std::string::npos);
        w.uris["mallory"] =
            testing::enrolUser(w.t.plane->identity(), w.admin, "mallory", secret(kPassword))
                .value()
                .otpauthUri;
        auto noRole = access.grantRole(w.admin, "mallory", "promoter", "");
        QVERIFY(!noRole);
        QCOMPARE(noRole.error().code(), ErrorCode::NotFound);
        const auto bea = w.session("bea");
        auto other = access.createRole(bea, "promoter", {"model.approve", "job.approve"});
        QVERIFY(!other);
        QCOMPARE(other.error().code(), ErrorCode::FailedPrecondition);
        QVERIFY(!w.t.database->exists("SELECT 1 FROM roles WHERE name = 'promoter'", {}).value());
        // Withdrawn by deleting it: the next request starts again.
        QVERIFY(access.deleteRole(w.admin, "promoter"));
        QVERIFY(access.createRole(bea, "promoter", {"model.approve"})->pending);
        QVERIFY(!access.createRole(w.admin, "promoter", {"model.approve"})->pending);
        QVERIFY(access.grantRole(w.admin, "mallory", "promoter", "")->pending);
        const auto mallory = w.session("mallory");
        QVERIFY(!mallory.empty());
        const auto permissions = w.t.plane->identity().describeSelf(mallory).value().permissions;
        QVERIFY(permissions.empty());
    }

    // Issue #48 item 2 (i), the attack: with two admins, one of them creates an account, redeems
    // its enrolment code herself (she received it) and grants it operator at once, to mint a
    // worker enrolment token. The grant made before the redemption only waits; after it, one
    // admin alone still can not make it; the account mints nothing, refused and audited with
    // the account as the actor.
    void oneAdminAloneMakesNoOperator()
    {
        testing::ServiceWorld w;
        auto& access = w.t.plane->access();
        auto& identity = w.t.plane->identity();
        w.addUser("bea", "admin");
        const auto bea = w.session("bea");
        auto created = identity.createUser(w.admin, "rogue");
        QVERIFY(created);
        auto early = access.grantRole(w.admin, "rogue", "operator", "");
        QVERIFY(early && early->pending);
        QCOMPARE(testing::detailOf(w.last(), "pending"),
                 std::string("waits for the user's own credentials"));
        // Not even a second admin makes it before the user set their credentials.
        auto tooSoon = access.grantRole(bea, "rogue", "operator", "");
        QVERIFY(!tooSoon);
        QCOMPARE(tooSoon.error().code(), ErrorCode::FailedPrecondition);
        QCOMPARE(w.last().action, std::string("grant.create"));
        QCOMPARE(w.last().actor.id, std::string("bea"));
        // alice redeems the code herself and tries alone.
        auto uri = identity.completeReset("rogue", created->enrolmentCode, secret(kPassword));
        QVERIFY(uri);
        w.uris["rogue"] = uri->otpauthUri;
        verifyDenied(w, access.grantRole(w.admin, "rogue", "operator", ""), "grant.create");
        QCOMPARE(w.last().actor.id, std::string("alice"));
        const auto rogue = w.session("rogue");
        QVERIFY(!rogue.empty());
        verifyDenied(w, w.t.plane->workers().createEnrollToken(rogue, "node-x", "gpu", 3600),
                     "worker.enroll_token");
        QCOMPARE(w.last().actor.id, std::string("rogue"));
        // bea agrees: only now.
        auto made = access.grantRole(bea, "rogue", "operator", "");
        QVERIFY(made && !made->pending);
        QVERIFY(w.t.plane->workers().createEnrollToken(rogue, "node-x", "gpu", 3600));
    }

    // Issue #48: a grant to an account that has not redeemed its code waits until it has, with
    // a single admin too, who then makes it; no break-glass grant goes to such an account.
    void grantsWaitForTheUsersOwnCredentials()
    {
        testing::ServiceWorld w;
        auto& access = w.t.plane->access();
        auto created = w.t.plane->identity().createUser(w.admin, "newbie");
        QVERIFY(created);
        QVERIFY(access.grantRole(w.admin, "newbie", "engineer", "")->pending);
        auto again = access.grantRole(w.admin, "newbie", "engineer", "");
        QVERIFY(!again);
        QCOMPARE(again.error().code(), ErrorCode::FailedPrecondition);
        verifyDenied(w,
                     access.grantBreakGlass(w.admin, "newbie", "auditor", "", "incident 9",
                                            std::chrono::seconds{600}),
                     "grant.break_glass");
        QVERIFY(w.last().reason.find("own credentials") != std::string::npos);
        QVERIFY(w.t.plane->identity().completeReset("newbie", created->enrolmentCode,
                                                    secret(kPassword)));
        auto made = access.grantRole(w.admin, "newbie", "engineer", "");
        QVERIFY2(made, made ? "" : made.error().message().c_str());
        QVERIFY(!made->pending);
    }

    // Issue #48: with two admins, neither disables or demotes the other (or themselves) alone;
    // the other agreeing makes it. With three, one admin may, since two remain.
    void twoAdminsStayTwoUnlessBothAgree()
    {
        testing::ServiceWorld w;
        auto& identity = w.t.plane->identity();
        auto& access = w.t.plane->access();
        w.addUser("bea", "admin");
        const auto enabledAdmins = [&] { return access.adminNames().value().size(); };
        auto asked = identity.disableUser(w.admin, "bea");
        QVERIFY(asked && asked->pending);
        QCOMPARE(w.last().action, std::string("user.disable_request"));
        QCOMPARE(enabledAdmins(), std::size_t{2});
        verifyDenied(w, identity.disableUser(w.admin, "bea"), "user.disable");
        QCOMPARE(w.last().actor.id, std::string("alice"));
        QCOMPARE(enabledAdmins(), std::size_t{2});
        auto demote = access.revokeRole(w.admin, "bea", "admin", "");
        QVERIFY(demote && demote->pending);
        QCOMPARE(enabledAdmins(), std::size_t{2});
        // bea consents to her own disabling.
        const auto bea = w.session("bea");
        auto agreed = identity.disableUser(bea, "bea");
        QVERIFY2(agreed, agreed ? "" : agreed.error().message().c_str());
        QVERIFY(!agreed->pending);
        QCOMPARE(testing::detailOf(w.last(), "requested_by"), std::string("alice"));
        QCOMPARE(enabledAdmins(), std::size_t{1});
        // Three admins: one of them alone leaves two.
        QVERIFY(identity.enableUser(w.admin, "bea"));
        w.addUser("cem", "admin");
        auto done = identity.disableUser(w.admin, "cem");
        QVERIFY(done && !done->pending);
        QCOMPARE(enabledAdmins(), std::size_t{2});
    }

    // Issue #51: the requests waiting for a second admin, listed for whoever could confirm
    // them: an admin sees the four kinds oldest first, a holder of role.manage alone only the
    // roles, an engineer is refused and the refusal audited with the real actor.
    void pendingRequestsListedForWhoCanConfirm()
    {
        testing::ServiceWorld w;
        auto& access = w.t.plane->access();
        auto& identity = w.t.plane->identity();
        QVERIFY(access.createRole(w.admin, "role-keeper", {"role.manage"}));
        w.addUser("kim", "role-keeper");
        w.addUser("eve", "engineer");
        w.addUser("bea", "admin");
        QVERIFY(access.grantRole(w.admin, "eve", "approver", "")->pending);
        QVERIFY(access.createRole(w.admin, "promoter", {"model.approve"})->pending);
        QVERIFY(identity.disableUser(w.admin, "bea")->pending);
        QVERIFY(identity.resetUser(w.admin, "eve")->pending());

        auto listed = access.listPendingRequests(w.session("bea"));
        QVERIFY2(listed, listed ? "" : listed.error().message().c_str());
        QCOMPARE(w.last().action, std::string("access.list_pending"));
        QCOMPARE(w.last().actor.id, std::string("bea"));
        QCOMPARE(listed->size(), std::size_t{4});
        std::vector<std::string> seen;
        for (const core::PendingRequest& request : *listed) {
            seen.push_back(request.kind + " " + request.subject + " " + request.detail);
            QCOMPARE(request.requestedBy, std::string("alice"));
            QCOMPARE(request.waitsFor, std::string("a second admin"));
        }
        std::sort(seen.begin(), seen.end());
        QCOMPARE(seen,
                 (std::vector<std::string>{"admin-change bea user.disable", "grant eve approver",
                                           "reset eve ", "role promoter model.approve"}));
        QVERIFY(std::is_sorted(listed->begin(), listed->end(),
                               [](const auto& a, const auto& b) { return a.created < b.created; }));

        auto roles = access.listPendingRequests(w.session("kim"));
        QVERIFY2(roles, roles ? "" : roles.error().message().c_str());
        QCOMPARE(roles->size(), std::size_t{1});
        QCOMPARE(roles->front().kind, std::string("role"));

        verifyDenied(w, access.listPendingRequests(w.session("eve")), "access.list_pending");
        QCOMPARE(w.last().actor.id, std::string("eve"));
    }

    // Issue #48: enrolment and reset codes expire; only the holder of the right code learns it
    // expired, and an admin's new reset gives one that works.
    void enrolmentCodesExpire()
    {
        core::ControlPlaneOptions options;
        options.enrolmentCodeLifetime = std::chrono::seconds{3600};
        testing::ServiceWorld w(options);
        auto& identity = w.t.plane->identity();
        auto created = identity.createUser(w.admin, "late");
        QVERIFY(created);
        const auto madeAt = static_cast<std::int64_t>(w.last().timeNs / 1'000'000'000);
        QCOMPARE(created->codeExpires, madeAt + 3600);
        w.t.clock.advance(std::chrono::seconds{3601});
        auto expired = identity.completeReset("late", created->enrolmentCode, secret(kPassword));
        QVERIFY(!expired);
        QCOMPARE(expired.error().code(), ErrorCode::Unauthenticated);
        QVERIFY(expired.error().message().find("expired") != std::string::npos);
        QCOMPARE(w.last().outcome, audit::Outcome::Denied);
        QCOMPARE(w.last().reason, std::string("reset code expired"));
        auto wrong = identity.completeReset("late", "rc_wrong", secret(kPassword));
        QVERIFY(!wrong);
        QVERIFY(wrong.error().message().find("expired") == std::string::npos);
        auto reset = identity.resetUser(w.session("alice"), "late");  // an hour on: a new session
        QVERIFY2(reset, reset ? "" : reset.error().message().c_str());
        QVERIFY(!reset->pending());
        QVERIFY(identity.completeReset("late", reset->resetCode, secret(kPassword)));
    }

    void holdersOfOtherDutiesCanNotBecomeAdmins()
    {
        testing::ServiceWorld w;
        for (const std::string user : {"engineer-user", "approver-user", "auditor-user"}) {
            verifyDenied(w, w.t.plane->access().grantRole(w.admin, user, "admin", ""),
                         "grant.create");
            QCOMPARE(w.last().target.id, user);
            QVERIFY(w.last().reason.find("may not also hold identity administration")
                    != std::string::npos);
        }
        // A custom role with one identity-administration permission counts as admin.
        QVERIFY(w.t.plane->access().createRole(w.admin, "sessions", {"session.manage"}).ok());
        verifyDenied(w,
                     w.t.plane->access().grantBreakGlass(w.admin, "auditor-user", "sessions", "",
                                                         "incident 13", std::chrono::seconds{600}),
                     "grant.break_glass");
    }
};

QTEST_APPLESS_MAIN(TestAccess)
#include "test_core_access.moc"
