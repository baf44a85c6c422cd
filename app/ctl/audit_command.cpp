// `sealtrainctl audit verify|export|report`: the reviewer's offline tools for audit bundles
// (docs/formats/audit.md). Verification needs no database and no secret.
#include "audit_report.h"
#include "commands.h"
#include "ctl.h"
#include "local_platform.h"

#include "sealtrain/audit/bundle.h"
#include "sealtrain/audit/memory_store.h"
#include "sealtrain/audit/witness.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/hash.h"
#include "sealtrain/crypto/signing.h"

#include <fstream>
#include <iterator>
#include <memory>
#include <ostream>

namespace sealtrain::ctl {
namespace {

Result<std::string> readText(const std::string& path, const char* what)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return Error(ErrorCode::NotFound,
                     "Cannot read the " + std::string(what) + " '" + path + "'; check the path.");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad())
        return Error(ErrorCode::Io, "Reading the " + std::string(what) + " '" + path
                                        + "' failed; check the disk.");
    return text;
}

Result<void> writeText(const std::string& path, const std::string& text, const char* what)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out)
        return Error(ErrorCode::Io, "Cannot write the " + std::string(what) + " '" + path
                                        + "'; check that its folder is writable.");
    return success();
}

// --key takes a file (PEM or verifier key) or, inline, a fingerprint or verifier key.
Result<std::string> trustedKeyText(const std::string& value)
{
    if (value.empty() || !std::filesystem::is_regular_file(value))
        return value;
    auto text = readText(value, "trusted key");
    if (!text)
        return text.error();
    while (!text->empty() && (text->back() == '\n' || text->back() == '\r'))
        text->pop_back();
    return *text;
}

struct VerifyArgs {
    std::string bundle;
    std::string key;
    std::string witness;
};

Result<audit::VerifyReport> runVerify(const VerifyArgs& args, std::string& bundleText)
{
    auto text = readText(args.bundle, "bundle");
    if (!text)
        return text.error();
    bundleText = std::move(*text);
    audit::VerifyOptions options;
    auto key = trustedKeyText(args.key);
    if (!key)
        return key.error();
    options.trustedKey = *key;
    if (!args.witness.empty()) {
        auto heads = audit::readWitness(args.witness);
        if (!heads)
            return heads.error();
        options.witnessHeads = std::move(*heads);
    }
    return audit::verifyBundle(bundleText, options);
}

std::string repeatCommand(const VerifyArgs& args, const audit::VerifyReport& report)
{
    // The key as the reviewer gave it (a file stays a file), else the fingerprint that was used.
    const std::string key = !args.key.empty()      ? args.key
                            : report.keyId.empty() ? std::string("<fingerprint>")
                                                   : report.keyId;
    std::string command = "sealtrainctl audit verify " + args.bundle + " --key " + key;
    if (!args.witness.empty())
        command += " --witness " + args.witness;
    return command;
}

void printReport(const audit::VerifyReport& report, const VerifyArgs& args, std::ostream& out)
{
    out << "Bundle:          " << args.bundle << "\n";
    out << "Log:             " << report.origin << "\n";
    out << "Selection:       " << (report.selectionAll ? "all" : report.filter) << "\n";
    out << "Key:             " << (report.keyId.empty() ? "none" : report.keyId)
        << (report.keyTrusted ? " (trusted)" : " (from the bundle)") << "\n";
    out << "Signed heads:    " << report.heads.size();
    if (!report.heads.empty())
        out << " (newest: size " << report.heads.back().size << ", "
            << audit::formatUtcSeconds(report.heads.back().timeSeconds) << ")";
    out << "\n";
    out << "Entries:         " << report.entriesVerified << " of " << report.entries.size()
        << " verified\n";
    if (!args.witness.empty())
        out << "Witness heads:   " << report.witnessHeadsChecked << " compared\n";
    for (const auto& warning : report.warnings)
        out << "warning: " << warning << "\n";
    for (const auto& error : report.errors)
        out << "error: " << error << "\n";
    if (report.firstBadEntry)
        out << "First bad entry: " << *report.firstBadEntry << "\n";
    out << "Result:          " << (report.ok() ? "VERIFIED" : "FAILED") << "\n";
}

// Filters shared by `audit export`.
struct FilterArgs {
    std::string from;
    std::string to;
    audit::ExportFilter filter;
};

