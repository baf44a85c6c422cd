// `sealtrainctl audit export|verify|report` end to end: a demonstration bundle verifies, a
// changed byte fails with the entry named, a filtered re-export verifies, and the PDF report
// shows the entries and the verdict (read back with pdftotext from poppler-utils).
#include "ctl.h"

#include <QtTest/QtTest>

#include <fstream>
#include <sstream>

using sealtrain::ctl::kExitFailure;
using sealtrain::ctl::kExitOk;
using sealtrain::ctl::kExitUsage;

namespace {

struct Run {
    int code = 0;
    std::string out;
    std::string err;
};

Run ctl(const std::vector<std::string>& args)
{
    std::ostringstream out;
    std::ostringstream err;
    const int code = sealtrain::ctl::run(args, out, err);
    return {code, out.str(), err.str()};
}

std::string readFile(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

QString pdfText(const QString& pdf)
{
    QProcess process;
    process.start("pdftotext", {"-layout", pdf, "-"});
    if (!process.waitForFinished(30000) || process.exitCode() != 0)
        return {};
    return QString::fromUtf8(process.readAllStandardOutput());
}

}  // namespace

class TestAuditCtl : public QObject {
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QVERIFY(dir_.isValid());
        bundle_ = dir_.filePath("bundle.txt").toStdString();
        key_ = dir_.filePath("public.pem").toStdString();
        witness_ = dir_.filePath("witness.txt").toStdString();
        const auto run = ctl({"audit", "export", "--demo", "40", "--out", bundle_,
                              "--public-key-out", key_, "--witness", witness_});
        QVERIFY2(run.code == kExitOk, run.err.c_str());
    }

    void verifies()
    {
        const auto run = ctl({"audit", "verify", bundle_, "--key", key_, "--witness", witness_});
        QVERIFY2(run.code == kExitOk, (run.out + run.err).c_str());
        QVERIFY(run.out.find("40 of 40 verified") != std::string::npos);
        QVERIFY(run.out.find("Result:          VERIFIED") != std::string::npos);
    }

    void changedByteFailsNamingTheEntry()
    {
        std::string text = readFile(bundle_);
        // Entry 17's line: flip one base64 character of its bytes.
        const auto line = text.find("\nentry 17 ");
        QVERIFY(line != std::string::npos);
        const auto at = text.find(' ', line + 11) + 30;
        text[at] = text[at] == 'A' ? 'B' : 'A';
        const std::string tampered = dir_.filePath("tampered.txt").toStdString();
        std::ofstream(tampered, std::ios::binary) << text;
        const auto run = ctl({"audit", "verify", tampered, "--key", key_});
        QCOMPARE(run.code, kExitFailure);
        QVERIFY2(run.out.find("First bad entry: 17") != std::string::npos, run.out.c_str());
        QVERIFY(run.out.find("Result:          FAILED") != std::string::npos);

        const std::string pdf = dir_.filePath("failed.pdf").toStdString();
        QCOMPARE(ctl({"audit", "report", tampered, "--key", key_, "--out", pdf}).code,
                 kExitFailure);
        const QString shown = pdfText(QString::fromStdString(pdf));
        if (shown.isEmpty())
            QSKIP("pdftotext (poppler-utils) is not installed; scripts/setup installs it.");
        QVERIFY(shown.contains("FAILED"));
        QVERIFY(shown.contains("First bad entry: 17"));
    }

    void wrongKeyFails()
    {
        const auto run =
            ctl({"audit", "verify", bundle_, "--key", "sha256:" + std::string(64, '0')});
        QCOMPARE(run.code, kExitFailure);
        QVERIFY(run.out.find("do not trust") != std::string::npos);
    }

    void filteredReexportVerifies()
    {
        const std::string subset = dir_.filePath("alice.txt").toStdString();
        auto run = ctl({"audit", "export", "--from-bundle", bundle_, "--key", key_, "--actor",
                        "alice", "--out", subset});
        QVERIFY2(run.code == kExitOk, run.err.c_str());
        run = ctl({"audit", "verify", subset, "--key", key_});
        QVERIFY2(run.code == kExitOk, run.out.c_str());
        QVERIFY(run.out.find("Selection:       actor=alice") != std::string::npos);
        QVERIFY(run.out.find("14 of 14 verified") != std::string::npos);
    }

    void usageErrors()
    {
        QCOMPARE(ctl({"audit", "export", "--out", "x"}).code, kExitUsage);
        QCOMPARE(ctl({"audit", "verify"}).code, kExitUsage);
        const auto missing = ctl({"audit", "verify", "/nonexistent/bundle"});
        QCOMPARE(missing.code, kExitFailure);
        QVERIFY(missing.err.find("check the path") != std::string::npos);
    }

    void pdfReportShowsEntriesAndVerdict()
    {
        const std::string pdf = dir_.filePath("report.pdf").toStdString();
        const auto run =
            ctl({"audit", "report", bundle_, "--key", key_, "--witness", witness_, "--out", pdf});
        QVERIFY2(run.code == kExitOk, (run.out + run.err).c_str());
        const QString shown = pdfText(QString::fromStdString(pdf));
        if (shown.isEmpty())
            QSKIP("pdftotext (poppler-utils) is not installed; scripts/setup installs it.");
        QVERIFY(shown.contains("Sealtrain audit report"));
        QVERIFY(shown.contains("VERIFIED"));
        QVERIFY(shown.contains("dataset.import"));
        QVERIFY(shown.contains("job.approve"));
        QVERIFY(shown.contains("req-1000"));
        QVERIFY(shown.contains("req-1039"));  // the last entry
        QVERIFY(shown.contains("sealtrainctl audit verify"));
    }

private:
    QTemporaryDir dir_;
    std::string bundle_;
    std::string key_;
    std::string witness_;
};

QTEST_APPLESS_MAIN(TestAuditCtl)
#include "test_ctl_audit.moc"
