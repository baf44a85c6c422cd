// `sealtrainctl compliance report`: the control plane's compliance report (HIPAA 164.312 and
// SOC 2 CC6-CC8 judged from live evidence over a period; docs/operations/compliance.md) written
// as a PDF for people, optionally as JSON for programs (docs/formats/compliance-report.md), and
// an audit bundle of exactly the cited entries for a reviewer to verify offline, with a summary
// on standard output and an exit status to gate on. Auditors only (audit.read and
// audit.export); the server decides.
#include "client_options.h"
#include "commands.h"
#include "compliance_report.h"
#include "ctl.h"

#include "sealtrain/audit/tree_head.h"

#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sealtrain::ctl {
namespace {

struct ComplianceOptions {
    ClientOptions client;
    std::string out;
    std::string bundle;
    std::string json;
    std::string from;
    std::string to;
};

// A period's end: an RFC 3339 UTC time, or a date meaning its midnight UTC.
Result<std::optional<std::int64_t>> periodEnd(const std::string& text, const char* flag)
{
    if (text.empty())
        return std::optional<std::int64_t>();
    const bool dateOnly = text.size() == 10 && text[4] == '-' && text[7] == '-';
    auto seconds = audit::parseUtcSeconds(dateOnly ? text + "T00:00:00Z" : text);
    if (!seconds)
        return Error(ErrorCode::InvalidArgument,
                     fmt::format("The {} value '{}' is not a date or UTC time; write 2026-11-01 "
                                 "or 2026-11-01T09:00:00Z.",
                                 flag, text));
    return std::optional<std::int64_t>(*seconds);
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
    report::ComplianceOutputs outputs{options.out,
                                      options.bundle.empty()
                                          ? report::defaultBundlePath(options.out)
                                          : std::filesystem::path(options.bundle),
                                      options.json};
    if (outputs.bundle == outputs.pdf)
        return registry.failUsage("Give the bundle a name other than the PDF's (--bundle).");
    if (!outputs.json.empty() && (outputs.json == outputs.pdf || outputs.json == outputs.bundle))
        return registry.failUsage("Give the JSON report a name of its own (--json).");
    auto from = periodEnd(options.from, "--from");
    if (!from)
        return registry.failUsage(from.error().message());
    auto to = periodEnd(options.to, "--to");
    if (!to)
        return registry.failUsage(to.error().message());
    if (*from && *to && **from >= **to)
        return registry.failUsage(
            "The period ends before it begins; give a --from before the --to.");
    if (auto free = report::checkComplianceOutputs(outputs); !free)
        return registry.fail(free.error());
    auto client = signedInClient(options.client, registry.err());
    if (!client)
        return registry.fail(client.error());
    auto report = (*client)->compliance().complianceReport({*from, *to});
    if (!report)
        return registry.fail(report.error());
    auto written = report::writeComplianceReport(*report, outputs, "sealtrainctl");
    if (!written)
        return registry.fail(written.error());
    const std::string bundlePath = outputs.bundle.string();

    auto& out = registry.out();
    std::size_t passed = 0;
    std::size_t failed = 0;
    out << fmt::format("Period: {} ({} entries).\n", report->period, report->inPeriod);
    for (const auto& control : report->controls) {
        passed += control.verdict == "passed" ? 1U : 0U;
        failed += control.verdict == "failed" ? 1U : 0U;
        out << fmt::format("{:<6} {:<19} {:<12} {}  [entries {}]\n", control.framework, control.id,
                           report::verdictHeading(control.verdict), control.title,
                           citedText(report::citedBy(control)));
    }
    const std::size_t unproven = report->controls.size() - passed - failed;
    out << fmt::format("{} of {} controls passed, {} failed, {} without evidence.\n", passed,
                       report->controls.size(), failed, unproven);
    out << fmt::format("Wrote {} and {} ({} cited entries); check the evidence with "
                       "`sealtrainctl audit verify {} --key signing.pub.pem` "
                       "(`sealtrainctl signing-keys` saves the key).\n",
                       options.out, bundlePath, report->cited.size(), bundlePath);
    if (!options.json.empty())
        out << fmt::format("Wrote {} for programs.\n", options.json);
    // For cron and CI to gate on: 1 when a control failed, 3 when one has no evidence.
    if (failed > 0)
        return kExitFailure;
    return unproven > 0 ? kExitUnconfirmed : kExitOk;
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
        "HIPAA 45 CFR 164.312 (a)-(e) and SOC 2 CC5.1-CC8.1 judged from the control plane's live "
        "evidence: a PDF of every control's verdict (passed, failed, no evidence), the audit "
        "entries each claim cites and the tests that guard it, and a signed audit bundle of "
        "exactly those entries that `sealtrainctl audit verify` checks offline. Needs audit.read "
        "and audit.export (the auditor role). Refuses to overwrite a file. Exits 0 when every "
        "control passed, 1 when one failed, 3 when one has no evidence (the files are written "
        "in each case).");
    addClientOptions(report, options->client, true);
    report->add_option("--out", options->out, "The PDF to write, e.g. report.pdf")->required();
    report->add_option("--bundle", options->bundle,
                       "The evidence bundle to write (default: beside the PDF, .bundle for .pdf)");
    report->add_option("--json", options->json,
                       "Also write the report as JSON for programs "
                       "(docs/formats/compliance-report.md)");
    report->add_option("--from", options->from,
                       "Judge the period from this date or UTC time on (2026-11-01 or "
                       "2026-11-01T09:00:00Z; default: the log's start)");
    report->add_option("--to", options->to,
                       "Judge the period before this date or UTC time (default: now)");
    registry.onRun(report,
                   [&registry, options] { return writeComplianceReport(registry, *options); });
}

}  // namespace sealtrain::ctl
