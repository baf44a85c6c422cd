// The doctor's probes and assessments.
#include "doctor.h"

#include "client_options.h"

#include "sealtrain/api/data_directory_tools.h"
#include "sealtrain/base/paths.h"
#include "sealtrain/base/version.h"
#include "sealtrain/crypto/platform.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <ostream>

namespace sealtrain::ctl {
namespace {

using Versions = std::map<std::string, std::string>;

std::string versionOf(const Versions& versions, const std::string& name)
{
    const auto found = versions.find(name);
    return found == versions.end() ? std::string() : found->second;
}

// What `program versions` answered, or the one check that says why it could not be asked.
struct AskedVersions {
    std::optional<Versions> versions;
    Check missing;
};

AskedVersions askVersions(const std::filesystem::path& executable, const std::string& program,
                          const std::string& role, const std::string& variable)
{
    if (executable.empty())
        return {std::nullopt,
                {program, CheckStatus::Warning, "not installed on this machine",
                 fmt::format("Run doctor where {} runs to check its libraries, or name it with "
                             "{}=PATH.",
                             role, variable)}};
    auto asked = api::programVersions(executable);
    if (!asked)
        return {std::nullopt,
                {program, CheckStatus::Error, asked.error().message(),
                 fmt::format("Reinstall Sealtrain so that {} matches this client.", program)}};
    return {std::move(*asked), {}};
}

Check found(std::string name, std::string version)
{
    if (version.empty()) {
        return {std::move(name), CheckStatus::Error, "version unknown",
                "Reinstall Sealtrain's dependencies with scripts/setup."};
    }
    return {std::move(name), CheckStatus::Ok, std::move(version), {}};
}

std::string humanBytes(std::uintmax_t bytes)
{
    constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
    return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / kGiB);
}

Check gpuLibrary(const char* name, const node::LibraryProbe& probe, bool gpuPresent)
{
    if (probe.found) {
        return {name,
                CheckStatus::Ok,
                probe.version.empty() ? probe.detail
                                      : fmt::format("{} ({})", probe.version, probe.detail),
                {}};
    }
    // Without a GPU these libraries are not needed; with one, training on it needs them.
    return {name, CheckStatus::Warning, probe.detail,
            gpuPresent ? "Install the CUDA toolkit libraries (cuda-toolkit, libnccl2) so the GPU "
                         "backend can run."
                       : "Needed only on GPU nodes: install it there with the CUDA toolkit."};
}

}  // namespace

bool DoctorReport::hasErrors() const
{
    return std::any_of(checks.begin(), checks.end(),
                       [](const Check& c) { return c.status == CheckStatus::Error; });
}

int DoctorReport::warningCount() const
{
    return static_cast<int>(std::count_if(checks.begin(), checks.end(), [](const Check& c) {
        return c.status == CheckStatus::Warning;
    }));
}

const char* checkStatusName(CheckStatus status)
{
    switch (status) {
    case CheckStatus::Ok: return "ok";
    case CheckStatus::Warning: return "warning";
    case CheckStatus::Error: return "error";
    }
    return "unknown";
}

std::vector<Check> assessGpu(const node::GpuProbe& probe)
{
    std::vector<Check> checks;
    const bool gpuPresent = !probe.devices.empty();
    if (gpuPresent) {
        std::vector<std::string> names;
        bool allHopperOrNewer = true;
        for (const auto& device : probe.devices) {
            names.push_back(fmt::format("#{} {} (sm_{}{}, {})", device.index, device.name,
                                        device.computeMajor, device.computeMinor,
                                        humanBytes(device.totalMemoryBytes)));
            allHopperOrNewer = allHopperOrNewer && device.computeMajor >= 9;
        }
        Check gpu{"GPU", CheckStatus::Ok, fmt::format("{}", fmt::join(names, "; ")), {}};
        if (!allHopperOrNewer) {
            gpu.status = CheckStatus::Warning;
            gpu.advice = "Sealtrain's CUDA kernels are built for Hopper (sm_90) and newer; older "
                         "GPUs train on the CPU backend.";
        }
        checks.push_back(std::move(gpu));
    } else {
        checks.push_back({"GPU", CheckStatus::Warning,
                          fmt::format("no NVIDIA GPU visible: {}", probe.deviceError),
                          "Training will use the CPU backend; run workers on a GPU node with the "
                          "NVIDIA driver for real speed."});
    }
    if (probe.driver.found && !probe.driver.version.empty())
        checks.push_back({"CUDA driver", CheckStatus::Ok, probe.driver.version, {}});
    checks.push_back(gpuLibrary("CUDA runtime", probe.runtime, gpuPresent));
    checks.push_back(gpuLibrary("cuBLAS", probe.cublas, gpuPresent));
    checks.push_back(gpuLibrary("NCCL", probe.nccl, gpuPresent));
    return checks;
}

