// `sealtrainctl audit verify|export|report`: the reviewer's offline tools for audit bundles
// (docs/formats/audit.md). Verification needs no database and no secret.
#include "audit_filter.h"
#include "audit_report.h"
#include "client_options.h"
#include "commands.h"
#include "ctl.h"
#include "input_file.h"

#include "sealtrain/audit/bundle.h"
#include "sealtrain/audit/memory_store.h"
#include "sealtrain/audit/witness.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/hash.h"
#include "sealtrain/crypto/signing.h"

#include <memory>
#include <ostream>

namespace sealtrain::ctl {
namespace {

Result<void> writeText(const std::string& path, const std::string& text, const char* what)
{
    return writeOutputFile(path, asBytes(text), what);
}

struct AuditVerifyOptions {
    std::string bundle;
    std::string key;
    std::string witness;
    bool keepEntries = false;  // the report lists them; verify only counts them
};

// A bundle file as read, and what verifying it found.
struct VerifiedBundle {
    std::string text;
    audit::VerifyReport report;
};

Result<VerifiedBundle> verifyBundleFile(const AuditVerifyOptions& options)
{
    auto text = readInputFile(options.bundle, "bundle");
    if (!text)
        return text.error();
    audit::VerifyOptions verifyOptions;
    auto key = readTrustedKey(options.key);
    if (!key)
        return key.error();
    verifyOptions.trustedKey = *key;
    verifyOptions.keepEntries = options.keepEntries;
    if (!options.witness.empty()) {
        auto heads = audit::readWitness(options.witness);
        if (!heads)
            return heads.error();
        verifyOptions.witnessHeads = std::move(*heads);
    }
    auto report = audit::verifyBundle(*text, verifyOptions);
    return VerifiedBundle{std::move(*text), std::move(report)};
}

std::string repeatCommand(const AuditVerifyOptions& options, const audit::VerifyReport& report)
{
    // The key as the reviewer gave it (a file stays a file), else the fingerprint that was used.
    const std::string key = !options.key.empty()   ? options.key
                            : report.keyId.empty() ? std::string("<fingerprint>")
                                                   : report.keyId;
    return report::repeatVerifyCommand(options.bundle, key, options.witness);
}

void printReport(const audit::VerifyReport& report, const AuditVerifyOptions& options,
                 std::ostream& out)
{
    out << "Bundle:          " << options.bundle << "\n";
    out << "Log:             " << report.origin << "\n";
    out << "Selection:       " << report.selectionText() << "\n";
    out << "Key:             " << (report.keyId.empty() ? "none" : report.keyId)
        << (report.keyTrusted ? " (trusted)" : " (from the bundle)") << "\n";
    out << "Signed heads:    " << report.heads.size();
    if (!report.heads.empty())
        out << " (newest: size " << report.heads.back().size << ", "
            << audit::formatUtcSeconds(report.heads.back().timeSeconds) << ")";
    out << "\n";
    out << "Entries:         " << report.entriesVerified << " of " << report.entriesInBundle
        << " verified\n";
    if (!options.witness.empty())
        out << "Witness heads:   " << report.witnessHeadsChecked << " compared\n";
    for (const auto& warning : report.warnings)
        out << "warning: " << warning << "\n";
    for (const auto& error : report.errors)
        out << "error: " << error << "\n";
    if (report.firstBadEntry)
        out << "First bad entry: " << *report.firstBadEntry << "\n";
    out << "Result:          " << audit::verdictName(report.verdict()) << "\n";
}

int exitStatus(const audit::VerifyReport& report)
{
    switch (report.verdict()) {
    case audit::Verdict::Verified: return kExitOk;
    case audit::Verdict::Unconfirmed: return kExitUnconfirmed;
    case audit::Verdict::Failed: break;
    }
    return kExitFailure;
}

constexpr const char* kVerifyExitStatuses =
    "Exit status: 0 VERIFIED (every check passed, nothing unproven); 1 FAILED (a check failed, "
    "or the bundle could not be read); 2 bad usage; 3 UNCONFIRMED (nothing failed, but something "
    "is unproven: no --key, entries beyond the newest signed head, or a filtered selection the "
    "log did not sign). Scripts must treat only 0 as verified.";

// A demonstration log for trying the verifier without a data directory: a fresh key,
// `count` entries of the kinds the control plane will write, a head every 16 entries.
Result<std::string> demoBundle(int count, const audit::ExportFilter& filter,
                               const std::string& keyOut, const std::string& witness)
{
    auto key = crypto::SigningKey::generate();
    if (!key)
        return key.error();
    auto auditSecret = crypto::SecretBytes::random(32);
    if (!auditSecret)
        return auditSecret.error();
    auto auditKey = audit::AuditKey::create(std::move(*auditSecret), "demo-audit-hmac");
    if (!auditKey)
        return auditKey.error();
    audit::MemoryStore store;
    audit::SystemClock clock;
    audit::LogOptions options{"sealtrain.demo/audit", {16, {}, {}}, std::nullopt};
    if (!witness.empty())
        options.witnessFile = witness;
    auto log = audit::AuditLog::open(store, *key, &*auditKey, clock, options);
    if (!log)
        return log.error();
    const char* users[] = {"alice", "bob", "carol"};
    const char* actions[] = {"dataset.import", "job.submit", "job.approve", "user.login"};
    for (int i = 0; i < count; ++i) {
        audit::EntryDraft draft;
        draft.actor = {audit::ActorKind::User, users[i % 3], "session-" + std::to_string(i % 4),
                       "password+totp"};
        draft.action = actions[i % 4];
        draft.target = {i % 4 == 0 ? "dataset" : "job", "demo-" + std::to_string(i / 4)};
        if (i % 4 == 2 && i % 3 == 1) {
            draft.outcome = audit::Outcome::Denied;
            draft.reason = "the submitter can not approve their own job";
        }
        draft.requestId = "req-" + std::to_string(1000 + i);
        if (i % 4 == 0)
            draft.sensitive = {{"source file", "/data/demo-" + std::to_string(i) + ".csv"}};
        auto transaction = store.begin();
        auto appended = (*log)->append(*transaction, draft);
        if (!appended)
            return appended.error();
        transaction->commit();
    }
    if (!keyOut.empty())
        SEALTRAIN_TRY(writeText(keyOut, key->publicKey().toPem(), "public key"));
    return audit::exportBundle(**log, filter);
}

int verifyAuditBundle(const CommandRegistry& registry, const AuditVerifyOptions& options)
{
    auto verified = verifyBundleFile(options);
    if (!verified)
        return registry.fail(verified.error());
    printReport(verified->report, options, registry.out());
    return exitStatus(verified->report);
}

struct ReportOptions {
    AuditVerifyOptions verify;
    std::string out;
};

int writeAuditReport(const CommandRegistry& registry, const ReportOptions& options)
{
    auto verified = verifyBundleFile(options.verify);
    if (!verified)
        return registry.fail(verified.error());
    report::ReportSource source;
    source.bundle = options.verify.bundle;
    source.bundleSha256 = toHex(crypto::sha256(asBytes(verified->text)));
    source.repeatCommand = repeatCommand(options.verify, verified->report);
    auto pdf = report::renderPdfReport(verified->report, source);
    if (!pdf)
        return registry.fail(pdf.error());
    if (auto written = writeOutputFile(options.out,
                                       {reinterpret_cast<const std::uint8_t*>(pdf->constData()),
                                        static_cast<std::size_t>(pdf->size())},
                                       "PDF report");
        !written)
        return registry.fail(written.error());
    printReport(verified->report, options.verify, registry.out());
    registry.out() << "Report:          " << options.out << "\n";
    return exitStatus(verified->report);
}

struct ExportOptions {
    std::string fromBundle;
    int demo = 0;
    std::string out;
    std::string keyOut;
    std::string witness;
    std::string key;
    FilterOptions filters;
    ClientOptions client;
};

// The entries of a bundle that `filter` selects, with their proofs; the bundle must verify.
Result<std::string> subsetOfBundle(const ExportOptions& options, const audit::ExportFilter& filter)
{
    auto verified = verifyBundleFile({options.fromBundle, options.key, "", false});
    if (!verified)
        return verified.error();
    if (!verified->report.ok())
        return Error(ErrorCode::Integrity, "The input bundle does not verify; run 'sealtrainctl "
                                           "audit verify' on it to see why.");
    auto parsed = audit::parseBundle(verified->text);
    if (!parsed)
        return parsed.error();
    auto subset = audit::subsetBundle(*parsed, filter);
    if (!subset)
        return subset.error();
    return audit::formatBundle(*subset);
}

int exportAuditBundle(const CommandRegistry& registry, const ExportOptions& options)
{
    auto filter = resolveFilter(options.filters);
    if (!filter)
        return registry.failUsage(filter.error().message());
    // Without an offline source, the control plane's log, as a signed-in auditor.
    if (options.demo == 0 && options.fromBundle.empty())
        return exportFromControlPlane(registry, options.client, *filter, options.out);
    Result<std::string> bundle =
        options.demo > 0 ? demoBundle(options.demo, *filter, options.keyOut, options.witness)
                         : subsetOfBundle(options, *filter);
    if (!bundle)
        return registry.fail(bundle.error());
    if (auto written = writeText(options.out, *bundle, "bundle"); !written)
        return registry.fail(written.error());
    registry.out() << "Wrote " << options.out << "\n";
    return kExitOk;
}

void registerVerify(CLI::App* group, CommandRegistry& registry)
{
    auto options = std::make_shared<AuditVerifyOptions>();
    auto* command = group->add_subcommand(
        "verify", "Verify an audit bundle offline: hashes, proofs, signatures, consistency");
    command->add_option("BUNDLE", options->bundle, "The bundle file")->required();
    command->add_option("--key", options->key,
                        "The log key you trust: a PEM public key file, a verifier key, or its "
                        "fingerprint (sha256:...)");
    command->add_option("--witness", options->witness,
                        "The log's witness file: heads it published outside its database");
    command->footer(kVerifyExitStatuses);
    registry.onRun(command, [options, &registry] { return verifyAuditBundle(registry, *options); });
}

void registerReport(CLI::App* group, CommandRegistry& registry)
{
    auto options = std::make_shared<ReportOptions>();
    options->verify.keepEntries = true;
    auto* command = group->add_subcommand(
        "report", "Verify an audit bundle and write a PDF report of it for people");
    command->add_option("BUNDLE", options->verify.bundle, "The bundle file")->required();
    command->add_option("--key", options->verify.key, "As for 'audit verify'");
    command->add_option("--witness", options->verify.witness, "As for 'audit verify'");
    command->add_option("--out", options->out, "The PDF file to write")->required();
    command->footer(std::string(kVerifyExitStatuses)
                    + " The report is written in every case and says the same.");
    registry.onRun(command, [options, &registry] { return writeAuditReport(registry, *options); });
}

void registerExport(CLI::App* group, CommandRegistry& registry)
{
    auto options = std::make_shared<ExportOptions>();
    auto* command = group->add_subcommand(
        "export", "Write an audit bundle: from the control plane's log (as a signed-in auditor), "
                  "a filtered subset of a bundle, or a demonstration log");
    addClientOptions(command, options->client, true);
    auto* source = command->add_option("--from-bundle", options->fromBundle,
                                       "Re-export the selected entries of this bundle (it is "
                                       "verified first; proofs are kept)");
    command
        ->add_option("--demo", options->demo,
                     "Export a demonstration log of this many entries under a fresh key")
        ->excludes(source)
        ->check(CLI::Range(1, 1000000));
    command->add_option("--out", options->out, "The bundle file to write")->required();
    command->add_option("--key", options->key,
                        "With --from-bundle: the key you trust for the input bundle");
    command->add_option("--public-key-out", options->keyOut,
                        "With --demo: write the log's public key (PEM) here");
    command->add_option("--witness", options->witness,
                        "With --demo: append the log's signed heads to this witness file");
    addFilterOptions(command, options->filters);
    command->footer("From the control plane: sealtrainctl audit export --as AUDITOR --out "
                    "log.bundle\nthen: sealtrainctl signing-keys --out-dir keys; sealtrainctl "
                    "audit verify log.bundle --key keys/signing.pub.pem");
    registry.onRun(command, [options, &registry] { return exportAuditBundle(registry, *options); });
}

}  // namespace

void registerAuditCommands(CLI::App& app, CommandRegistry& registry)
{
    auto* group = app.add_subcommand("audit", "Verify, export and report on audit bundles");
    group->require_subcommand(1);
    registerVerify(group, registry);
    registerReport(group, registry);
    registerExport(group, registry);
    registerVerifyForwarded(group, registry);
}

}  // namespace sealtrain::ctl
