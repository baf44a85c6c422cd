// sealtrainctl doctor: every library reported, a missing GPU is a warning with advice (not an
// error), and the disk and AES assessments.
#include "doctor.h"
#include "sealtrain/core/access/access.h"

#include "test_helpers.h"

#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include <sstream>

using namespace sealtrain::ctl;

namespace {

const Check* findCheck(const DoctorReport& report, const std::string& name)
{
    for (const auto& check : report.checks) {
        if (check.name == name)
            return &check;
    }
    return nullptr;
}

}  // namespace

class TestDoctor : public QObject {
    Q_OBJECT

private slots:
    void reportsEveryLibrary()
    {
        QTemporaryDir dir;
        DoctorOptions options{std::filesystem::path(dir.path().toStdString()), 1, std::nullopt,
                              std::nullopt};
        options.controlExecutable = SEALTRAIN_CONTROL_EXECUTABLE;
        options.trainerExecutable = SEALTRAIN_TRAIN_EXECUTABLE;
        const auto report = runDoctor(options);
        for (const char* name :
             {"Qt", "OpenSSL", "libsodium", "SQLCipher", "gRPC", "MPI", "BLAS", "GPU",
              "CUDA runtime", "cuBLAS", "NCCL", "CPU AES", "Data directory"}) {
            QVERIFY2(findCheck(report, name) != nullptr, name);
        }
        QVERIFY(!report.hasErrors());
        QVERIFY(findCheck(report, "SQLCipher")->finding.starts_with("3."));
        QCOMPARE(findCheck(report, "Qt")->finding, std::string(qVersion()));
        QVERIFY(findCheck(report, "MPI")->finding.starts_with("Open MPI"));
        QVERIFY(findCheck(report, "BLAS")->finding.starts_with("OpenBLAS"));
    }

    // The CLI links neither SQLCipher nor MPI nor BLAS: their versions come from the programs
    // that do. One that is not installed here is one warning that says where to look instead;
    // one that answers nothing usable is an error.
    void programsThatAreNotHereOrDoNotAnswer()
    {
        QTemporaryDir dir;
        const std::filesystem::path folder(dir.path().toStdString());
        DoctorOptions missing{folder, 1, std::nullopt, std::nullopt};
        const auto report = runDoctor(missing);
        QVERIFY(findCheck(report, "SQLCipher") == nullptr);
        QVERIFY(findCheck(report, "MPI") == nullptr);
        for (const char* program : {"sealtrain-control", "sealtrain-train"}) {
            const Check* check = findCheck(report, program);
            QVERIFY2(check != nullptr, program);
            QCOMPARE(check->status, CheckStatus::Warning);
            QVERIFY(check->advice.find("=PATH") != std::string::npos);
        }
        QVERIFY(!report.hasErrors());

        DoctorOptions silent{folder, 1, std::nullopt, std::nullopt};
        silent.controlExecutable = "/bin/true";
        const auto silentReport = runDoctor(silent);
        const Check* control = findCheck(silentReport, "sealtrain-control");
        QVERIFY(control != nullptr);
        QCOMPARE(control->status, CheckStatus::Error);
        QVERIFY2(control->finding.find("without a result") != std::string::npos,
                 control->finding.c_str());
    }

    void missingGpuIsAWarningWithAdvice()
    {
        sealtrain::node::GpuProbe probe;
        probe.deviceError = "the NVIDIA driver (libcuda.so.1) is not installed";
        probe.runtime.detail = "libcudart.so.13 not found";
        probe.cublas.detail = "libcublas.so.13 not found";
        probe.nccl.detail = "libnccl.so.2 not found";
        const auto checks = assessGpu(probe);
        QCOMPARE(checks.front().name, std::string("GPU"));
        QCOMPARE(checks.front().status, CheckStatus::Warning);
        QVERIFY(checks.front().finding.find("libcuda.so.1") != std::string::npos);
        for (const auto& check : checks) {
            QVERIFY(check.status != CheckStatus::Error);
            QVERIFY(!check.advice.empty());
        }
    }

    void hopperGpuIsOk()
    {
        sealtrain::node::GpuProbe probe;
        probe.driver = {true, "13.0", "libcuda.so.1"};
        probe.runtime = {true, "13.0", "libcudart.so.13"};
        probe.cublas = {true, "13.1.0", "libcublas.so.13"};
        probe.nccl = {true, "2.28.3", "libnccl.so.2"};
        probe.devices.push_back({0, "NVIDIA H200", 9, 0, std::uint64_t{141} << 30});
        const auto checks = assessGpu(probe);
        for (const auto& check : checks)
            QCOMPARE(check.status, CheckStatus::Ok);
        QVERIFY(checks.front().finding.find("NVIDIA H200 (sm_90") != std::string::npos);
    }

    void olderGpuWarns()
    {
        sealtrain::node::GpuProbe probe;
        probe.devices.push_back({0, "Tesla V100", 7, 0, std::uint64_t{16} << 30});
        QCOMPARE(assessGpu(probe).front().status, CheckStatus::Warning);
    }

