// `sealtrainctl dataset import|list|show|verify|grant|revoke`: sealed datasets in a local data
// directory (DIR/datasets/<hex of the id>/), through the control plane so that every import,
// grant and key release is checked and audited (docs/operations/datasets.md).
#include "commands.h"
#include "ctl.h"
#include "dataset_output.h"
#include "import_flags.h"
#include "input_file.h"
#include "list_output.h"
#include "local_platform.h"

#include "sealtrain/base/encoding.h"
#include "sealtrain/base/progress.h"
#include "sealtrain/core/datasets.h"
#include "sealtrain/crypto/signing.h"
#include "sealtrain/dataset/import.h"
#include "sealtrain/dataset/manifest.h"
#include "sealtrain/dataset/reader.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

namespace sealtrain::ctl {
namespace {

struct DatasetImportOptions {
    SignedInOptions platform;
    ImportFlags flags;
};

void printReportSummary(std::ostream& out, const dataset::ImportReport& report)
{
    out << fmt::format("Read {} records from {} files ({}): kept {}, {} duplicates, {} skipped.\n",
                       report.recordsRead, report.filesRead, formatBytes(report.bytesRead),
                       report.recordsKept, report.duplicates, report.skipped);
    for (const auto& [kind, count] : report.issueCounts) {
        const auto first =
            std::find_if(report.issues.begin(), report.issues.end(),
                         [kind = kind](const dataset::Issue& issue) { return issue.kind == kind; });
        out << fmt::format("  {} {}", count, dataset::issueKindName(kind));
        if (first != report.issues.end())
            out << fmt::format(" (first at {}:{}: {})", first->where.file, first->where.line,
                               first->detail);
        out << '\n';
    }
    if (report.piiTotal() == 0)
        return;
    std::vector<std::string> found;
    for (const auto kind : dataset::kAllPiiKinds) {
        const auto index = static_cast<std::size_t>(kind);
        if (report.piiCounts[index] == 0)
            continue;
        const auto& where = report.piiSamples[index].front();
        found.push_back(fmt::format("{} {} (first at {}:{})", report.piiCounts[index],
                                    dataset::piiKindName(kind), where.file, where.line));
    }
    out << fmt::format("Possible PII for review, {}: {}; the report lists more places.\n",
                       report.piiRedacted ? "redacted" : "kept as is", fmt::join(found, ", "));
}

Result<std::unique_ptr<dataset::Tokenizer>> makeTokenizer(const DatasetImportOptions& options)
{
    if (options.flags.vocab.empty())
        return std::unique_ptr<dataset::Tokenizer>(std::make_unique<dataset::ByteTokenizer>());
    auto bpe = dataset::Gpt2BpeTokenizer::load(options.flags.vocab, options.flags.merges);
    if (!bpe)
        return bpe.error();
    return std::unique_ptr<dataset::Tokenizer>(std::move(bpe).value());
}

// What the importer is to do with the inputs (progress reporting aside).
dataset::ImportOptions importerOptions(const DatasetImportOptions& options,
                                       dataset::InputFormat format)
{
    dataset::ImportOptions o;
    for (const auto& input : options.flags.inputs)
        o.inputs.emplace_back(input);
    o.format = format;
    o.field = options.flags.field;
    o.classification = options.flags.classification;
    o.policy = options.flags.policy == "reject" ? dataset::InvalidRecordPolicy::Reject
                                                : dataset::InvalidRecordPolicy::Skip;
    o.redactPii = options.flags.redactPii;
    o.maxRecordBytes = options.flags.maxRecordBytes;
    o.validationBasisPoints = options.flags.validationBasisPoints;
    o.tokensPerShard = options.flags.tokensPerShard;
    return o;
}

// Reports the importer's progress on `err` (a bar on a terminal, else lines) through `progress`.
void reportProgress(std::ostream& err, bool terminal, std::optional<ProgressReporter>& progress,
                    dataset::ImportOptions& o)
{
    progress.emplace(err,
                     ProgressOptions{"import", "records", terminal, std::chrono::milliseconds(100),
                                     std::chrono::milliseconds(5000)});
    o.progressIntervalSeconds = terminal ? 0.1 : 1.0;
    o.progress = [&progress](const dataset::ImportProgress& p) {
        const ProgressSample sample{p.bytesRead, p.bytesTotal, p.records};
        if (p.finished)
            progress->finish(sample);
        else
            progress->update(sample);
    };
}

int importDataset(const CommandRegistry& registry, const DatasetImportOptions& options)
{
    auto format = dataset::parseInputFormat(options.flags.format);
    if (!format)
        return registry.fail(format.error());
    auto tokenizer = makeTokenizer(options);
    if (!tokenizer)
        return registry.fail(tokenizer.error());
    const bool terminal = progressAsBar(registry, options.flags);
    std::optional<ProgressReporter> progress;
    return runSignedIn(
        registry, options.platform,
        [&](core::DataDirectory& platform, const std::string& session) -> Result<void> {
            auto kek = platform.datasetsKek();
            if (!kek)
                return kek.error();
            core::DatasetImportRequest request;
            request.name = options.flags.name;
            request.datasetsRoot = platform.datasetsRoot();
            request.options = importerOptions(options, *format);
            if (options.flags.progress != "none")
                reportProgress(registry.err(), terminal, progress, request.options);
            auto imported = platform.controlPlane().datasets().importDataset(
                session, request, **tokenizer, **kek, platform.manifestsKey());
            if (progress)
                progress->abandon();  // after a failure; a no-op after the final display
            if (!imported)
                return imported.error();
            if (!options.flags.reportFile.empty())
                SEALTRAIN_TRY(
                    writeImportReport(options.flags.reportFile, imported->report.toJson()));
            printReportSummary(registry.err(), imported->report);
            const core::DatasetInfo& info = imported->info;
            registry.out() << fmt::format(
                "Imported '{}' version {}{}: {} ({} records, {} tokens, {}); signed by {}.\n",
                info.name, info.version,
                info.parent.empty() ? std::string() : " (parent " + info.parent + ")", info.id,
                info.records, info.tokens, info.classification, info.signer);
            return success();
        });
}

void registerImport(CLI::App* group, CommandRegistry& registry)
{
    auto options = std::make_shared<DatasetImportOptions>();
    auto* command = group->add_subcommand(
        "import", "Import text, JSONL, CSV or fortune files as a new sealed, signed dataset (or "
                  "the next version of one)");
    options->platform.addTo(command);
    addImportFlags(command, options->flags);

    registry.onRun(command, [options, &registry] { return importDataset(registry, *options); });
}

struct ListOptions {
    SignedInOptions platform;
    bool json = false;
};

int listDatasets(const CommandRegistry& registry, const ListOptions& options)
{
    constexpr std::string_view kColumns = "{:<24} {:>7} {:<14} {:>12} {:<20} {}\n";
    return runSignedInQuery(
        registry, options.platform,
        [](core::ControlPlane& plane, const std::string& session) {
            return plane.datasets().list(session);
        },
        [&](const std::vector<core::DatasetInfo>& datasets) {
            printList(registry.out(), options.json, datasets,
                      fmt::format(kColumns, "NAME", "VERSION", "CLASS", "TOKENS", "CREATED", "ID"),
                      datasetJson, [&](const core::DatasetInfo& info) {
                          return fmt::format(kColumns, info.name, info.version, info.classification,
                                             info.tokens, toRfc3339(info.created), info.id);
                      });
            return success();
        });
}

struct ShowOptions {
    SignedInOptions platform;
    std::string reference;
    bool json = false;
};

int showDataset(const CommandRegistry& registry, const ShowOptions& options)
{
    return runSignedIn(
        registry, options.platform,
        [&](core::DataDirectory& platform, const std::string& session) -> Result<void> {
            auto info = platform.controlPlane().datasets().show(session, options.reference);
            if (!info)
                return info.error();
            const auto folder = core::datasetFolder(platform.datasetsRoot(), info->id);
            std::optional<api::ManifestFacts> facts;
            if (auto manifest = dataset::loadManifest(folder, info->id); manifest)
                facts = manifestFacts(*manifest);
            nlohmann::json value = describeDataset(*info, facts);
            value["folder"] = folder.string();
            printDescription(registry.out(), value, options.json);
            return success();
        });
}

struct ReadGrantOptions {
    SignedInOptions platform;
    std::string reference;
    std::string user;
};

// `dataset grant` when `grant`, else `dataset revoke`.
int changeReadGrant(const CommandRegistry& registry, const ReadGrantOptions& options, bool grant)
{
    return runSignedInChange(
        registry, options.platform,
        [&](core::ControlPlane& plane, const std::string& session) {
            auto& datasets = plane.datasets();
            return grant ? datasets.grantRead(session, options.reference, options.user)
                         : datasets.revokeRead(session, options.reference, options.user);
        },
        "'" + options.user + (grant ? "' may now read '" : "' may no longer read '")
            + options.reference + "'.\n");
}

struct VerifyOptions {
    SignedInOptions platform;
    std::string reference;
    std::string folder;
    std::string key;
};

void printVerified(std::ostream& out, const dataset::VerifyReport& report,
                   const std::string& signer)
{
    const auto shards =
        report.manifest.train.shards.size() + report.manifest.validation.shards.size();
    out << fmt::format("Dataset OK: '{}' {}: manifest signed by {}, {} shards match the manifest",
                       report.manifest.name, report.datasetId, signer, shards);
    if (report.tokensChecked > 0)
        out << fmt::format(", {} tokens decrypted and authenticated", report.tokensChecked);
    out << ".\n";
}

// A copy of a dataset folder, checked without keys against the platform's public key.
int verifyDatasetCopy(const CommandRegistry& registry, const VerifyOptions& options)
{
    auto trusted = crypto::PublicKey::fromPemFile(options.key);
    if (!trusted)
        return registry.fail(trusted.error());
    auto report = dataset::verifyDataset(options.folder, "", nullptr, &*trusted);
    if (!report)
        return registry.fail(report.error());
    printVerified(registry.out(), *report, trusted->keyId());
    return kExitOk;
}

// A dataset of the data directory, every shard decrypted with the datasets key.
int verifyStoredDataset(const CommandRegistry& registry, const VerifyOptions& options)
{
    return runSignedIn(
        registry, options.platform,
        [&](core::DataDirectory& platform, const std::string& session) -> Result<void> {
            // Decrypting every shard needs the datasets key: released only to a reader.
            auto info = platform.controlPlane().datasets().authorizeRead(session, options.reference,
                                                                         "verify");
            if (!info)
                return info.error();
            const auto resolver = platform.datasetsResolver();
            const auto& trusted = platform.manifestsKey().publicKey();
            auto report =
                dataset::verifyDataset(core::datasetFolder(platform.datasetsRoot(), info->id),
                                       info->id, &resolver, &trusted);
            if (!report)
                return report.error();
            printVerified(registry.out(), *report, trusted.keyId());
            return success();
        });
}

int verifyDatasetCommand(const CommandRegistry& registry, const VerifyOptions& options)
{
    if (!options.folder.empty()) {
        if (!options.reference.empty())
            return registry.fail(Error(ErrorCode::InvalidArgument,
                                       "Give either a DATASET with a data directory or --folder "
                                       "with --key, not both."));
        return verifyDatasetCopy(registry, options);
    }
    if (options.reference.empty())
        return registry.fail(Error(ErrorCode::InvalidArgument,
                                   "Name the DATASET to verify, or give --folder and --key to "
                                   "check a copy offline."));
    return verifyStoredDataset(registry, options);
}

void registerList(CLI::App* group, CommandRegistry& registry)
{
    auto options = std::make_shared<ListOptions>();
    auto* command = group->add_subcommand("list", "List the datasets you may see, newest first");
    options->platform.addTo(command);
    command->add_flag("--json", options->json, "One JSON array instead of a table");
    registry.onRun(command, [options, &registry] { return listDatasets(registry, *options); });
}

void registerShow(CLI::App* group, CommandRegistry& registry)
{
    auto options = std::make_shared<ShowOptions>();
    auto* command = group->add_subcommand("show", "Show one dataset: lineage, counts, readers");
    options->platform.addTo(command);
    command->add_option("DATASET", options->reference, "NAME, NAME@VERSION or the id")->required();
    command->add_flag("--json", options->json, "JSON instead of text");
    registry.onRun(command, [options, &registry] { return showDataset(registry, *options); });
}

void registerGrantAndRevoke(CLI::App* group, CommandRegistry& registry)
{
    for (const bool grant : {true, false}) {
        auto options = std::make_shared<ReadGrantOptions>();
        auto* command = group->add_subcommand(grant ? "grant" : "revoke",
                                              grant ? "Let a user read one dataset version"
                                                    : "Take a user's read grant on a dataset away");
        options->platform.addTo(command);
        command
            ->add_option("DATASET", options->reference,
                         "NAME (the latest version), NAME@VERSION or id")
            ->required();
        command->add_option("USER", options->user, "The user")->required();
        registry.onRun(command, [options, grant, &registry] {
            return changeReadGrant(registry, *options, grant);
        });
    }
}

void registerVerify(CLI::App* group, CommandRegistry& registry)
{
    auto options = std::make_shared<VerifyOptions>();
    auto* command = group->add_subcommand(
        "verify",
        "Check a dataset: the manifest against its id, the platform's signature, every shard's "
        "hash and (with the data directory) every shard's decryption");
    options->platform.addTo(command);
    command->add_option("DATASET", options->reference,
                        "NAME, NAME@VERSION or the id (data directory)");
    auto* folder =
        command->add_option("--folder", options->folder,
                            "Offline: a dataset folder, checked without keys (needs --key)");
    auto* key = command
                    ->add_option("--key", options->key,
                                 "Offline: the platform's manifest key (manifests.pub.pem)")
                    ->check(CLI::ExistingFile);
    folder->needs(key);
    key->needs(folder);
    folder->check(CLI::ExistingDirectory);
    registry.onRun(command,
                   [options, &registry] { return verifyDatasetCommand(registry, *options); });
}

}  // namespace

void registerDatasetCommands(CLI::App& app, CommandRegistry& registry)
{
    auto* group = app.add_subcommand(
        "dataset",
        "Import, list, show, verify and share sealed datasets (docs/operations/datasets.md)");
    group->require_subcommand(1);
    registerImport(group, registry);
    registerList(group, registry);
    registerShow(group, registry);
    registerVerify(group, registry);
    registerGrantAndRevoke(group, registry);
}

}  // namespace sealtrain::ctl