Check assessCpuAes(const crypto::CpuCryptoFeatures& features)
{
    if (features.aes && features.pclmul) {
        return {"CPU AES",
                CheckStatus::Ok,
                features.vaes ? "AES-NI, PCLMULQDQ and VAES" : "AES-NI and PCLMULQDQ",
                {}};
    }
    return {"CPU AES", CheckStatus::Warning, "no hardware AES-GCM instructions",
            "Sealing and unsealing data will be several times slower; prefer a CPU with AES-NI "
            "for the control plane and GPU nodes."};
}

Check assessDisk(const std::filesystem::path& dataDir, std::uintmax_t availableBytes,
                 std::uintmax_t minimumFreeBytes)
{
    const bool exists = std::filesystem::exists(dataDir);
    std::string finding = fmt::format("{} free at {}{}", humanBytes(availableBytes),
                                      dataDir.string(), exists ? "" : " (not created yet)");
    if (availableBytes >= minimumFreeBytes)
        return {"Data directory", CheckStatus::Ok, std::move(finding), {}};
    return {"Data directory", CheckStatus::Warning, std::move(finding),
            fmt::format("Free space or choose another data directory with --data-dir: datasets "
                        "and checkpoints want at least {}.",
                        humanBytes(minimumFreeBytes))};
}

Check assessOpenSsl(const std::string& version)
{
    // "OpenSSL 3.0.19 27 Jan 2026": the major version follows the first space.
    const auto space = version.find(' ');
    const bool atLeast3 = space != std::string::npos && space + 1 < version.size()
                          && version[space + 1] >= '3' && version[space + 1] <= '9';
    if (atLeast3)
        return {"OpenSSL", CheckStatus::Ok, version, {}};
    return {
        "OpenSSL", CheckStatus::Error, version.empty() ? "not found" : version,
        "Install OpenSSL 3 (Debian 12: libssl3), which Sealtrain's sealed objects and CA need."};
}

