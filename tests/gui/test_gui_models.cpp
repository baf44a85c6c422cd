// The GUI's table models and charts fed plain rows, as the client library returns them, with no
// server (issue #29): what each column shows, paging appends without losing rows, the charts
// take the trainer's step and validation lines and ignore the rest; the import wizard's summary
// of a screening report; the enrolment QR code (the standard's finder patterns and quiet zone,
// each module drawn where the encoder put it) and the key read from an otpauth:// URI.
#include "audit/audit_table_model.h"
#include "audit/head_check.h"
#include "datasets/dataset_lineage.h"
#include "datasets/datasets_page.h"
#include "datasets/import_wizard.h"
#include "jobs/job_table_model.h"
#include "jobs/metrics_chart.h"
#include "registry/model_lineage.h"
#include "runs/compare_chart.h"
#include "runs/run_table_model.h"
#include "session/enrol_dialog.h"
#include "session/qr_code.h"
#include "workers/workers_page.h"

#include "sealtrain/audit/tree_head.h"
#include "sealtrain/crypto/signing.h"

#include <nlohmann/json.hpp>

#include <QAction>
#include <QClipboard>
#include <QGuiApplication>
#include <QLineEdit>
#include <QTableView>
#include <QVBoxLayout>
#include <QtTest/QtTest>

using namespace sealtrain;
using namespace sealtrain::gui;

class TestGuiModels : public QObject {
    Q_OBJECT

private slots:
    // Every table: a digest elided in the middle with the whole value in its tooltip, rows sorted
    // by a clicked column as numbers where they are numbers (the selection goes with its row, and
    // a reload keeps the order), and Ctrl+C copying the current cell's whole value.
    void tablesElideSortAndCopy()
    {
        const std::string digest =
            "sha256:2f88ee727524404cbcb10992969382a8cfbc1effa9f7fb09296d925deca1703e";
        DatasetTableModel model;
        QTableView table;
        setUpTable(table, model, "datasetsTable", "Datasets");
        const auto rows = [&] {
            return std::vector<api::DatasetSummary>{{digest, "notes", 1, "internal", 9, 90},
                                                    {"sha256:short", "alpha", 2, "public", 1234, 5},
                                                    {"sha256:x", "zeta", 3, "internal", 10, 7}};
        };
        model.setRows(rows());
        const QModelIndex id = model.index(0, DatasetTableModel::Id);
        QCOMPARE(id.data().toString(), QString("sha256:2f88ee727524…eca1703e"));
        QCOMPARE(id.data(Qt::ToolTipRole).toString(), QString::fromStdString(digest));
        QCOMPARE(id.data(kFullTextRole).toString(), QString::fromStdString(digest));
        QVERIFY(!model.index(1, DatasetTableModel::Id).data(Qt::ToolTipRole).isValid());

        // Unsorted until a header is clicked: the rows' own order.
        QCOMPARE(model.rowAt(0)->name, std::string("notes"));
        table.selectRow(1);                                                  // alpha
        table.sortByColumn(DatasetTableModel::Records, Qt::AscendingOrder);  // 9, 10, 1,234
        QCOMPARE(model.rowAt(0)->name, std::string("notes"));
        QCOMPARE(model.rowAt(1)->name, std::string("zeta"));
        QCOMPARE(model.rowAt(2)->name, std::string("alpha"));
        QCOMPARE(table.currentIndex().row(), 2);  // the selection went with alpha
        table.sortByColumn(DatasetTableModel::Name, Qt::DescendingOrder);
        QCOMPARE(model.rowAt(0)->name, std::string("zeta"));
        model.setRows(rows());  // a reload keeps the order asked for
        QCOMPARE(model.rowAt(0)->name, std::string("zeta"));
        QCOMPARE(model.rowAt(2)->name, std::string("alpha"));

        table.setCurrentIndex(model.index(1, DatasetTableModel::Id));  // notes
        auto* copy = table.findChild<QAction*>("datasetsTableCopy");
        QVERIFY(copy != nullptr);
        QCOMPARE(copy->shortcut(), QKeySequence(QKeySequence::Copy));
        QVERIFY(table.actions().contains(copy));  // the context menu's entry
        copy->trigger();
        QCOMPARE(QGuiApplication::clipboard()->text(), QString::fromStdString(digest));
    }

