// Access against the attacks of issue #5, each refused and audited as denied: granting oneself
// admin, removing the last admin, mixing operator and data duties; and break-glass grants, custom
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

    void lastAdminCanNotRemoveThemselves()
    {
        testing::ServiceWorld w;
        verifyDenied(w, w.t.plane->identity().disableUser(w.admin, "alice"), "user.disable");
        verifyDenied(w, w.t.plane->access().revokeRole(w.admin, "alice", "admin", ""),
                     "grant.revoke");
        // With a second admin, it is allowed.
        QVERIFY(w.t.plane->access().grantRole(w.admin, "approver-user", "admin", "").ok());
        QVERIFY(w.t.plane->access().revokeRole(w.admin, "alice", "admin", "").ok());
        QCOMPARE(w.last().outcome, audit::Outcome::Ok);
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
        QVERIFY(w.t.plane->identity().createUser(w.admin, "olivia", secret(kPassword)).ok());
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
};

QTEST_APPLESS_MAIN(TestAccess)
#include "test_core_access.moc"