DoctorReport runDoctor(const DoctorOptions& options)
{
    DoctorReport report;
    auto& checks = report.checks;
    checks.push_back({"Sealtrain", CheckStatus::Ok, kVersion, {}});

    // The control plane's and the trainer's libraries, asked of those programs: this client
    // links neither SQLCipher nor MPI nor BLAS.
    const auto control = askVersions(options.controlExecutable, "sealtrain-control",
                                     "the control plane", "SEALTRAIN_CONTROL");
    if (control.versions) {
        const auto& versions = *control.versions;
        checks.push_back(found("Qt", versionOf(versions, "qt")));
        checks.push_back(
            found("SQLCipher", versionOf(versions, "sqlcipher").empty()
                                   ? std::string()
                                   : fmt::format("{} (SQLite {})", versionOf(versions, "sqlcipher"),
                                                 versionOf(versions, "sqlite"))));
        checks.push_back(found("gRPC", fmt::format("{} (protobuf {})", versionOf(versions, "grpc"),
                                                   versionOf(versions, "protobuf"))));
    } else {
        checks.push_back(control.missing);
    }
    checks.push_back(assessOpenSsl(crypto::openSslVersion()));
    checks.push_back(found("libsodium", crypto::libsodiumVersion()));
    const auto trainer =
        askVersions(options.trainerExecutable, "sealtrain-train", "the trainer", "SEALTRAIN_TRAIN");
    if (trainer.versions) {
        checks.push_back(found("MPI", versionOf(*trainer.versions, "mpi")));
        checks.push_back(found("BLAS", versionOf(*trainer.versions, "blas")));
    } else {
        checks.push_back(trainer.missing);
    }

    for (auto& check : assessGpu(node::probeGpu()))
        checks.push_back(std::move(check));
    checks.push_back(assessCpuAes(crypto::cpuCryptoFeatures()));

    const auto measured = nearestExistingAncestor(options.dataDir);
    std::error_code ec;
    const auto space = std::filesystem::space(measured, ec);
    if (ec) {
        checks.push_back(
            {"Data directory", CheckStatus::Error,
             fmt::format("cannot measure free space at {}: {}", measured.string(), ec.message()),
             "Choose a data directory you can write to with --data-dir."});
    } else {
        checks.push_back(assessDisk(options.dataDir, space.available, options.minimumFreeBytes));
    }
    if (options.controlPlaneWarnings) {
        const auto& warnings = *options.controlPlaneWarnings;
        if (warnings)
            checks.push_back(assessFourEyes(*warnings));
        else
            checks.push_back({"Four eyes", CheckStatus::Warning,
                              "not checked: " + warnings.error().message(),
                              "Sign in to the control plane (or start it) and run doctor again, "
                              "or ask an admin how many admins there are."});
    }
    if (options.enrolmentCodeLifetimeSeconds)
        checks.push_back(assessEnrolmentCodes(*options.enrolmentCodeLifetimeSeconds));
    if (options.auditWitnessesOutside)
        checks.push_back(assessAuditWitnesses(*options.auditWitnessesOutside));
    if (options.auditForwarding)
        checks.push_back(assessAuditForwarding(*options.auditForwarding, options.nowUnix));
    if (options.certificates)
        checks.push_back(assessCertificates(*options.certificates, options.nowUnix));
    return report;
}

Check assessFourEyes(const std::vector<std::string>& warnings)
{
    for (const std::string& warning : warnings)
        if (warning.rfind("Four eyes", 0) == 0)
            return {"Four eyes", CheckStatus::Warning, "fewer than two admins", warning};
    return {"Four eyes",
            CheckStatus::Ok,
            "two or more admins: resets and separated-duty grants take two",
            {}};
}

Check assessEnrolmentCodes(std::int64_t lifetimeSeconds)
{
    constexpr std::int64_t kDay = std::int64_t{24} * 3600;
    const std::string lifetime =
        lifetimeSeconds % kDay == 0
            ? fmt::format("{} day{}", lifetimeSeconds / kDay, lifetimeSeconds == kDay ? "" : "s")
            : fmt::format("{} s", lifetimeSeconds);
    if (lifetimeSeconds > 14 * kDay)
        return {"Enrolment codes", CheckStatus::Warning,
                "work for " + lifetime + " after they are made",
                "Whoever finds an unused code becomes that user; start sealtrain-control with "
                "--enrolment-code-lifetime of 14 days or less."};
    return {"Enrolment codes",
            CheckStatus::Ok,
            "enrolment and reset codes expire " + lifetime + " after they are made",
            {}};
}

Check assessAuditWitnesses(std::uint32_t outside)
{
    if (outside == 0)
        return {"Audit witnesses", CheckStatus::Warning, "none outside the data directory",
                "A copy of the whole data directory put back in its place would go unnoticed; "
                "start sealtrain-control with --audit-witness (docs/operations/"
                "data-directory.md#witnesses)."};
    return {"Audit witnesses",
            CheckStatus::Ok,
            fmt::format("{} outside the data directory, checked at every start", outside),
            {}};
}

void printReport(const DoctorReport& report, std::ostream& out)
{
    std::size_t width = 0;
    for (const auto& check : report.checks)
        width = std::max(width, check.name.size());
    out << "Sealtrain doctor: what this machine offers\n\n";
    for (const auto& check : report.checks) {
        out << fmt::format("  {:<8} {:<{}}  {}\n", checkStatusName(check.status), check.name, width,
                           check.finding);
        if (!check.advice.empty())
            out << fmt::format("  {:<8} {:<{}}  -> {}\n", "", "", width, check.advice);
    }
    const int warnings = report.warningCount();
    if (report.hasErrors())
        out << "\nErrors found: fix them before running Sealtrain.\n";
    else if (warnings > 0)
        out << fmt::format("\nReady, with {} warning{}: read the advice above.\n", warnings,
                           warnings == 1 ? "" : "s");
    else
        out << "\nReady: everything Sealtrain uses was found.\n";
}