    void diskThreshold()
    {
        const std::filesystem::path dir = "/var/lib/sealtrain";
        QCOMPARE(assessDisk(dir, std::uintmax_t{20} << 30, std::uintmax_t{10} << 30).status,
                 CheckStatus::Ok);
        const auto low = assessDisk(dir, std::uintmax_t{2} << 30, std::uintmax_t{10} << 30);
        QCOMPARE(low.status, CheckStatus::Warning);
        QVERIFY(low.advice.find("--data-dir") != std::string::npos);
    }

    void aesAssessment()
    {
        QCOMPARE(assessCpuAes({true, true, false}).status, CheckStatus::Ok);
        QCOMPARE(assessCpuAes({false, false, false}).status, CheckStatus::Warning);
    }

    void oldOpenSslIsAnError()
    {
        QCOMPARE(assessOpenSsl("OpenSSL 3.0.19 27 Jan 2026").status, CheckStatus::Ok);
        QCOMPARE(assessOpenSsl("OpenSSL 1.1.1w 11 Sep 2023").status, CheckStatus::Error);
    }

    // Issue #27, item 3: signed in, doctor asks the control plane what it warns every user of
    // and says plainly, with one admin, that four eyes is not guaranteed; with two it is fine.
    // (test_ctl_workstation runs it against a real control plane.)
    void singleAdminIsAWarning()
    {
        QTemporaryDir dir;
        const std::filesystem::path data = dir.path().toStdString();
        const auto single = sealtrain::core::fourEyesWarning({"alice"});
        QVERIFY(single.has_value());
        const auto report = runDoctor(
            {data, 1,
             sealtrain::Result<std::vector<std::string>>(std::vector<std::string>{*single}),
             std::nullopt});
        const Check* fourEyes = findCheck(report, "Four eyes");
        QVERIFY(fourEyes != nullptr);
        QCOMPARE(fourEyes->status, CheckStatus::Warning);
        QVERIFY2(fourEyes->advice.starts_with("Four eyes is not guaranteed"),
                 fourEyes->advice.c_str());
        QVERIFY(fourEyes->advice.find("alice") != std::string::npos);
        QCOMPARE(assessFourEyes({}).status, CheckStatus::Ok);
        // The control plane could not be asked: said, as a warning with what to do.
        const auto unasked =
            runDoctor({data, 1,
                       sealtrain::Result<std::vector<std::string>>(sealtrain::Error(
                           sealtrain::ErrorCode::Io, "Cannot reach the control plane.")),
                       std::nullopt});
        QCOMPARE(findCheck(unasked, "Four eyes")->status, CheckStatus::Warning);
        // Nobody signed in: nothing asked, nothing said.
        QVERIFY(findCheck(runDoctor({data, 1, std::nullopt, std::nullopt}), "Four eyes")
                == nullptr);
    }

    // Issue #49: doctor says whether the control plane keeps its audit heads outside its data
    // directory, and warns when it does not.
    void auditWitnesses()
    {
        const Check none = assessAuditWitnesses(0);
        QCOMPARE(none.status, CheckStatus::Warning);
        QVERIFY2(none.advice.find("--audit-witness") != std::string::npos, none.advice.c_str());
        const Check two = assessAuditWitnesses(2);
        QCOMPARE(two.status, CheckStatus::Ok);
        QVERIFY2(two.finding.find("2 outside") != std::string::npos, two.finding.c_str());
        QTemporaryDir dir;
        const std::filesystem::path data = dir.path().toStdString();
        DoctorOptions asked{data, 1, std::nullopt, std::nullopt};
        asked.auditWitnessesOutside = 0;
        QCOMPARE(findCheck(runDoctor(asked), "Audit witnesses")->status, CheckStatus::Warning);
        QVERIFY(findCheck(runDoctor({data, 1, std::nullopt, std::nullopt}), "Audit witnesses")
                == nullptr);
    }

    // Issue #49 item 4: doctor says how far the SIEM has the audit log, and warns when nothing
    // is forwarded, when the target refuses lines, or when it is far behind.
    void auditForwarding()
    {
        const Check off = assessAuditForwarding(std::nullopt, 1000);
        QCOMPARE(off.status, CheckStatus::Warning);
        QVERIFY2(off.advice.find("--audit-forward") != std::string::npos, off.advice.c_str());
        sealtrain::api::AuditForwardingView healthy{"syslog-tls", 120, 120, 120, 990, 0, 0};
        const Check ok = assessAuditForwarding(healthy, 1000);
        QCOMPARE(ok.status, CheckStatus::Ok);
        QVERIFY2(ok.finding.find("syslog-tls: 120 of 120 entries delivered") != std::string::npos,
                 ok.finding.c_str());
        auto failing = healthy;
        failing.logSize = 130;
        failing.failingSinceUnix = 940;
        failing.failures = 4;
        const Check refused = assessAuditForwarding(failing, 1000);
        QCOMPARE(refused.status, CheckStatus::Warning);
        QVERIFY2(refused.finding.find("refuses lines since 60 s ago (4 failures)")
                     != std::string::npos,
                 refused.finding.c_str());
        auto behind = healthy;
        behind.logSize = 5000;
        QCOMPARE(assessAuditForwarding(behind, 1000).status, CheckStatus::Warning);
        QTemporaryDir dir;
        DoctorOptions asked{dir.path().toStdString(), 1, std::nullopt, std::nullopt};
        asked.auditForwarding = std::optional<sealtrain::api::AuditForwardingView>(failing);
        asked.nowUnix = 1000;
        QCOMPARE(findCheck(runDoctor(asked), "Audit forwarding")->status, CheckStatus::Warning);
    }

