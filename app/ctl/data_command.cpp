// `sealtrainctl dataset …`, `sample`, `signing-keys` and the control plane's `audit export`: the
// data a client of sealtrain-control reads and sends (docs/api.md). Datasets are uploaded in
// memory and sealed by the control plane; exports come back signed; nothing here holds a
// platform key.
#include "audit_filter.h"
#include "client_options.h"
#include "commands.h"
#include "ctl.h"
#include "dataset_output.h"
#include "import_flags.h"
#include "input_file.h"
#include "list_output.h"

#include "sealtrain/api/client.h"
#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/base/progress.h"
#include "sealtrain/dataset/import.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace sealtrain::ctl {
namespace {

struct DataListOptions {
    ClientOptions client;
    bool json = false;
};

constexpr std::string_view kDatasetColumns = "{:<20} {:>7}  {:<14} {:>9} {:>11}  {}\n";

int runDatasetList(const CommandRegistry& registry, const DataListOptions& options)
{
    return runClientCall(
        registry, options.client,
        [&](api::ControlClient& client) { return client.datasets().listDatasets(); },
        [&](const auto& datasets) {
            printList(
                registry.out(), options.json, datasets,
                fmt::format(kDatasetColumns, "DATASET", "VERSION", "CLASSIFICATION", "RECORDS",
                            "TOKENS", "ID"),
                [](const api::DatasetSummary& dataset) {
                    return nlohmann::json{
                        {"id", dataset.id},           {"name", dataset.name},
                        {"version", dataset.version}, {"classification", dataset.classification},
                        {"records", dataset.records}, {"tokens", dataset.tokens}};
                },
                [](const api::DatasetSummary& dataset) {
                    return fmt::format(kDatasetColumns, dataset.name, dataset.version,
                                       dataset.classification, dataset.records, dataset.tokens,
                                       dataset.id);
                });
            return kExitOk;
        });
}

struct ShowOptions {
    ClientOptions client;
    std::string reference;
    bool json = false;
};

// What `dataset show` prints for a local data directory, but for the folder (the control
// plane's own path).
int runDatasetShow(const CommandRegistry& registry, const ShowOptions& options)
{
    return runClientCall(
        registry, options.client,
        [&](api::ControlClient& client) {
            return client.datasets().showDataset(options.reference);
        },
        [&](const auto& details) {
            printDescription(registry.out(), describeDataset(details), options.json);
            return kExitOk;
        });
}

struct ReadGrantOptions {
    ClientOptions client;
    std::string reference;
    std::string user;
};

// `dataset grant` when `grant`, else `dataset revoke`.
int runReadGrant(const CommandRegistry& registry, const ReadGrantOptions& options, bool grant)
{
    return runClientChange(
        registry, options.client,
        [&](api::ControlClient& client) {
            return grant ? client.datasets().grantRead(options.reference, options.user)
                         : client.datasets().revokeRead(options.reference, options.user);
        },
        "'" + options.user + (grant ? "' may now read '" : "' may no longer read '")
            + options.reference + "'.\n");
}

struct ImportOptions {
    ClientOptions client;
    ImportFlags flags;
};

// The import report's counts, as `dataset import` prints them (the report file has the rest).
void printRemoteReport(std::ostream& out, const std::string& reportJson)
{
    const auto report = nlohmann::json::parse(reportJson, nullptr, false);
    if (report.is_discarded() || !report.is_object())
        return;
    out << fmt::format("Read {} records from {} files ({}): kept {}, {} duplicates, {} skipped.\n",
                       report.value("records_read", 0ULL), report.value("files_read", 0ULL),
                       formatBytes(report.value("bytes_read", 0ULL)),
                       report.value("records_kept", 0ULL), report.value("duplicates", 0ULL),
                       report.value("skipped", 0ULL));
    std::vector<std::string> found;
    if (report.contains("pii") && report["pii"].is_object()) {
        for (const auto& [kind, value] : report["pii"].items()) {
            if (value.value("count", 0ULL) > 0)
                found.push_back(fmt::format("{} {}", value.value("count", 0ULL), kind));
        }
    }
    if (!found.empty())
        out << fmt::format("Possible PII for review, {}: {}; the report lists the places.\n",
                           report.value("pii_redacted", false) ? "redacted" : "kept as is",
                           fmt::join(found, ", "));
}

Result<std::string> readOptionalFile(const std::string& path, const std::string& what)
{
    if (path.empty())
        return std::string();
    return readInputFile(path, what);
}

int runDatasetImport(const CommandRegistry& registry, const ImportOptions& options)
{
    const ImportFlags& flags = options.flags;
    auto format = dataset::parseInputFormat(flags.format);
    if (!format)
        return registry.fail(format.error());
    std::vector<std::filesystem::path> inputs(flags.inputs.begin(), flags.inputs.end());
    auto files = dataset::listInputFiles(inputs, *format);
    if (!files)
        return registry.fail(files.error());
    api::ImportSettings settings;
    settings.name = flags.name;
    settings.format = flags.format;
    settings.field = flags.field;
    settings.classification = flags.classification;
    settings.policy = flags.policy;
    settings.redactPii = flags.redactPii;
    settings.maxRecordBytes = flags.maxRecordBytes;
    settings.validationBasisPoints = flags.validationBasisPoints;
    settings.tokensPerShard = flags.tokensPerShard;
    auto vocab = readOptionalFile(flags.vocab, "GPT-2 vocab.json");
    auto merges = readOptionalFile(flags.merges, "GPT-2 merges.txt");
    if (!vocab)
        return registry.fail(vocab.error());
    if (!merges)
        return registry.fail(merges.error());
    settings.gpt2VocabJson = std::move(vocab).value();
    settings.gpt2MergesTxt = std::move(merges).value();
    std::vector<api::UploadFile> uploads;
    for (const dataset::InputFile& file : *files)
        uploads.push_back({file.path, file.displayName, file.size});

    auto client = signedInClient(options.client, registry.err());
    if (!client)
        return registry.fail(client.error());
    std::optional<ProgressReporter> progress;
    if (flags.progress != "none")
        progress.emplace(uploadReporter(registry, progressAsBar(registry, flags)));
    auto imported = (*client)->datasets().importDataset(settings, uploads,
                                                        progressFeed(progress, uploads.size()));
    if (progress)
        progress->abandon();
    if (!imported)
        return registry.fail(imported.error());
    if (!flags.reportFile.empty()) {
        if (auto written = writeImportReport(flags.reportFile, imported->reportJson); !written)
            return registry.fail(written.error());
    }
    printRemoteReport(registry.err(), imported->reportJson);
    const api::DatasetSummary& info = imported->dataset;
    registry.out() << fmt::format(
        "Imported '{}' version {}{}: {} ({} records, {} tokens, {}); signed by {}.\n", info.name,
        info.version,
        imported->parent.empty() ? std::string() : " (parent " + imported->parent + ")", info.id,
        info.records, info.tokens, info.classification, imported->signer);
    return kExitOk;
}

}  // namespace

