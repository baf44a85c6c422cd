// `sealtrainctl compliance report`: the control plane's compliance report (HIPAA 164.312 and
// SOC 2 CC6-CC8 judged from live evidence; docs/operations/compliance.md) written as a PDF for
// people and an audit bundle of exactly the cited entries for a reviewer to verify offline, with
// a summary on standard output. Auditors only (audit.read and audit.export); the server decides.
#include "client_options.h"
#include "commands.h"
#include "compliance_report.h"
#include "ctl.h"
#include "input_file.h"

#include "sealtrain/audit/bundle.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/hash.h"

#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <string>

namespace sealtrain::ctl {
namespace {

struct ComplianceOptions {
    ClientOptions client;
    std::string out;
    std::string bundle;
};

// The bundle's default name: the PDF's, with .bundle for .pdf ("report.pdf" -> "report.bundle").
std::string defaultBundle(const std::string& pdf)
{
    std::filesystem::path path(pdf);
    path.replace_extension(".bundle");
    return path.string();
}

std::string citedText(const std::vector<std::uint64_t>& sequences)
{
    std::string out;
    for (const std::uint64_t sequence : sequences)
        out += (out.empty() ? "" : ",") + std::to_string(sequence);
    return out.empty() ? "none" : out;
}

int writeComplianceReport(const CommandRegistry& registry, const ComplianceOptions& options)
{
    const std::string bundlePath =
        options.bundle.empty() ? defaultBundle(options.out) : options.bundle;
    if (bundlePath == options.out)
        return registry.failUsage("Give the bundle a name other than the PDF's (--bundle).");
    for (const std::string& path : {options.out, bundlePath})
        if (std::filesystem::exists(path))
            return registry.fail(
                Error(ErrorCode::AlreadyExists,
                      fmt::format("'{}' exists already; remove it or name another file.", path)));
    auto client = signedInClient(options.client, registry.err());
    if (!client)
        return registry.fail(client.error());
    auto report = (*client)->complianceReport();
    if (!report)
        return registry.fail(report.error());

    // Checked here before it is shipped: its signatures, proofs and signed selection.
    const auto verified = audit::verifyBundle(report->bundle, {"", std::nullopt, false});
    report::ComplianceSource source;
    source.bundleName = std::filesystem::path(bundlePath).filename().string();
    source.bundleSha256 = toHex(crypto::sha256(asBytes(report->bundle)));
    source.bundleKeyId = verified.keyId;
    source.bundleVerdict = verified.ok() ? "signatures, proofs and selection hold (verify it "
                                           "with the platform's audit key to trust it)"
                                         : "FAILED: " + verified.errors.front();
    if (!verified.ok())
        return registry.fail(
            Error(ErrorCode::Integrity, "The control plane's evidence bundle does not verify ("
                                            + verified.errors.front()
                                            + "); report this to the platform's operators."));
    auto pdf = report::renderCompliancePdf(*report, source);
    if (!pdf)
        return registry.fail(pdf.error());
    if (auto written = writeOutputFile(bundlePath, asBytes(report->bundle), "evidence bundle");
        !written)
        return registry.fail(written.error());
    if (auto written = writeOutputFile(options.out,
                                       {reinterpret_cast<const std::uint8_t*>(pdf->constData()),
                                        static_cast<std::size_t>(pdf->size())},
                                       "PDF report");
        !written)
        return registry.fail(written.error());

    auto& out = registry.out();
    std::size_t passed = 0;
    for (const auto& control : report->controls) {
        passed += control.verdict == "passed" ? 1U : 0U;
        out << fmt::format("{:<6} {:<19} {:<12} {}  [entries {}]\n", control.framework, control.id,
                           report::verdictHeading(control.verdict), control.title,
                           citedText(report::citedBy(control)));
    }
    out << fmt::format("{} of {} controls passed; the others are failed or have no evidence.\n",
                       passed, report->controls.size());
    out << fmt::format("Wrote {} and {} ({} cited entries); check the evidence with "
                       "`sealtrainctl audit verify {} --key signing.pub.pem` "
                       "(`sealtrainctl signing-keys` saves the key).\n",
                       options.out, bundlePath, report->cited.size(), bundlePath);
    return kExitOk;
}

}  // namespace

void registerComplianceCommands(CLI::App& app, CommandRegistry& registry)
{
    auto* group = app.add_subcommand(
        "compliance", "Compliance evidence for reviewers (docs/operations/compliance.md)");
    group->require_subcommand(1);
    auto options = std::make_shared<ComplianceOptions>();
    auto* report = group->add_subcommand(
        "report",
        "HIPAA 45 CFR 164.312 (a)-(e) and SOC 2 CC6.1-CC8.1 judged from the control plane's live "
        "evidence: a PDF of every control's verdict (passed, failed, no evidence), the audit "
        "entries each claim cites and the tests that guard it, and a signed audit bundle of "
        "exactly those entries that `sealtrainctl audit verify` checks offline. Needs audit.read "
        "and audit.export (the auditor role). Refuses to overwrite either file.");
    addClientOptions(report, options->client, true);
    report->add_option("--out", options->out, "The PDF to write, e.g. report.pdf")->required();
    report->add_option("--bundle", options->bundle,
                       "The evidence bundle to write (default: beside the PDF, .bundle for .pdf)");
    registry.onRun(report,
                   [&registry, options] { return writeComplianceReport(registry, *options); });
}

}  // namespace sealtrain::ctl