void printReportJson(const DoctorReport& report, std::ostream& out)
{
    nlohmann::json checks = nlohmann::json::array();
    for (const auto& check : report.checks) {
        checks.push_back({{"name", check.name},
                          {"status", checkStatusName(check.status)},
                          {"finding", check.finding},
                          {"advice", check.advice}});
    }
    const nlohmann::json document{{"version", kVersion},
                                  {"ok", !report.hasErrors()},
                                  {"warnings", report.warningCount()},
                                  {"checks", checks}};
    out << document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

Check assessAuditForwarding(const std::optional<api::AuditForwardingView>& forwarding,
                            std::int64_t nowUnix, std::uint64_t maxLag)
{
    constexpr const char* kName = "Audit forwarding";
    if (!forwarding)
        return {kName, CheckStatus::Warning, "no SIEM gets the audit entries",
                "Start sealtrain-control with --audit-forward syslog-tls://HOST:PORT (or file: or "
                "journal), so that a copy of every entry leaves the platform as it is written "
                "(docs/formats/audit-forward.md)."};
    const auto& f = *forwarding;
    const auto position = fmt::format("{}: {} of {} entries delivered, signed head of {}", f.kind,
                                      f.delivered, f.logSize, f.headSize);
    if (f.failingSinceUnix != 0)
        return {kName, CheckStatus::Warning,
                fmt::format("{}; the target refuses lines since {} s ago ({} failures)", position,
                            std::max<std::int64_t>(0, nowUnix - f.failingSinceUnix), f.failures),
                "Nothing is lost (the entries wait in the signed log); see the daemon's log for "
                "the target's error and bring the target back."};
    if (f.lag() > maxLag)
        return {kName, CheckStatus::Warning, fmt::format("{}; {} behind", position, f.lag()),
                "The target is catching up; if the lag keeps growing, check its speed and the "
                "daemon's log."};
    return {kName, CheckStatus::Ok, position, {}};
}

Check assessCertificates(const CertificateDates& dates, std::int64_t nowUnix)
{
    constexpr const char* kName = "Certificates";
    constexpr std::int64_t kDay = std::int64_t{24} * 3600;
    const auto day = [](std::int64_t seconds) { return utcText(seconds).substr(0, 10); };
    std::vector<std::string> expired;
    std::vector<std::string> soon;
    std::vector<std::string> fine;
    const auto judge = [&](const std::string& what, std::int64_t expires, std::int64_t warnDays) {
        if (expires == 0)
            return;
        if (expires <= nowUnix)
            expired.push_back(fmt::format("{} expired on {}", what, day(expires)));
        else if (expires - nowUnix < warnDays * kDay)
            soon.push_back(fmt::format("{} expires on {}, in {} days", what, day(expires),
                                       (expires - nowUnix) / kDay));
        else
            fine.push_back(fmt::format("{} until {}", what, day(expires)));
    };
    judge("the platform CA", dates.caExpiresUnix, 90);
    judge("the artefact root", dates.artefactRootExpiresUnix, 90);
    for (const auto& [name, expires] : dates.workers)
        judge("worker " + name, expires, 30);
    if (!expired.empty())
        return {kName, CheckStatus::Error, fmt::format("{}", fmt::join(expired, "; ")),
                "An expired certificate is refused: enrol an expired worker again "
                "(`sealtrainctl worker enroll-token`); an expired CA or artefact root needs the "
                "CA rotation runbook (docs/operations/)."};
    if (!soon.empty())
        return {kName, CheckStatus::Warning, fmt::format("{}", fmt::join(soon, "; ")),
                "Enrol a worker again before its certificate expires (`sealtrainctl worker "
                "enroll-token`, then `sealtrain-worker enroll`); plan the CA's or the artefact "
                "root's rotation months ahead."};
    return {kName, CheckStatus::Ok, fmt::format("{}", fmt::join(fine, "; ")), {}};
}

}  // namespace sealtrain::ctl