    // A table's filter field: the rows shown hold every word typed, in any case, in some cell's
    // whole value (a full digest finds its row though the cell shows it elided); the filter holds
    // through a reload, an appended page and a sort; Esc empties it and Ctrl+F reaches it.
    void tablesFilter()
    {
        const std::string digest =
            "sha256:2f88ee727524404cbcb10992969382a8cfbc1effa9f7fb09296d925deca1703e";
        DatasetTableModel model;
        QWidget window;
        auto* table = new QTableView(&window);
        setUpTable(*table, model, "datasetsTable", "Datasets");
        QWidget* box = withFilter(*table);
        auto* layout = new QVBoxLayout(&window);
        layout->addWidget(box);
        auto* field = window.findChild<QLineEdit*>("datasetsTableFilter");
        if (field == nullptr)
            QFAIL("no filter field");
        QVERIFY(!field->accessibleName().isEmpty());
        const auto rows = [&] {
            return std::vector<api::DatasetSummary>{{digest, "notes", 1, "internal", 9, 90},
                                                    {"sha256:short", "alpha", 2, "public", 1234, 5},
                                                    {"sha256:x", "zeta", 3, "internal", 10, 7}};
        };
        model.setRows(rows());
        const auto shown = [&] {
            QStringList names;
            for (int row = 0; row < model.rowCount(); ++row)
                if (!table->isRowHidden(row))
                    names << QString::fromStdString(model.rowAt(row)->name);
            return names.join(',');
        };
        QCOMPARE(shown(), QString("notes,alpha,zeta"));
        QTest::keyClicks(field, "INTERNAL");
        QCOMPARE(shown(), QString("notes,zeta"));
        field->setText("internal no");  // every word, each anywhere in the row
        QCOMPARE(shown(), QString("notes"));
        field->setText(QString::fromStdString(digest));  // the whole digest behind the ellipsis
        QCOMPARE(shown(), QString("notes"));
        field->setText("internal");
        std::vector<api::DatasetSummary> reloaded = rows();
        std::swap(reloaded[0], reloaded[1]);
        model.setRows(reloaded);  // a reload, in another order
        QCOMPARE(shown(), QString("notes,zeta"));
        model.setRows(rows());
        model.appendRows(
            {{"sha256:y", "beta", 4, "internal", 3, 3}, {"sha256:z", "gamma", 5, "public", 3, 3}});
        QCOMPARE(shown(), QString("notes,zeta,beta"));
        table->sortByColumn(DatasetTableModel::Name, Qt::AscendingOrder);
        QCOMPARE(shown(), QString("beta,notes,zeta"));
        QTest::keyClick(field, Qt::Key_Escape);
        QVERIFY(field->text().isEmpty());
        QCOMPARE(shown(), QString("alpha,beta,gamma,notes,zeta"));

        window.show();
        QVERIFY(QTest::qWaitForWindowActive(&window));
        table->setFocus();
        QTest::keyClick(table, Qt::Key_F, Qt::ControlModifier);
        QVERIFY(field->hasFocus());
    }