void addFilterOptions(CLI::App* command, FilterArgs& args)
{
    command->add_option("--from", args.from,
                        "Only entries at or after this UTC time "
                        "(2026-11-30T09:00:00Z)");
    command->add_option("--to", args.to, "Only entries before this UTC time");
    command->add_option("--actor", args.filter.actor, "Only entries by this actor id");
    command->add_option("--action", args.filter.action,
                        "Only this action, or a namespace such as 'job.*'");
    command->add_option("--target-kind", args.filter.targetKind, "Only targets of this kind");
    command->add_option("--target-id", args.filter.targetId, "Only this target id");
}

Result<audit::ExportFilter> resolveFilter(const FilterArgs& args)
{
    audit::ExportFilter filter = args.filter;
    for (const auto& [text, field] :
         {std::pair{&args.from, &filter.fromTimeNs}, std::pair{&args.to, &filter.toTimeNs}}) {
        if (text->empty())
            continue;
        auto seconds = audit::parseUtcSeconds(*text);
        if (!seconds)
            return seconds.error();
        *field = static_cast<std::uint64_t>(*seconds) * 1000000000U;
    }
    return filter;
}

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

}  // namespace

void registerAuditCommands(CLI::App& app, CommandRegistry& registry)
{
    auto* audit = app.add_subcommand("audit", "Verify, export and report on audit bundles");
    audit->require_subcommand(1);

    auto verifyArgs = std::make_shared<VerifyArgs>();
    auto* verify = audit->add_subcommand(
        "verify", "Verify an audit bundle offline: hashes, proofs, signatures, consistency");
    verify->add_option("BUNDLE", verifyArgs->bundle, "The bundle file")->required();
    verify->add_option("--key", verifyArgs->key,
                       "The log key you trust: a PEM public key file, a verifier key, or its "
                       "fingerprint (sha256:...)");
    verify->add_option("--witness", verifyArgs->witness,
                       "The log's witness file: heads it published outside its database");
    registry.onRun(verify, [verifyArgs, &registry] {
        std::string text;
        auto report = runVerify(*verifyArgs, text);
        if (!report) {
            registry.err() << "sealtrainctl: " << report.error().message() << "\n";
            return kExitFailure;
        }
        printReport(*report, *verifyArgs, registry.out());
        return report->ok() ? kExitOk : kExitFailure;
    });

    auto reportArgs = std::make_shared<VerifyArgs>();
    auto reportOut = std::make_shared<std::string>();
    auto* report = audit->add_subcommand(
        "report", "Verify an audit bundle and write a PDF report of it for people");
    report->add_option("BUNDLE", reportArgs->bundle, "The bundle file")->required();
    report->add_option("--key", reportArgs->key, "As for 'audit verify'");
    report->add_option("--witness", reportArgs->witness, "As for 'audit verify'");
    report->add_option("--out", *reportOut, "The PDF file to write")->required();
    registry.onRun(report, [reportArgs, reportOut, &registry] {
        std::string text;
        auto verified = runVerify(*reportArgs, text);
        if (!verified) {
            registry.err() << "sealtrainctl: " << verified.error().message() << "\n";
            return kExitFailure;
        }
        const ReportSource source{reportArgs->bundle, toHex(crypto::sha256(asBytes(text))),
                                  repeatCommand(*reportArgs, *verified)};
        if (auto written = writePdfReport(*verified, source, *reportOut); !written) {
            registry.err() << "sealtrainctl: " << written.error().message() << "\n";
            return kExitFailure;
        }
        printReport(*verified, *reportArgs, registry.out());
        registry.out() << "Report:          " << *reportOut << "\n";
        return verified->ok() ? kExitOk : kExitFailure;
    });

    struct ExportArgs {
        std::string fromBundle;
        int demo = 0;
        std::string out;
        std::string keyOut;
        std::string witness;
        std::string key;
        FilterArgs filters;
        SignedInOptions database;
    };
    auto exportArgs = std::make_shared<ExportArgs>();
    auto* exporter = audit->add_subcommand(
        "export", "Write an audit bundle: from a data directory's database (as a signed-in "
                  "auditor), a filtered subset of a bundle, or a demonstration log");
    exportArgs->database.addTo(exporter);
    auto* source = exporter->add_option("--from-bundle", exportArgs->fromBundle,
                                        "Re-export the selected entries of this bundle (it is "
                                        "verified first; proofs are kept)");
    exporter
        ->add_option("--demo", exportArgs->demo,
                     "Export a demonstration log of this many entries under a fresh key")
        ->excludes(source)
        ->check(CLI::Range(1, 1000000));
    exporter->add_option("--out", exportArgs->out, "The bundle file to write")->required();
    exporter->add_option("--key", exportArgs->key,
                         "With --from-bundle: the key you trust for the input bundle");
    exporter->add_option("--public-key-out", exportArgs->keyOut,
                         "With --demo or --data-dir: write the log's public key (PEM) here");
    exporter->add_option("--witness", exportArgs->witness,
                         "With --demo: append the log's signed heads to this witness file");
    addFilterOptions(exporter, exportArgs->filters);
    exporter->footer("From a data directory: sealtrainctl audit export --data-dir DIR --out "
                     "log.bundle --public-key-out log.pem\nthen: sealtrainctl audit verify "
                     "log.bundle --key log.pem --witness DIR/audit.witness");
    registry.onRun(exporter, [exportArgs, &registry] {
        auto filter = resolveFilter(exportArgs->filters);
        if (!filter) {
            registry.err() << "sealtrainctl: " << filter.error().message() << "\n";
            return kExitUsage;
        }
        Result<std::string> bundle = Error(ErrorCode::InvalidArgument, "No source.");
        const bool fromDatabase = !exportArgs->database.unlock.dataDir.empty();
        if (fromDatabase && (exportArgs->demo > 0 || !exportArgs->fromBundle.empty())) {
            registry.err() << "sealtrainctl: 'audit export' takes one source: --data-dir, "
                              "--from-bundle or --demo. Run 'sealtrainctl audit export --help' "
                              "for the options.\n";
            return kExitUsage;
        }
        if (fromDatabase) {
            return runSignedIn(
                registry, exportArgs->database,
                [&](core::DataDirectory& platform, const std::string& session) -> Result<void> {
                    auto exported =
                        platform.controlPlane().auditQueries().exportBundle(session, *filter);
                    if (!exported)
                        return exported.error();
                    SEALTRAIN_TRY(writeText(exportArgs->out, *exported, "bundle"));
                    if (!exportArgs->keyOut.empty())
                        SEALTRAIN_TRY(writeText(exportArgs->keyOut,
                                                platform.signingKey().publicKey().toPem(),
                                                "public key"));
                    registry.out() << "Wrote " << exportArgs->out << "\n";
                    return success();
                });
        }
        if (exportArgs->demo > 0) {
            bundle = demoBundle(exportArgs->demo, *filter, exportArgs->keyOut, exportArgs->witness);
        } else if (!exportArgs->fromBundle.empty()) {
            std::string text;
            auto verified = runVerify({exportArgs->fromBundle, exportArgs->key, ""}, text);
            if (verified && !verified->ok())
                verified = Error(ErrorCode::Integrity,
                                 "The input bundle does not verify; run 'sealtrainctl audit "
                                 "verify' on it to see why.");
            if (!verified) {
                registry.err() << "sealtrainctl: " << verified.error().message() << "\n";
                return kExitFailure;
            }
            auto parsed = audit::parseBundle(text);
            auto subset = parsed ? audit::subsetBundle(*parsed, *filter)
                                 : Result<audit::Bundle>(parsed.error());
            bundle = subset ? Result<std::string>(audit::formatBundle(*subset))
                            : Result<std::string>(subset.error());
        } else {
            registry.err() << "sealtrainctl: 'audit export' needs --data-dir, --from-bundle or "
                              "--demo. Run 'sealtrainctl audit export --help' for the options.\n";
            return kExitUsage;
        }
        if (!bundle) {
            registry.err() << "sealtrainctl: " << bundle.error().message() << "\n";
            return kExitFailure;
        }
        if (auto written = writeText(exportArgs->out, *bundle, "bundle"); !written) {
            registry.err() << "sealtrainctl: " << written.error().message() << "\n";
            return kExitFailure;
        }
        registry.out() << "Wrote " << exportArgs->out << "\n";
        return kExitOk;
    });
}

}  // namespace sealtrain::ctl
