// Submissions and approvals: nobody approves their own, and an approval is bound to the content
// hash it was given for (an edit voids it).
#include "service_world.h"

#include <QtTest/QtTest>

using namespace sealtrain;
using sealtrain::testing::verifyDenied;

class TestSubmissions : public QObject {
    Q_OBJECT

private slots:
    void approverCanNotApproveTheirOwnSubmission()
    {
        testing::ServiceWorld w;
        QVERIFY(w.t.plane->access().grantRole(w.admin, "approver-user", "engineer", "").ok());
        const auto approver = w.session("approver-user");
        const auto spec = crypto::sha256(asBytes("{\"model\":\"gpt\"}"));
        auto id = w.t.plane->submissions().submit(approver, "job", "train-1", "", spec);
        QVERIFY(id.ok());
        verifyDenied(w, w.t.plane->submissions().approve(approver, *id, spec), "job.approve");
        QVERIFY(!*w.t.plane->submissions().isApproved(approver, *id));
    }

    void approvalIsBoundToTheContentHash()
    {
        testing::ServiceWorld w;
        const auto engineer = w.session("engineer-user");
        const auto approver = w.session("approver-user");
        const auto spec = crypto::sha256(asBytes("{\"lr\":0.001}"));
        const auto edited = crypto::sha256(asBytes("{\"lr\":0.001,\"dataset\":\"all\"}"));
        auto id = *w.t.plane->submissions().submit(engineer, "job", "train-2", "", spec);
        QVERIFY(w.t.plane->submissions().approve(approver, id, spec).ok());
        QVERIFY(*w.t.plane->submissions().isApproved(engineer, id));
        // The edit voids the approval; replaying it onto the edited spec is refused.
        QVERIFY(w.t.plane->submissions().edit(engineer, id, edited).ok());
        QVERIFY(!*w.t.plane->submissions().isApproved(engineer, id));
        verifyDenied(w, w.t.plane->submissions().approve(approver, id, spec), "job.approve");
        QVERIFY(w.t.plane->submissions().approve(approver, id, edited).ok());
        QVERIFY(*w.t.plane->submissions().isApproved(engineer, id));
    }

    // Another holder of job.submit can not edit someone else's submission (which would void
    // its approval or swap what is approved): refused, audited, and nothing changes.
    void onlyTheSubmitterMayEdit()
    {
        testing::ServiceWorld w;
        QVERIFY(w.t.plane->access().grantRole(w.admin, "approver-user", "engineer", "").ok());
        const auto engineer = w.session("engineer-user");
        const auto other = w.session("approver-user");
        const auto spec = crypto::sha256(asBytes("{\"epochs\":1}"));
        const auto swapped = crypto::sha256(asBytes("{\"epochs\":1,\"export\":true}"));
        auto id = *w.t.plane->submissions().submit(engineer, "job", "train-3", "", spec);
        QVERIFY(w.t.plane->submissions().approve(other, id, spec).ok());

        verifyDenied(w, w.t.plane->submissions().edit(other, id, swapped), "job.edit");
        QCOMPARE(w.last().actor.id, std::string("approver-user"));
        QVERIFY(*w.t.plane->submissions().isApproved(engineer, id));
    }
};

QTEST_APPLESS_MAIN(TestSubmissions)
#include "test_core_submissions.moc"
