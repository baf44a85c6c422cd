// The GUI's table models and charts fed plain rows, as the client library returns them, with no
// server (issue #29): what each column shows, paging appends without losing rows, the charts
// take the trainer's step and validation lines and ignore the rest.
#include "audit/audit_table_model.h"
#include "jobs/job_table_model.h"
#include "jobs/metrics_chart.h"

#include <QtTest/QtTest>

using namespace sealtrain;
using namespace sealtrain::gui;

class TestGuiModels : public QObject {
    Q_OBJECT

private slots:
    void jobsShowWhatAnApproverNeeds()
    {
        JobTableModel model;
        api::JobSummary job;
        job.id = 7;
        job.name = "fortunes";
        job.project = "demo";
        job.state = "failed";
        job.submitter = "dana";
        job.approver = "ann";
        job.worker = "node-1";
        job.updatedUnix = 1796029200;
        model.setRows({job});
        QCOMPARE(model.rowCount(), 1);
        QCOMPARE(model.columnCount(), 8);
        const auto at = [&](int column) { return model.index(0, column).data().toString(); };
        QCOMPARE(at(JobTableModel::Id), QString("7"));
        QCOMPARE(at(JobTableModel::State), QString("failed"));
        QCOMPARE(at(JobTableModel::Submitter), QString("dana"));
        QCOMPARE(at(JobTableModel::Approver), QString("ann"));
        QCOMPARE(at(JobTableModel::Updated), QString("2026-11-30 09:00:00 UTC"));
        QVERIFY(model.index(0, JobTableModel::State).data(Qt::ForegroundRole).isValid());
        QCOMPARE(model.headerData(JobTableModel::State, Qt::Horizontal, Qt::DisplayRole),
                 QVariant("State"));
        model.setRows({});
        QCOMPARE(model.rowCount(), 0);
    }

    void auditPagesAppend()
    {
        AuditTableModel model;
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        std::vector<api::AuditEntryView> page;
        for (std::uint64_t sequence = 10; sequence > 5; --sequence) {
            api::AuditEntryView entry;
            entry.sequence = sequence;
            entry.timeNs = 1796029200ULL * 1000000000ULL + sequence * 1000000ULL;
            entry.actor = "bob";
            entry.actorKind = "user";
            entry.action = "user.list";
            entry.targetKind = "user";
            entry.targetId = "*";
            entry.outcome = sequence % 2 == 0 ? "denied" : "ok";
            entry.details = {{"peer", "ipv4:127.0.0.1:5000", ""},
                             {"file", "", std::string(64, 'a')}};
            page.push_back(entry);
        }
        model.appendRows(page);
        model.appendRows({page.front()});
        QCOMPARE(model.rowCount(), 6);
        QCOMPARE(inserted.count(), 2);
        QCOMPARE(model.index(0, AuditTableModel::Sequence).data().toString(), QString("10"));
        QCOMPARE(model.index(0, AuditTableModel::Time).data().toString(),
                 QString("2026-11-30 09:00:00.010"));
        QCOMPARE(model.index(0, AuditTableModel::Target).data().toString(), QString("user *"));
        QVERIFY(model.index(0, AuditTableModel::Outcome).data(Qt::ForegroundRole).isValid());
        QVERIFY(!model.index(1, AuditTableModel::Outcome).data(Qt::ForegroundRole).isValid());
        // A keyed hash is shown as such, shortened; a text detail as it is.
        const QString details = detailsText(page.front());
        QCOMPARE(details, QString("peer=ipv4:127.0.0.1:5000 file=hmac:aaaaaaaaaaaaaaaa"));
        QCOMPARE(model.index(0, 0).data(Qt::ToolTipRole).toString(), details);
    }

    void chartsTakeStepsAndValidations()
    {
        MetricsChart chart;
        QVERIFY(chart.addLine(R"({"kind":"step","step":1,"loss":5.5,"tok_per_s":1000,"mfu":0.1})"));
        QVERIFY(chart.addLine(R"({"kind":"step","step":2,"loss":5.0,"val_loss":5.2})"));
        QVERIFY(!chart.addLine(R"({"kind":"checkpoint","step":2,"file":"x"})"));
        QVERIFY(!chart.addLine("not json"));
        QVERIFY(!chart.addLine(R"({"kind":"start"})"));
        QCOMPARE(chart.lossPoints(), 2);
        QCOMPARE(chart.validationPoints(), 1);
        QCOMPARE(chart.throughputPoints(), 1);
        chart.clear();
        QCOMPARE(chart.lossPoints(), 0);
    }
};

QTEST_MAIN(TestGuiModels)
#include "test_gui_models.moc"
