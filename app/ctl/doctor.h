// `sealtrainctl doctor`: what a user needs to know before running anything, each finding ok,
// warning (works, with a limitation and what to do) or error (something will fail).
#pragma once

#include "sealtrain/api/client_views.h"
#include "sealtrain/base/result.h"
#include "sealtrain/crypto/platform.h"
#include "sealtrain/node/gpu_probe.h"

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sealtrain::ctl {

enum class CheckStatus { Ok, Warning, Error };

struct Check {
    std::string name;  // "OpenSSL", "GPU", ...
    CheckStatus status = CheckStatus::Ok;
    std::string finding;  // what was found
    std::string advice;   // what to do, for warnings and errors; one sentence
};

struct DoctorReport {
    std::vector<Check> checks;
    [[nodiscard]] bool hasErrors() const;
    [[nodiscard]] int warningCount() const;
};

// When the certificates a platform rests on stop being accepted (issue #52): the platform CA
// this profile pins, the artefact root that model exports chain to, and each active worker's
// (those the caller may list; empty otherwise). Unix seconds; 0: not known.
struct CertificateDates {
    std::int64_t caExpiresUnix = 0;
    std::int64_t artefactRootExpiresUnix = 0;
    std::vector<std::pair<std::string, std::int64_t>> workers;  // name, notAfter
};

struct DoctorOptions {
    std::filesystem::path dataDir;
    std::uintmax_t minimumFreeBytes = std::uintmax_t{10} << 30;  // 10 GiB
    // When set (a user is signed in to a control plane), what its WhoAmI warned every user of,
    // or why it could not be asked: with fewer than two admins, four eyes is not guaranteed
    // (issue #27).
    std::optional<Result<std::vector<std::string>>> controlPlaneWarnings;
    // When known (asked with the same session): how long enrolment and reset codes work.
    std::optional<std::int64_t> enrolmentCodeLifetimeSeconds;
    // When known (asked with the same session): the audit witnesses outside the data directory.
    std::optional<std::uint32_t> auditWitnessesOutside{};
    // When known (asked with the same session): the audit forwarder's health, the inner nullopt
    // when nothing is forwarded; and the time to judge it at.
    std::optional<std::optional<api::AuditForwardingView>> auditForwarding{};
    std::int64_t nowUnix = 0;
    // When known (asked with the same session): the certificates' expiry dates.
    std::optional<CertificateDates> certificates{};
    // sealtrain-control and sealtrain-train, asked for their libraries' versions (their
    // `versions` tool); empty: not installed on this machine (one warning each).
    std::filesystem::path controlExecutable{};
    std::filesystem::path trainerExecutable{};
};

[[nodiscard]] DoctorReport runDoctor(const DoctorOptions& options);

// The assessments, separated from probing so tests can feed them any machine.
[[nodiscard]] std::vector<Check> assessGpu(const node::GpuProbe& probe);
[[nodiscard]] Check assessCpuAes(const crypto::CpuCryptoFeatures& features);
[[nodiscard]] Check assessDisk(const std::filesystem::path& dataDir, std::uintmax_t availableBytes,
                               std::uintmax_t minimumFreeBytes);
[[nodiscard]] Check assessOpenSsl(const std::string& version);
// The control plane's warnings to every user (WhoAmI): a warning when it says four eyes is not
// guaranteed.
[[nodiscard]] Check assessFourEyes(const std::vector<std::string>& warnings);
// How long the control plane's enrolment and reset codes work (issue #48): a warning past 14 days.
[[nodiscard]] Check assessEnrolmentCodes(std::int64_t lifetimeSeconds);
// The control plane's audit witnesses outside its data directory (issue #49): a warning with
// none, since a copy of the whole directory put back would go unnoticed.
[[nodiscard]] Check assessAuditWitnesses(std::uint32_t outside);
// How far the audit forward target has the log (issue #49): a warning when nothing is
// forwarded, when the target refuses lines, or when it is more than `maxLag` entries behind.
[[nodiscard]] Check assessAuditForwarding(const std::optional<api::AuditForwardingView>& forwarding,
                                          std::int64_t nowUnix, std::uint64_t maxLag = 1000);

// The certificates' expiry (issue #52): a warning when the CA or the artefact root expires within
// 90 days (their rotation takes planning: docs/operations/), or a worker's within 30 (enrol it
// again), an error for one already expired.
[[nodiscard]] Check assessCertificates(const CertificateDates& dates, std::int64_t nowUnix);

void printReport(const DoctorReport& report, std::ostream& out);
void printReportJson(const DoctorReport& report, std::ostream& out);

[[nodiscard]] const char* checkStatusName(CheckStatus status);

}  // namespace sealtrain::ctl