    // A worker's health on the Workers screen: an active worker silent for over two minutes,
    // or whose certificate expires within 30 days (or has), is shown in red; a revoked one is
    // not watched.
    void workersHealth()
    {
        const std::int64_t now = QDateTime::currentSecsSinceEpoch();
        const std::int64_t day = std::int64_t{24} * 3600;
        const auto worker = [&](const char* state, std::int64_t lastSeen, std::int64_t expires) {
            api::WorkerSummary summary;
            summary.name = "n";
            summary.state = state;
            summary.lastSeenUnix = lastSeen;
            summary.certificateExpiresUnix = expires;
            return summary;
        };
        using Model = WorkerTableModel;
        QVERIFY(!Model::health(worker("active", now - 10, now + 365 * day), now).silent);
        QVERIFY(!Model::health(worker("active", now - 10, now + 365 * day), now).expiring);
        QVERIFY(Model::health(worker("active", now - 600, now + 365 * day), now).silent);
        QVERIFY(Model::health(worker("active", 0, now + 365 * day), now).silent);
        QVERIFY(Model::health(worker("active", now, now + 10 * day), now).expiring);
        QVERIFY(Model::health(worker("active", now, now - day), now).expiring);
        QVERIFY(!Model::health(worker("revoked", 0, now - day), now).expiring);
        QVERIFY(!Model::health(worker("revoked", 0, now - day), now).silent);

        Model model;
        model.setRows({worker("active", now - 10, now + 10 * day),
                       worker("active", now - 600, now + 365 * day)});
        const auto red = [&model](int row, int column) {
            return model.index(row, column).data(Qt::ForegroundRole).isValid();
        };
        QVERIFY(red(0, Model::CertificateExpires) && !red(0, Model::LastSeen));
        QVERIFY(!red(1, Model::CertificateExpires) && red(1, Model::LastSeen));
        QCOMPARE(model.index(0, Model::CertificateExpires).data().toString(),
                 utcText(now + 10 * day));
        QVERIFY2(
            model.index(0, Model::CertificateExpires)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .startsWith("In 10 days")
                || model.index(0, Model::CertificateExpires)
                       .data(Qt::ToolTipRole)
                       .toString()
                       .startsWith("In 9 days"),
            qPrintable(model.index(0, Model::CertificateExpires).data(Qt::ToolTipRole).toString()));
    }

    // The overview's newest signed head: shown as signed only when the audit key's signature
    // on it verifies; a head changed in one byte, or signed by another key, says so.
    void signedHeadIsChecked()
    {
        const auto key = crypto::SigningKey::generate().value();
        const auto other = crypto::SigningKey::generate().value();
        audit::TreeHead head;
        head.origin = "sealtrain.test/audit";
        head.size = 42;
        head.root.fill(0xab);
        head.timeSeconds = 1'800'000'000;
        const std::string note = audit::signTreeHead(head, key);
        const std::string pem = key.publicKey().toPem();

        const HeadCheck good = checkSignedHead(note, pem);
        QVERIFY2(good.verified, qPrintable(good.text));
        QVERIFY(good.text.startsWith("42 entries, signed 2027-01-15T08:00:00Z"));
        QVERIFY(good.text.contains(QString("ab").repeated(32)));

        std::string forged = note;
        forged[forged.find("42")] = '9';  // 92 entries claimed
        QVERIFY(!checkSignedHead(forged, pem).verified);
        QVERIFY(checkSignedHead(forged, pem).text.contains("does NOT verify"));
        QVERIFY(!checkSignedHead(note, other.publicKey().toPem()).verified);
        QVERIFY(!checkSignedHead(note, "not a key").verified);
        QVERIFY(!checkSignedHead({}, pem).verified);
    }

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