int exportFromControlPlane(const CommandRegistry& registry, const ClientOptions& options,
                           const audit::ExportFilter& filter, const std::string& out)
{
    api::AuditSelection selection;
    selection.fromTimeNs = filter.fromTimeNs;
    selection.toTimeNs = filter.toTimeNs;
    selection.actor = filter.actor;
    selection.action = filter.action;
    selection.targetKind = filter.targetKind;
    selection.targetId = filter.targetId;
    return runClientCall(
        registry, options,
        [&](api::ControlClient& client) { return client.audit().exportAudit(selection); },
        [&](const auto& exported) {
            if (auto written = writeOutputFile(out, asBytes(exported.bundle), "bundle"); !written)
                return registry.fail(written.error());
            registry.out() << fmt::format(
                "Wrote {}; check it with `sealtrainctl audit verify {} --key "
                "signing.pub.pem` (`sealtrainctl signing-keys` saves the key).\n",
                out, out);
            // Whoever reads the export learns how far four eyes held (issue #27, item 3).
            if (exported.warning)
                registry.err() << "sealtrainctl: warning: " << *exported.warning << "\n";
            return kExitOk;
        });
}

namespace {

struct KeysOptions {
    ClientOptions client;
    std::filesystem::path outDir;
};

// The platform's public keys, for checking its signatures offline: written under the names a
// data directory gives them.
int runSigningKeys(const CommandRegistry& registry, const KeysOptions& options)
{
    return runClientCall(
        registry, options.client,
        [&](api::ControlClient& client) { return client.platform().signingKeys(); },
        [&](const auto& keys) {
            std::error_code ec;
            std::filesystem::create_directories(options.outDir, ec);
            if (ec)
                return registry.fail(
                    Error(ErrorCode::Io, fmt::format("Cannot make the folder '{}': {}; "
                                                     "check the path and its "
                                                     "permissions.",
                                                     options.outDir.string(), ec.message())));
            for (const auto& [name, pem] : {std::pair{"signing.pub.pem", &keys.auditPem},
                                            std::pair{"manifests.pub.pem", &keys.manifestsPem},
                                            std::pair{"checkpoints.pub.pem", &keys.checkpointsPem},
                                            std::pair{"registry.pub.pem", &keys.registryPem},
                                            std::pair{"artefact-ca.pem", &keys.artefactRootPem}}) {
                if (auto written = writeText(options.outDir / name, *pem, 0644U); !written)
                    return registry.fail(written.error());
                registry.out() << fmt::format("{}\n", (options.outDir / name).string());
            }
            return kExitOk;
        });
}

struct SampleOptions {
    ClientOptions client;
    std::string run;
    std::uint64_t step = 0;
    std::int64_t job = 0;
    std::string model;
};

int runSample(const CommandRegistry& registry, const SampleOptions& options,
              const std::vector<std::string>& samplerArguments)
{
    auto client = signedInClient(options.client, registry.err());
    if (!client)
        return registry.fail(client.error());
    const int sources =
        int{!options.run.empty()} + int{options.job != 0} + int{!options.model.empty()};
    if (sources != 1)
        return registry.fail(Error(ErrorCode::InvalidArgument,
                                   "Name one checkpoint source: --run RUN, --job ID or --model "
                                   "NAME@ALIAS."));
    if (!options.model.empty() && options.step != 0)
        return registry.failUsage("A model version names its checkpoint; leave --step out.");
    auto sampled = options.job != 0 ? (*client)->training().sampleJob(options.job, options.step,
                                                                      samplerArguments)
                   : !options.model.empty()
                       ? (*client)->training().sampleModel(options.model, samplerArguments)
                       : (*client)->training().sample(options.run, options.step, samplerArguments);
    if (!sampled)
        return registry.fail(sampled.error());
    registry.out() << sampled->text;
    if (!sampled->text.empty() && sampled->text.back() != '\n')
        registry.out() << '\n';
    return kExitOk;
}

}  // namespace

