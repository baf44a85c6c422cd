// The Compliance service (compliance.proto): the facts only the serving process knows (its TLS
// stack, the certificates it refuses, the keyring) handed to core's Compliance, which checks the
// caller, judges the controls and exports the evidence; the report and its bundle sent back.
#include "server_shared.h"
#include "status.h"

#include "sealtrain/api/tls_policy.h"
#include "sealtrain/core/compliance/compliance.h"
#include "sealtrain/core/control_plane.h"

#include "sealtrain/v1/compliance.grpc.pb.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

namespace sealtrain::api::server_internal {
namespace {

namespace v1 = sealtrain::v1;
using grpc::ServerContext;
using grpc::Status;

// The report's pause after each page of the log it reads (4,096 entries, about 15 ms of reading
// here): 1 ms, so about 7 % more time for a report, and no call waits longer than a page for it.
constexpr std::chrono::milliseconds kPauseBetweenPages{1};

void fillReport(const core::ComplianceReport& report, v1::ComplianceReport* out)
{
    out->set_origin(report.origin);
    out->set_generated_at(report.generatedAt);
    out->set_auditor(report.auditor);
    out->set_report_entry(report.reportEntry);
    out->set_log_size(report.logSize);
    out->set_period(report.period.describe());
    if (report.period.fromUnixSeconds)
        out->set_from_unix_s(*report.period.fromUnixSeconds);
    if (report.period.toUnixSeconds)
        out->set_to_unix_s(*report.period.toUnixSeconds);
    out->set_in_period(report.inPeriod);
    for (const std::uint64_t sequence : report.cited)
        out->add_cited(sequence);
    for (const core::ControlResult& control : report.controls) {
        v1::ComplianceControl* to = out->add_controls();
        to->set_framework(control.framework);
        to->set_id(control.id);
        to->set_title(control.title);
        to->set_verdict(core::controlVerdictName(control.verdict));
        for (const std::string& test : control.tests)
            to->add_tests(test);
        for (const core::ComplianceClaim& claim : control.claims) {
            v1::ComplianceClaim* c = to->add_claims();
            c->set_kind(claim.kind == core::ClaimKind::Configured ? "configured" : "observed");
            c->set_text(claim.text);
            c->set_broken(claim.broken);
            c->set_count(claim.count);
            for (const std::uint64_t sequence : claim.sequences)
                c->add_sequences(sequence);
        }
    }
}

class ComplianceService final : public v1::Compliance::Service {
public:
    explicit ComplianceService(Shared& shared)
        : shared_(shared)
    {
    }

    Status Report(ServerContext* context, const v1::ComplianceReportRequest* request,
                  grpc::ServerWriter<v1::ComplianceReportPart>* writer) override
    {
        // Read by core once it has checked the caller.
        core::CompliancePeriod period;
        if (request->has_from_unix_s())
            period.fromUnixSeconds = request->from_unix_s();
        if (request->has_to_unix_s())
            period.toUnixSeconds = request->to_unix_s();
        core::ComplianceFacts facts;
        facts.minimumTls = lowestAcceptedTlsVersion();
        // Observed in this process: the handshake's check as configured (server.cpp), and the
        // certificates it checked since the start.
        facts.clientCertificatesVerified = shared_.clientCertificatesVerified;
        facts.certificatesVerified = shared_.certificatesVerified.load();
        facts.certificatesRefused = shared_.certificatesRefused.load();
        {
            const std::lock_guard guard(shared_.revokedLock);
            facts.revokedCertificates = shared_.revoked.size();
        }
        Result<core::ComplianceReport> report = Error(ErrorCode::Internal, "No report.");
        {
            // It signs a head for its bundle: it runs alone, between groups. But it reads the
            // whole log, which takes minutes at ten million entries (docs/performance.md), so
            // after each page it lets the calls waiting meanwhile run
            // (core/compliance/compliance.h).
            std::unique_lock guard(shared_.lock);
            const core::CallOrigin origin = shared_.originOf(*context);
            std::optional<Shared::OriginScope> scope(std::in_place, shared_, origin);
            const auto letOthersIn = [&] {
                scope.reset();
                guard.unlock();
                // Long enough for a waiting call, woken by the unlock, to take the lock first.
                std::this_thread::sleep_for(kPauseBetweenPages);
                guard.lock();
                scope.emplace(shared_, origin);
            };
            facts.keks = shared_.platform.keyring().list();
            facts.witnessesOutside = shared_.platform.witnessesOutside();
            facts.forwarding = shared_.platform.forwardHealth();
            report = shared_.platform.controlPlane().compliance().report(
                callerOf(shared_, *context).token, facts, period, letOthersIn);
        }
        if (!report)
            return Internal::toStatus(report.error());
        v1::ComplianceReportPart part;
        fillReport(*report, part.mutable_report());
        if (!writer->Write(part))
            return {grpc::StatusCode::CANCELLED, "The client went away during the report."};
        constexpr std::size_t kPiece = std::size_t{1} << 20U;
        for (std::size_t at = 0; at < report->bundle.size(); at += kPiece) {
            part.Clear();
            part.set_bundle(report->bundle.substr(at, kPiece));
            if (!writer->Write(part))
                return {grpc::StatusCode::CANCELLED, "The client went away during the report."};
        }
        return Status::OK;
    }

private:
    Shared& shared_;
};

}  // namespace

std::unique_ptr<grpc::Service> makeComplianceService(Shared& shared)
{
    return std::make_unique<ComplianceService>(shared);
}

}  // namespace sealtrain::api::server_internal