    // Issue #48: doctor says how long enrolment and reset codes work, and warns past 14 days,
    // since whoever finds an unused code becomes that user.
    void enrolmentCodeLifetime()
    {
        constexpr std::int64_t kDay = std::int64_t{24} * 3600;
        const Check week = assessEnrolmentCodes(7 * kDay);
        QCOMPARE(week.status, CheckStatus::Ok);
        QVERIFY2(week.finding.find("7 days") != std::string::npos, week.finding.c_str());
        QCOMPARE(assessEnrolmentCodes(14 * kDay).status, CheckStatus::Ok);
        QVERIFY(assessEnrolmentCodes(kDay).finding.find("1 day after") != std::string::npos);
        QVERIFY(assessEnrolmentCodes(90).finding.find("90 s") != std::string::npos);
        const Check month = assessEnrolmentCodes(30 * kDay);
        QCOMPARE(month.status, CheckStatus::Warning);
        QVERIFY2(month.advice.find("--enrolment-code-lifetime") != std::string::npos,
                 month.advice.c_str());
        QCOMPARE(assessEnrolmentCodes(14 * kDay + 1).status, CheckStatus::Warning);
        // Asked of the control plane (signed in): reported; not asked: not said.
        QTemporaryDir dir;
        const std::filesystem::path data = dir.path().toStdString();
        const auto asked = runDoctor({data, 1, std::nullopt, 30 * kDay});
        QVERIFY(findCheck(asked, "Enrolment codes") != nullptr);
        QCOMPARE(findCheck(asked, "Enrolment codes")->status, CheckStatus::Warning);
        QVERIFY(findCheck(runDoctor({data, 1, std::nullopt, std::nullopt}), "Enrolment codes")
                == nullptr);
    }

    // Issue #52: the platform CA and the artefact root warn 90 days ahead, a worker's
    // certificate 30 days ahead, and an expired one is an error naming it.
    void certificatesExpiry()
    {
        constexpr std::int64_t now = 1'800'000'000;
        constexpr std::int64_t day = std::int64_t{24} * 3600;
        CertificateDates dates;
        dates.caExpiresUnix = now + 3650 * day;
        dates.artefactRootExpiresUnix = now + 3650 * day;
        dates.workers = {{"n1", now + 300 * day}, {"n2", now + 200 * day}};
        const Check fine = assessCertificates(dates, now);
        QCOMPARE(fine.status, CheckStatus::Ok);
        QVERIFY2(fine.finding.find("worker n1 until") != std::string::npos, fine.finding.c_str());

        dates.workers[1].second = now + 10 * day;
        const Check soon = assessCertificates(dates, now);
        QCOMPARE(soon.status, CheckStatus::Warning);
        QVERIFY2(soon.finding.find("worker n2 expires on") != std::string::npos
                     && soon.finding.find("in 10 days") != std::string::npos
                     && soon.finding.find("n1") == std::string::npos,
                 soon.finding.c_str());
        QVERIFY(!soon.advice.empty());

        dates.workers[1].second = now + 100 * day;
        dates.artefactRootExpiresUnix = now + 60 * day;
        QCOMPARE(assessCertificates(dates, now).status, CheckStatus::Warning);
        dates.artefactRootExpiresUnix = now + 3650 * day;
        dates.caExpiresUnix = now + 89 * day;
        QCOMPARE(assessCertificates(dates, now).status, CheckStatus::Warning);

        dates.caExpiresUnix = now + 3650 * day;
        dates.workers[0].second = now - day;
        const Check expired = assessCertificates(dates, now);
        QCOMPARE(expired.status, CheckStatus::Error);
        QVERIFY2(expired.finding.find("worker n1 expired on") != std::string::npos,
                 expired.finding.c_str());
    }

    void jsonReport()
    {
        DoctorReport report;
        report.checks.push_back({"GPU", CheckStatus::Warning, "none", "Use a GPU node."});
        std::ostringstream out;
        printReportJson(report, out);
        const auto parsed = nlohmann::json::parse(out.str());
        QCOMPARE(parsed["ok"].get<bool>(), true);
        QCOMPARE(parsed["warnings"].get<int>(), 1);
        QCOMPARE(QString::fromStdString(parsed["checks"][0]["status"].get<std::string>()),
                 QStringLiteral("warning"));
    }
};

QTEST_APPLESS_MAIN(TestDoctor)
#include "test_ctl_doctor.moc"
