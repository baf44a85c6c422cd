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
        // No separated duty: at once.
        auto engineer = access.grantRole(w.admin, "eve", "engineer", "oncology");
        QVERIFY(engineer && !engineer->pending);
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
        // With a second admin, it is allowed.
        w.addUser("bea", "admin");
        QVERIFY(w.t.plane->access().revokeRole(w.admin, "alice", "admin", "").ok());
        QCOMPARE(w.last().outcome, audit::Outcome::Ok);
    }

    // The last-admin rule counts enabled admins with a standing global grant: a disabled admin
    // and a break-glass admin do not count, so with only those beside her alice stays.
    void lastAdminRuleIgnoresDisabledAndBreakGlassAdmins()
    {
        testing::ServiceWorld w;
        w.addUser("bea", "admin");
        QVERIFY(w.t.plane->identity().disableUser(w.admin, "bea").ok());
        QVERIFY(w.t.plane->identity().createUser(w.admin, "cem").ok());
        QVERIFY(w.t.plane->access()
                    .grantBreakGlass(w.admin, "cem", "admin", "", "incident 7: admin away",
                                     std::chrono::seconds{3600})
                    .ok());
        verifyDenied(w, w.t.plane->identity().disableUser(w.admin, "alice"), "user.disable");
        QVERIFY(w.last().reason.find("last admin") != std::string::npos);
        verifyDenied(w, w.t.plane->access().revokeRole(w.admin, "alice", "admin", ""),
                     "grant.revoke");
        QVERIFY(w.last().reason.find("last admin") != std::string::npos);
        // Enabled again, bea counts.
        QVERIFY(w.t.plane->identity().enableUser(w.admin, "bea").ok());
        QVERIFY(w.t.plane->access().revokeRole(w.admin, "alice", "admin", "").ok());
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
        QVERIFY(w.t.plane->identity().createUser(w.admin, "olivia").ok());
        QVERIFY(w.t.plane->access().grantRole(w.admin, "olivia", "operator", "").ok());
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
