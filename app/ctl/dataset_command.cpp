// `sealtrainctl dataset import|list|show|verify|grant|revoke`: sealed datasets in a local data
// directory (DIR/datasets/<hex of the id>/), through the control plane so that every import,
// grant and key release is checked and audited (docs/operations/datasets.md).
#include "commands.h"
#include "ctl.h"
#include "list_output.h"
#include "local_platform.h"

#include "sealtrain/base/encoding.h"
#include "sealtrain/base/progress.h"
#include "sealtrain/core/datasets.h"
#include "sealtrain/dataset/import.h"
#include "sealtrain/dataset/manifest.h"
#include "sealtrain/dataset/reader.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <ostream>

namespace sealtrain::ctl {
namespace {

int fail(const CommandRegistry& registry, const Error& error)
{
    registry.err() << "sealtrainctl: " << error.message() << '\n';
    return kExitFailure;
}

nlohmann::json toJson(const core::DatasetInfo& info)
{
    nlohmann::json value = {
        {"id", info.id},
        {"name", info.name},
        {"version", info.version},
        {"parent", info.parent.empty() ? nlohmann::json(nullptr) : nlohmann::json(info.parent)},
        {"classification", info.classification},
        {"creator", info.creator},
        {"records", info.records},
        {"tokens", info.tokens},
        {"signer", info.signer},
        {"created", toRfc3339(info.created)}};
    return value;
}

Result<dataset::InputFormat> parseFormat(const std::string& name)
{
    for (const auto format :
         {dataset::InputFormat::TextFiles, dataset::InputFormat::TextRecords,
          dataset::InputFormat::Jsonl, dataset::InputFormat::Csv, dataset::InputFormat::Fortune}) {
        if (name == dataset::inputFormatName(format))
            return format;
    }
    return Error(ErrorCode::InvalidArgument,
                 "The format '" + name
                     + "' is unknown; use text-files, text-records, jsonl, csv or fortune.");
}

struct ImportArguments {
    SignedInOptions platform;
    std::string name;
    std::string format = "text-files";
    std::string field;
    std::string classification = "internal";
    std::string policy = "skip";
    bool redactPii = false;
    std::size_t maxRecordBytes = std::size_t{1} << 20U;
    std::uint32_t validationBasisPoints = 100;
    std::uint64_t tokensPerShard = std::uint64_t{1} << 22U;
    std::string vocab;
    std::string merges;
    std::string reportFile;
    std::string progress = "auto";
    std::vector<std::string> inputs;
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

void registerImport(CLI::App* group, CommandRegistry& registry)
{
    auto a = std::make_shared<ImportArguments>();
    auto* command = group->add_subcommand(
        "import", "Import text, JSONL, CSV or fortune files as a new sealed, signed dataset (or "
                  "the next version of one)");
    a->platform.addTo(command);
    command->add_option("--name", a->name, "Dataset name: 1-64 of a-z 0-9 _ -")->required();
    command
        ->add_option("--format", a->format,
                     "text-files (a file is a record), text-records (blank-line separated), "
                     "jsonl, csv, or fortune ('%' lines separate records)")
        ->capture_default_str();
    command->add_option("--field", a->field, "The JSONL field or CSV column holding the text");
    command
        ->add_option("--classification", a->classification,
                     "Classification label, e.g. public, internal, phi")
        ->capture_default_str();
    command
        ->add_option("--policy", a->policy,
                     "For an invalid record: skip (and report it) or reject (fail the import)")
        ->check(CLI::IsMember({"skip", "reject"}))
        ->capture_default_str();
    command->add_flag("--redact-pii", a->redactPii,
                      "Replace possible PII with placeholders ([EMAIL], [IP], ...) before sealing");
    command->add_option("--max-record-bytes", a->maxRecordBytes, "Longest record kept")
        ->capture_default_str();
    command
        ->add_option("--validation-basis-points", a->validationBasisPoints,
                     "Share of records for validation, in 1/10000 (100 = 1 %)")
        ->check(CLI::Range(0, 10000))
        ->capture_default_str();
    command->add_option("--tokens-per-shard", a->tokensPerShard, "Tokens in each sealed shard")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    auto* vocab = command->add_option("--vocab", a->vocab,
                                      "GPT-2 vocab.json: tokenize with GPT-2 BPE (needs --merges)");
    auto* merges = command->add_option("--merges", a->merges, "GPT-2 merges.txt");
    vocab->needs(merges);
    merges->needs(vocab);
    command->add_option("--report", a->reportFile,
                        "Write the import report (issues and PII locations, never values) as JSON");
    command
        ->add_option("--progress", a->progress,
                     "auto (a bar on a terminal, else lines), bar, lines or none")
        ->check(CLI::IsMember({"auto", "bar", "lines", "none"}))
        ->capture_default_str();
    command->add_option("INPUT", a->inputs, "Files or folders to import")->required();

    registry.onRun(command, [a, &registry] {
        auto format = parseFormat(a->format);
        if (!format)
            return fail(registry, format.error());
        std::unique_ptr<dataset::Tokenizer> tokenizer;
        if (a->vocab.empty()) {
            tokenizer = std::make_unique<dataset::ByteTokenizer>();
        } else {
            auto bpe = dataset::Gpt2BpeTokenizer::load(a->vocab, a->merges);
            if (!bpe)
                return fail(registry, bpe.error());
            tokenizer = std::move(bpe).value();
        }
        const bool terminal =
            a->progress == "bar"
            || (a->progress == "auto" && &registry.err() == &std::cerr && ::isatty(STDERR_FILENO));
        std::optional<ProgressReporter> progress;
        return runSignedIn(
            registry, a->platform,
            [&](core::DataDirectory& platform, const std::string& session) -> Result<void> {
                auto kek = platform.datasetsKek();
                if (!kek)
                    return kek.error();
                core::DatasetImportRequest request;
                request.name = a->name;
                request.datasetsRoot = platform.datasetsRoot();
                dataset::ImportOptions& o = request.options;
                for (const auto& input : a->inputs)
                    o.inputs.emplace_back(input);
                o.format = *format;
                o.field = a->field;
                o.classification = a->classification;
                o.policy = a->policy == "reject" ? dataset::InvalidRecordPolicy::Reject
                                                 : dataset::InvalidRecordPolicy::Skip;
                o.redactPii = a->redactPii;
                o.maxRecordBytes = a->maxRecordBytes;
                o.validationBasisPoints = a->validationBasisPoints;
                o.tokensPerShard = a->tokensPerShard;
                if (a->progress != "none") {
                    progress.emplace(registry.err(),
                                     ProgressOptions{"import", "records", terminal,
                                                     std::chrono::milliseconds(100),
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
                auto imported = platform.controlPlane().datasets().importDataset(
                    session, request, *tokenizer, **kek, platform.signingKey());
                if (progress)
                    progress->abandon();  // after a failure; a no-op after the final display
                if (!imported)
                    return imported.error();
                if (!a->reportFile.empty()) {
                    std::ofstream report(a->reportFile, std::ios::binary | std::ios::trunc);
                    report << imported->report.toJson() << '\n';
                    if (!report)
                        return Error(ErrorCode::Io, "The dataset was imported but the report "
                                                    "could not be written to '"
                                                        + a->reportFile + "'; check the path.");
                }
                printReportSummary(registry.err(), imported->report);
                const core::DatasetInfo& info = imported->info;
                registry.out() << fmt::format(
                    "Imported '{}' version {}{}: {} ({} records, {} tokens, {}); signed by {}.\n",
                    info.name, info.version,
                    info.parent.empty() ? std::string() : " (parent " + info.parent + ")", info.id,
                    info.records, info.tokens, info.classification, info.signer);
                return success();
            });
    });
}

struct ReferenceArguments {
    SignedInOptions platform;
    std::string reference;
    std::string user;
    bool json = false;
};

void registerList(CLI::App* group, CommandRegistry& registry)
{
    auto a = std::make_shared<ReferenceArguments>();
    auto* command = group->add_subcommand("list", "List the datasets you may see, newest first");
    a->platform.addTo(command);
    command->add_flag("--json", a->json, "One JSON array instead of a table");
    registry.onRun(command, [a, &registry] {
        return runSignedIn(
            registry, a->platform,
            [&](core::DataDirectory& platform, const std::string& session) -> Result<void> {
                auto datasets = platform.controlPlane().datasets().list(session);
                if (!datasets)
                    return datasets.error();
                constexpr std::string_view kColumns = "{:<24} {:>7} {:<14} {:>12} {:<20} {}\n";
                printList(
                    registry.out(), a->json, *datasets,
                    fmt::format(kColumns, "NAME", "VERSION", "CLASS", "TOKENS", "CREATED", "ID"),
                    toJson, [&](const core::DatasetInfo& info) {
                        return fmt::format(kColumns, info.name, info.version, info.classification,
                                           info.tokens, toRfc3339(info.created), info.id);
                    });
                return success();
            });
    });
}

void registerShow(CLI::App* group, CommandRegistry& registry)
{
    auto a = std::make_shared<ReferenceArguments>();
    auto* command = group->add_subcommand("show", "Show one dataset: lineage, counts, readers");
    a->platform.addTo(command);
    command->add_option("DATASET", a->reference, "NAME, NAME@VERSION or the id")->required();
    command->add_flag("--json", a->json, "JSON instead of text");
    registry.onRun(command, [a, &registry] {
        return runSignedIn(
            registry, a->platform,
            [&](core::DataDirectory& platform, const std::string& session) -> Result<void> {
                auto info = platform.controlPlane().datasets().show(session, a->reference);
                if (!info)
                    return info.error();
                const auto folder = core::datasetFolder(platform.datasetsRoot(), info->id);
                nlohmann::json value = toJson(*info);
                value["readers"] = info->readers;
                value["folder"] = folder.string();
                if (auto manifest = dataset::loadManifest(folder, info->id); manifest) {
                    value["tokenizer"] = manifest->tokenizer.id;
                    value["input_format"] = manifest->inputFormat;
                    value["train"] = {{"records", manifest->train.records},
                                      {"tokens", manifest->train.tokens},
                                      {"shards", manifest->train.shards.size()}};
                    value["validation"] = {{"records", manifest->validation.records},
                                           {"tokens", manifest->validation.tokens},
                                           {"shards", manifest->validation.shards.size()}};
                    value["counts"] = manifest->counts;
                    value["sources"] = manifest->sources.size();
                }
                if (a->json) {
                    registry.out() << value.dump(2) << '\n';
                    return success();
                }
                for (const auto& [key, item] : value.items())
                    registry.out()
                        << fmt::format("{:<15} {}\n", key + ":",
                                       item.is_string() ? item.get<std::string>() : item.dump());
                return success();
            });
    });
}

void registerGrantAndRevoke(CLI::App* group, CommandRegistry& registry)
{
    for (const bool grant : {true, false}) {
        auto a = std::make_shared<ReferenceArguments>();
        auto* command = group->add_subcommand(grant ? "grant" : "revoke",
                                              grant ? "Let a user read one dataset version"
                                                    : "Take a user's read grant on a dataset away");
        a->platform.addTo(command);
        command
            ->add_option("DATASET", a->reference, "NAME (the latest version), NAME@VERSION or id")
            ->required();
        command->add_option("USER", a->user, "The user")->required();
        registry.onRun(command, [a, grant, &registry] {
            return runSignedIn(
                registry, a->platform,
                [&](core::DataDirectory& platform, const std::string& session) -> Result<void> {
                    auto& datasets = platform.controlPlane().datasets();
                    SEALTRAIN_TRY(grant ? datasets.grantRead(session, a->reference, a->user)
                                        : datasets.revokeRead(session, a->reference, a->user));
                    registry.out()
                        << "'" << a->user << (grant ? "' may now read '" : "' may no longer read '")
                        << a->reference << "'.\n";
                    return success();
                });
        });
    }
}

struct VerifyArguments {
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

void registerVerify(CLI::App* group, CommandRegistry& registry)
{
    auto a = std::make_shared<VerifyArguments>();
    auto* command = group->add_subcommand(
        "verify",
        "Check a dataset: the manifest against its id, the platform's signature, every shard's "
        "hash and (with the data directory) every shard's decryption");
    a->platform.addTo(command);
    command->add_option("DATASET", a->reference, "NAME, NAME@VERSION or the id (data directory)");
    auto* folder = command->add_option(
        "--folder", a->folder, "Offline: a dataset folder, checked without keys (needs --key)");
    auto* key =
        command->add_option("--key", a->key, "Offline: the platform's public key (signing.pub.pem)")
            ->check(CLI::ExistingFile);
    folder->needs(key);
    key->needs(folder);
    folder->check(CLI::ExistingDirectory);
    registry.onRun(command, [a, &registry] {
        if (!a->folder.empty()) {
            if (!a->reference.empty())
                return fail(registry, Error(ErrorCode::InvalidArgument,
                                            "Give either a DATASET with a data directory or "
                                            "--folder with --key, not both."));
            std::ifstream in(a->key, std::ios::binary);
            const std::string pem((std::istreambuf_iterator<char>(in)),
                                  std::istreambuf_iterator<char>());
            auto trusted = crypto::PublicKey::fromPem(pem);
            if (!trusted)
                return fail(registry, trusted.error());
            auto report = dataset::verifyDataset(a->folder, "", nullptr, &*trusted);
            if (!report)
                return fail(registry, report.error());
            printVerified(registry.out(), *report, trusted->keyId());
            return kExitOk;
        }
        if (a->reference.empty())
            return fail(registry, Error(ErrorCode::InvalidArgument,
                                        "Name the DATASET to verify, or give --folder and --key "
                                        "to check a copy offline."));
        return runSignedIn(
            registry, a->platform,
            [&](core::DataDirectory& platform, const std::string& session) -> Result<void> {
                // Decrypting every shard needs the datasets key: released only to a reader.
                auto info = platform.controlPlane().datasets().authorizeRead(session, a->reference,
                                                                             "verify");
                if (!info)
                    return info.error();
                const auto resolver = platform.datasetsResolver();
                const auto& trusted = platform.signingKey().publicKey();
                auto report =
                    dataset::verifyDataset(core::datasetFolder(platform.datasetsRoot(), info->id),
                                           info->id, &resolver, &trusted);
                if (!report)
                    return report.error();
                printVerified(registry.out(), *report, trusted.keyId());
                return success();
            });
    });
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