    void screeningReportInSentences()
    {
        QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates));
        const QString text = importReportText(
            R"({"records_read":1200,"files_read":3,"bytes_read":2048,"records_kept":1180,)"
            R"("duplicates":15,"skipped":5,"pii_redacted":true,)"
            R"("pii":{"email":{"count":4},"ipv4":{"count":0},"phone":{"count":2}}})");
        QVERIFY2(text.startsWith("Read 1,200 records from 3 files (2.00 KiB): kept 1,180, 15 "
                                 "duplicates, 5 skipped."),
                 qPrintable(text));
        QVERIFY2(text.endsWith("Possible PII for review, redacted: 4 email, 2 phone."),
                 qPrintable(text));
        QVERIFY(importReportText(R"({"records_read":1,"pii":{}})")
                    .endsWith("No possible PII was found."));
        QVERIFY(importReportText("not json").isEmpty());
        QLocale::setDefault(QLocale::system());
    }

    void enrolmentQrCode()
    {
        const QByteArray uri =
            "otpauth://totp/Sealtrain:zoe?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"
            "&issuer=Sealtrain&algorithm=SHA1&digits=6&period=30";
        QCOMPARE(otpauthSecret(uri), QString("JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"));
        QVERIFY(otpauthSecret("https://example.org/?secret=ABC").isEmpty());
        const QrMatrix matrix = encodeQr(uri);
        // 21 + 4 (version - 1) modules; 110 bytes at level M need version 6 or more.
        QVERIFY(matrix.width >= 41);
        QCOMPARE((matrix.width - 21) % 4, 0);
        // A finder pattern in three corners: a dark 7x7 ring, a light ring, a dark 3x3 centre.
        for (const auto& [ox, oy] : {std::pair{0, 0}, {matrix.width - 7, 0}, {0, matrix.width - 7}})
            for (int y = 0; y < 7; ++y)
                for (int x = 0; x < 7; ++x) {
                    const bool ring = x == 0 || y == 0 || x == 6 || y == 6;
                    const bool centre = x >= 2 && x <= 4 && y >= 2 && y <= 4;
                    QCOMPARE(matrix.at(ox + x, oy + y), ring || centre);
                }
        const int scale = 5;
        const QImage image = drawQr(matrix, scale);
        QCOMPARE(image.width(), (matrix.width + 2 * kQrQuietZone) * scale);
        QCOMPARE(image.pixel(1, 1), qRgb(255, 255, 255));  // the quiet zone
        for (int y = 0; y < matrix.width; ++y)
            for (int x = 0; x < matrix.width; ++x) {
                const QRgb centre = image.pixel((x + kQrQuietZone) * scale + scale / 2,
                                                (y + kQrQuietZone) * scale + scale / 2);
                QCOMPARE(centre, matrix.at(x, y) ? qRgb(0, 0, 0) : qRgb(255, 255, 255));
            }
        QVERIFY(drawQr(QrMatrix{}, scale).isNull());
    }

    // A dataset's lineage from plain rows: its versions in order, each after the one before, the
    // jobs trained on each under it; other datasets and their jobs left out.
    void lineageLinksVersionsAndJobs()
    {
        const auto dataset = [](const char* id, const char* name, std::int64_t version) {
            api::DatasetSummary row;
            row.id = id;
            row.name = name;
            row.version = version;
            row.classification = "internal";
            row.records = 1204;
            return row;
        };
        const auto job = [](std::int64_t id, const char* trainedOn, const char* state) {
            api::JobSummary row;
            row.id = id;
            row.name = "run";
            row.datasetId = trainedOn;
            row.state = state;
            row.submitter = "bob";
            return row;
        };
        // Listed out of order, with another dataset and a job of it.
        const std::vector<api::DatasetSummary> datasets{
            dataset("sha256:v3", "notes", 3), dataset("sha256:x1", "other", 1),
            dataset("sha256:v1", "notes", 1), dataset("sha256:v2", "notes", 2)};
        const std::vector<api::JobSummary> jobs{job(7, "sha256:v2", "succeeded"),
                                                job(8, "sha256:x1", "running"),
                                                job(9, "sha256:v2", "queued")};
        const Lineage lineage = lineageOf(datasets, jobs, "sha256:v2");
        QCOMPARE(lineage.nodes.size(), std::size_t{5});
        QCOMPARE(lineage.text(),
                 QString("notes v1 (sha256:v1, 1,204 records, internal)\n"
                         "notes v2 (sha256:v2, 1,204 records, internal) after notes v1\n"
                         "job 7 run (succeeded, by bob) trained on notes v2\n"
                         "job 9 run (queued, by bob) trained on notes v2\n"
                         "notes v3 (sha256:v3, 1,204 records, internal) after notes v2"));
        QVERIFY(lineage.nodes[1].selected);
        QCOMPARE(lineage.nodes[3].row, 2);  // job 9, second under v2
        QCOMPARE(lineage.nodes[4].column, 2);
        QVERIFY(lineageOf(datasets, jobs, "sha256:none").nodes.empty());

        LineageView view(QStringLiteral("nothing yet"));
        view.setLineage(lineage);
        QCOMPARE(view.accessibleDescription(), lineage.text());
        QVERIFY(view.sizeHint().width() > 3 * view.sizeHint().height() / 2);  // three columns
        view.resize(view.sizeHint());
        QVERIFY(!view.grab().isNull());
    }

    // The Models screen's lineage graph: an imported base model shows what was imported and by
    // whom; a fine-tuned version starts from its base model.
    void modelLineageGraphShowsImportsAndBases()
    {
        const auto envelope = [](const nlohmann::json& statement) {
            return nlohmann::json{
                {"payload", QByteArray::fromStdString(statement.dump()).toBase64().toStdString()},
                {"payloadType", "application/vnd.in-toto+json"},
                {"signatures", nlohmann::json::array()}}
                .dump();
        };
        const nlohmann::json imported{
            {"source", "import"},
            {"model", "tiny"},
            {"version", 1},
            {"digest", "sha256:" + std::string(64, 'a')},
            {"registration",
             envelope({{"predicate",
                        {{"imported_by", "bob"},
                         {"sources", {{"model.safetensors", std::string(64, 'b')}}}}}})}};
        const QString importGraph = lineageGraph(imported.dump());
        QVERIFY2(importGraph.contains("imported GPT-2 folder (model.safetensors bbbbbbbb"),
                 qPrintable(importGraph));
        QVERIFY2(importGraph.contains("tiny@1") && importGraph.contains("imported by bob"),
                 qPrintable(importGraph));
        QVERIFY(!importGraph.contains("dataset"));
        const nlohmann::json tuned{
            {"source", "job"},
            {"model", "tuned"},
            {"version", 1},
            {"dataset", "sha256:cd"},
            {"base", {{"model", "tiny"}, {"version", 1}, {"digest", "sha256:ab"}}},
            {"registration", envelope({{"predicate", {{"registered_by", "bob"}}}})}};
        const QStringList lines = lineageGraph(tuned.dump()).split('\n');
        QCOMPARE(lines.value(0), QString("base model tiny@1 (sha256:ab)"));
        QVERIFY(lines.value(1).startsWith("dataset sha256:cd"));
    }

    // The Models screen's drawn lineage: dataset and base model into the job, the checkpoint
    // chain in order, the version (chosen) and each promotion out of it; a long chain shows its
    // ends and one box for the rest; an import is drawn from its folder; an unreadable document
    // draws nothing.
    void modelLineageDrawnFromTheDocument()
    {
        const auto envelope = [](const nlohmann::json& predicate) {
            return nlohmann::json{{"payload", QByteArray::fromStdString(
                                                  nlohmann::json{{"predicate", predicate}}.dump())
                                                  .toBase64()
                                                  .toStdString()},
                                  {"payloadType", "application/vnd.in-toto+json"},
                                  {"signatures", nlohmann::json::array()}}
                .dump();
        };
        const auto document = [&](int checkpoints) {
            nlohmann::json chain = nlohmann::json::array();
            for (int step = 1; step <= checkpoints; ++step)
                chain.push_back({{"step", step * 100},
                                 {"worker", "n4"},
                                 {"plaintext_sha256", std::string(64, 'c')}});
            return nlohmann::json{
                {"source", "job"},
                {"model", "fortunes"},
                {"version", 2},
                {"digest", "sha256:" + std::string(64, 'd')},
                {"dataset", "sha256:" + std::string(64, 'e')},
                {"base",
                 {{"model", "gpt2"},
                  {"version", 1},
                  {"digest", "sha256:ab"},
                  {"source", "import"}}},
                {"registration",
                 envelope(
                     {{"registered_by", "bob"},
                      {"job",
                       {{"id", 3}, {"name", "tune"}, {"submitter", "bob"}, {"approver", "ann"}}},
                      {"checkpoints", chain}})},
                {"promotions",
                 {envelope({{"alias", "staging"}, {"requested_by", "bob"}, {"approved_by", "ann"}}),
                  envelope(
                      {{"alias", "production"}, {"requested_by", "bob"}, {"approved_by", "ivy"}})}}}
                .dump();
        };
        const Lineage drawn = modelLineageOf(document(2));
        QCOMPARE(drawn.text(),
                 QString("dataset (sha256:eeeeeeeee…)\n"
                         "base model gpt2@1 (sha256:ab, imported)\n"
                         "job 3 'tune' (by bob, approved by ann) trained on dataset, started "
                         "from base model gpt2@1\n"
                         "checkpoint at step 100 (cccccccccccccccc…, signed by n4) written by "
                         "job 3 'tune'\n"
                         "checkpoint at step 200 (cccccccccccccccc…, signed by n4) after "
                         "checkpoint at step 100\n"
                         "fortunes@2 (sha256:ddddddddd…, registered by bob) registered from "
                         "checkpoint at step 200\n"
                         "alias staging (asked by bob, approved by ann) names fortunes@2\n"
                         "alias production (asked by bob, approved by ivy) names fortunes@2"));
        // One stage a row: the base beside the dataset, the version (the chosen box) under its
        // last checkpoint, its promotions side by side under it.
        QCOMPARE(drawn.flow, LineageFlow::Down);
        QCOMPARE(drawn.nodes[1].row, 0);
        QCOMPARE(drawn.nodes[1].column, 1);
        QVERIFY(drawn.nodes[5].selected && drawn.nodes[5].main);
        QCOMPARE(drawn.nodes[5].row, 4);
        QCOMPARE(drawn.nodes[5].column, 0);
        QCOMPARE(drawn.nodes[7].row, 5);
        QCOMPARE(drawn.nodes[7].column, 1);

        // 20 checkpoints: the first and last three, and one box for the 14 between.
        const Lineage longChain = modelLineageOf(document(20));
        QCOMPARE(longChain.nodes.size(), std::size_t{3 + 7 + 1 + 2});
        QCOMPARE(longChain.nodes[6].title, QString("… 14 more checkpoints"));
        QCOMPARE(longChain.nodes[6].detail, QString("steps 400 to 1700"));
        QCOMPARE(longChain.nodes[7].title, QString("checkpoint at step 1800"));
        QCOMPARE(longChain.nodes[9].title, QString("checkpoint at step 2000"));
        QVERIFY(longChain.text().contains("fortunes@2 (sha256:ddddddddd…, registered by bob) "
                                          "registered from checkpoint at step 2000"));

        const nlohmann::json imported{
            {"source", "import"},
            {"model", "gpt2"},
            {"version", 1},
            {"digest", "sha256:" + std::string(64, 'a')},
            {"registration",
             envelope({{"imported_by", "bob"},
                       {"sources", {{"model.safetensors", std::string(64, 'b')}}}})}};
        QCOMPARE(modelLineageOf(imported.dump()).text(),
                 QString("imported GPT-2 folder (model.safetensors bbbbbbbbbbbbbbbb…)\n"
                         "gpt2@1 (sha256:aaaaaaaaa…, imported by bob) imported from imported "
                         "GPT-2 folder"));
        QVERIFY(modelLineageOf("not a document").nodes.empty());

        LineageView view(QStringLiteral("nothing yet"));
        view.setLineage(drawn);
        QCOMPARE(view.accessibleDescription(), drawn.text());
        view.resize(view.sizeHint());
        // Six rows of boxes two lines high, two boxes wide.
        QVERIFY(view.sizeHint().height() > 6 * 2 * view.fontMetrics().height());
        QVERIFY(view.sizeHint().width()
                < 3 * view.fontMetrics().horizontalAdvance(QString(34, 'x')));
        QVERIFY(!view.grab().isNull());
    }

    void chartsTakeStepsAndValidations()
    {
        MetricsChart chart;
        QVERIFY(chart.addLine(R"({"kind":"step","step":1,"loss":5.5,"tok_per_s":1000,"mfu":0.1})"));
        QVERIFY(chart.addLine(R"({"kind":"step","step":2,"loss":5.0,"val_loss":5.2})"));
        QVERIFY(!chart.addLine(R"({"kind":"checkpoint","step":2,"file":"x"})"));
        QVERIFY(!chart.addLine("not json"));
        QVERIFY(!chart.addLine(R"({"kind":"start"})"));
        QTRY_COMPARE(chart.lossPoints(), 2);  // drawn with the next batch
        QCOMPARE(chart.validationPoints(), 1);
        QCOMPARE(chart.throughputPoints(), 1);
        chart.clear();
        QCOMPARE(chart.lossPoints(), 0);

        // A busy job's lines are drawn in one batch, not one by one as they come; a clear
        // drops what waits.
        for (int step = 1; step <= 3000; ++step)
            QVERIFY(chart.addLine(QStringLiteral(R"({"kind":"step","step":%1,"loss":%2})")
                                      .arg(step)
                                      .arg(9.0 / step)
                                      .toStdString()));
        QCOMPARE(chart.lossPoints(), 0);
        QTRY_COMPARE(chart.lossPoints(), 3000);
        QVERIFY(chart.addLine(R"({"kind":"step","step":3001,"loss":0.1})"));
        chart.clear();
        QTest::qWait(300);
        QCOMPARE(chart.lossPoints(), 0);
    }

    // Issue #30: a run's row says what its last lines say; the comparison chart draws each run's
    // loss and validation loss and marks where another attempt's steps begin (a restart).
    void runsTableAndRestartMarkers()
    {
        api::RunView restarted;
        restarted.job.id = 4;
        restarted.job.name = "restarted";
        restarted.job.state = "succeeded";
        restarted.job.restarts = 1;
        restarted.summary.stepsDone = 4;
        restarted.summary.stepsPlanned = 4;
        restarted.summary.lastLoss = 2.5;
        restarted.attempts = {{1, "node-a", 0, 0, "lost", "no heartbeat", 0, 1, 2},
                              {2, "node-b", 0, 0, "succeeded", "", 2, 3, 4},
                              {3, "node-a", 0, 0, "succeeded", "", 4, 0, 0}};
        api::RunView plain = restarted;
        plain.job.id = 5;
        plain.attempts.resize(1);
        plain.summary.lastLoss.reset();
        RunTableModel model;
        model.setRows({restarted, plain});
        QCOMPARE(model.data(model.index(0, RunTableModel::Steps), Qt::DisplayRole).toString(),
                 QString("4 / 4"));
        QCOMPARE(model.data(model.index(0, RunTableModel::Loss), Qt::DisplayRole).toString(),
                 QString("2.5000"));
        QCOMPARE(model.data(model.index(1, RunTableModel::Loss), Qt::DisplayRole).toString(),
                 QString::fromUtf8("–"));
        QCOMPARE(model.data(model.index(0, RunTableModel::Workers), Qt::DisplayRole).toString(),
                 QString("node-a, node-b"));

        const auto point = [](std::int64_t step, std::int64_t attempt, double loss,
                              std::optional<double> validation = {}) {
            return api::RunPointView{step, attempt, loss, validation, 0.001, 1.0, 100.0, 0.1, 0};
        };
        CompareChart chart;
        chart.showRuns({restarted, plain}, {{point(1, 1, 4.0), point(2, 1, 3.5, 3.6),
                                             point(3, 2, 3.0), point(4, 2, 2.5)},
                                            {point(1, 1, 4.1), point(2, 1, 3.9)}});
        QCOMPARE(chart.curves(), 4);
        QCOMPARE(chart.points(), 4 + 1 + 2);
        QCOMPARE(chart.restartMarkers(), 1);
        chart.showRuns({}, {});
        QCOMPARE(chart.curves(), 0);
        QCOMPARE(chart.restartMarkers(), 0);
        QVERIFY(!chart.grab().isNull());
    }
};

QTEST_MAIN(TestGuiModels)
#include "test_gui_models.moc"