void registerDataCommands(CLI::App& app, CommandRegistry& registry)
{
    auto* dataset = commandGroup(app, "dataset",
                                 "Datasets: import, list, show, share and verify "
                                 "(docs/operations/datasets.md)");
    auto listOptions = std::make_shared<DataListOptions>();
    auto* list = dataset->add_subcommand("list", "List the datasets you may read");
    list->add_flag("--json", listOptions->json, "Print JSON for scripts");
    addClientOptions(list, listOptions->client, true);
    registry.onRun(list,
                   [&registry, listOptions] { return runDatasetList(registry, *listOptions); });
    auto showOptions = std::make_shared<ShowOptions>();
    auto* show = dataset->add_subcommand("show", "Show one dataset: lineage, counts, readers");
    show->add_option("DATASET", showOptions->reference, "NAME, NAME@VERSION or the id")->required();
    show->add_flag("--json", showOptions->json, "JSON instead of text");
    addClientOptions(show, showOptions->client, true);
    registry.onRun(show,
                   [&registry, showOptions] { return runDatasetShow(registry, *showOptions); });
    for (const bool grantRead : {true, false}) {
        auto readOptions = std::make_shared<ReadGrantOptions>();
        auto* command =
            dataset->add_subcommand(grantRead ? "grant" : "revoke",
                                    grantRead ? "Let a user read one dataset version (stewards)"
                                              : "Take a user's read grant on a dataset away");
        command
            ->add_option("DATASET", readOptions->reference,
                         "NAME (the latest version), NAME@VERSION or id")
            ->required();
        command->add_option("USER", readOptions->user, "The user")->required();
        addClientOptions(command, readOptions->client, true);
        registry.onRun(command, [&registry, readOptions, grantRead] {
            return runReadGrant(registry, *readOptions, grantRead);
        });
    }
    auto importOptions = std::make_shared<ImportOptions>();
    auto* importCommand = dataset->add_subcommand(
        "import", "Upload text, JSONL, CSV or fortune files to the control plane, which screens, "
                  "tokenizes, seals and signs them as a new dataset (or the next version)");
    addImportFlags(importCommand, importOptions->flags);
    addClientOptions(importCommand, importOptions->client, true);
    registry.onRun(importCommand, [&registry, importOptions] {
        return runDatasetImport(registry, *importOptions);
    });

    auto sampleOptions = std::make_shared<SampleOptions>();
    auto* sampleCommand = app.add_subcommand(
        "sample", "Text from a run's checkpoint (--prompt, --length, --temperature, --top-k, "
                  "--seed after these options)");
    sampleCommand->add_option("--run", sampleOptions->run, "The run id training printed");
    sampleCommand->add_option("--job", sampleOptions->job,
                              "A job's checkpoint instead, as its worker trained it");
    sampleCommand->add_option("--model", sampleOptions->model,
                              "A registered model version instead: NAME, NAME@VERSION or "
                              "NAME@ALIAS (fortunes@production)");
    sampleCommand->add_option("--step", sampleOptions->step,
                              "The checkpoint's step (default: the run's newest)");
    addClientOptions(sampleCommand, sampleOptions->client, true);
    sampleCommand->fallthrough(false);
    sampleCommand->prefix_command();
    registry.onRun(sampleCommand, [&registry, sampleOptions, sampleCommand] {
        return runSample(registry, *sampleOptions, sampleCommand->remaining());
    });

    auto keysOptions = std::make_shared<KeysOptions>();
    auto* keysCommand = app.add_subcommand(
        "signing-keys", "Save the platform's public keys (audit heads, manifests, checkpoints, "
                        "the model registry) and the artefact root that model exports chain to, "
                        "for checking its signatures offline");
    keysCommand->add_option("--out-dir", keysOptions->outDir, "Where to write the five .pem files")
        ->required();
    addClientOptions(keysCommand, keysOptions->client, true);
    registry.onRun(keysCommand,
                   [&registry, keysOptions] { return runSigningKeys(registry, *keysOptions); });
}

}  // namespace sealtrain::ctl
