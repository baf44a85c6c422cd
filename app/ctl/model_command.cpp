// `sealtrainctl model …`: the model registry (docs/registry.md). register, list, show, promote,
// approve, reject and lineage are clients of the control plane; verify-lineage checks a lineage
// document offline with only the registry's public key (lineage_verify.h).
#include "client_options.h"
#include "commands.h"
#include "ctl.h"
#include "import_flags.h"
#include "input_file.h"
#include "lineage_verify.h"
#include "list_output.h"

#include "sealtrain/base/progress.h"
#include "sealtrain/base/utf8.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <charconv>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sealtrain::ctl {
namespace {

struct ModelOptions {
    ClientOptions client;
    std::string name;  // a model, or a reference (NAME, NAME@VERSION, NAME@ALIAS)
    std::string description;
    std::string alias;
    std::string digest;
    std::string reason;
    std::string out;
    std::string key;
    std::int64_t job = 0;
    std::int64_t step = 0;
    std::int64_t promotion = 0;
    std::string project;
    bool json = false;
    bool quiet = false;
};

std::string aliasesText(const std::vector<std::string>& aliases)
{
    return aliases.empty() ? std::string("-")
                           : escapeControls(fmt::format("{}", fmt::join(aliases, ",")));
}

nlohmann::json versionJson(const api::ModelVersionView& version)
{
    return {{"name", version.name},
            {"version", version.version},
            {"project", version.project},
            {"description", version.description},
            {"job", version.job},
            {"step", version.step},
            {"digest", version.digest},
            {"sealed_sha256", version.sealedSha256},
            {"worker", version.worker},
            {"dataset_id", version.datasetId},
            {"registered_by", version.registeredBy},
            {"registered", utcText(version.registeredUnix)},
            {"aliases", version.aliases},
            {"source", version.source},
            {"base", version.base.empty() ? nlohmann::json() : nlohmann::json(version.base)}};
}

nlohmann::json promotionJson(const api::PromotionView& promotion)
{
    return {{"id", promotion.id},
            {"model", promotion.model},
            {"version", promotion.version},
            {"alias", promotion.alias},
            {"digest", promotion.digest},
            {"reason", promotion.reason},
            {"requested_by", promotion.requestedBy},
            {"requested", utcText(promotion.requestedUnix)},
            {"state", promotion.state},
            {"decided_by", promotion.decidedBy},
            {"decided", promotion.decidedUnix == 0
                            ? nlohmann::json()
                            : nlohmann::json(utcText(promotion.decidedUnix))},
            {"decision_reason", promotion.decisionReason},
            {"previous_version", promotion.previousVersion}};
}

void printPromotion(std::ostream& out, const api::PromotionView& promotion)
{
    out << fmt::format("promotion {}: {}@{} to {} ({}), asked by {} at {}", promotion.id,
                       escapeControls(promotion.model), promotion.version,
                       escapeControls(promotion.alias), escapeControls(promotion.state),
                       escapeControls(promotion.requestedBy), utcText(promotion.requestedUnix));
    if (!promotion.decidedBy.empty())
        out << fmt::format(", {} by {} at {}", escapeControls(promotion.state),
                           escapeControls(promotion.decidedBy), utcText(promotion.decidedUnix));
    out << '\n';
    out << fmt::format("  digest: {}\n", promotion.digest);
    if (!promotion.reason.empty())
        out << fmt::format("  reason: {}\n", escapeControls(promotion.reason));
    if (!promotion.decisionReason.empty())
        out << fmt::format("  decision: {}\n", escapeControls(promotion.decisionReason));
}

nlohmann::json exportJson(const api::ModelExportView& exported)
{
    return {{"id", exported.id},
            {"model", exported.model},
            {"version", exported.version},
            {"digest", exported.digest},
            {"reason", exported.reason},
            {"requested_by", exported.requestedBy},
            {"requested", utcText(exported.requestedUnix)},
            {"state", exported.state},
            {"decided_by", exported.decidedBy},
            {"decision_reason", exported.decisionReason},
            {"downloads", exported.downloads},
            {"folder_digest", exported.folderDigest}};
}

void printExport(std::ostream& out, const api::ModelExportView& exported)
{
    out << fmt::format("export {}: {}@{} ({}), asked by {} at {}", exported.id,
                       escapeControls(exported.model), exported.version,
                       escapeControls(exported.state), escapeControls(exported.requestedBy),
                       utcText(exported.requestedUnix));
    if (!exported.decidedBy.empty())
        out << fmt::format(", {} by {}", escapeControls(exported.state),
                           escapeControls(exported.decidedBy));
    out << fmt::format("; downloaded {} time{}\n", exported.downloads,
                       exported.downloads == 1 ? "" : "s");
    out << fmt::format("  digest: {}\n", exported.digest);
    if (!exported.folderDigest.empty())
        out << fmt::format("  folder: {}\n", exported.folderDigest);
}

int registerModel(const CommandRegistry& registry, const ModelOptions& options)
{
    auto client = signedInClient(options.client, registry.err());
    if (!client)
        return registry.fail(client.error());
    auto version = (*client)->registry().registerModel(options.name, options.description,
                                                       options.job, options.step);
    if (!version)
        return registry.fail(version.error());
    if (options.json) {
        registry.out() << versionJson(*version).dump(2) << '\n';
        return kExitOk;
    }
    registry.out() << fmt::format("registered {}@{}: job {} at step {}, digest {}\n",
                                  escapeControls(version->name), version->version, version->job,
                                  version->step, version->digest);
    return kExitOk;
}

int importModel(const CommandRegistry& registry, const ModelOptions& options)
{
    auto client = signedInClient(options.client, registry.err());
    if (!client)
        return registry.fail(client.error());
    std::optional<ProgressReporter> progress;
    if (!options.quiet)
        progress.emplace(
            uploadReporter(registry, &registry.err() == &std::cerr && ::isatty(STDERR_FILENO)));
    auto version = (*client)->registry().importModel(
        {options.name, options.project, options.description, options.out},
        progressFeed(progress, 4));
    if (progress)
        progress->abandon();
    if (!version)
        return registry.fail(version.error());
    if (options.json) {
        registry.out() << versionJson(*version).dump(2) << '\n';
        return kExitOk;
    }
    registry.out() << fmt::format("imported {}@{} as a base model: {}, digest {}\n",
                                  escapeControls(version->name), version->version,
                                  escapeControls(version->shape), version->digest);
    return kExitOk;
}

int listModels(const CommandRegistry& registry, const ModelOptions& options)
{
    return runClientCall(
        registry, options.client,
        [&](api::ControlClient& client) { return client.registry().listModels(); },
        [&](const auto& models) {
            constexpr std::string_view row = "{:<24} {:<12} {:>8} {:>8}  {}\n";
            printList(
                registry.out(), options.json, models,
                fmt::format(row, "model", "project", "versions", "pending", "aliases"),
                [](const api::ModelSummaryView& model) {
                    nlohmann::json aliases = nlohmann::json::object();
                    for (const auto& [alias, version] : model.aliases)
                        aliases[alias] = version;
                    return nlohmann::json{{"name", model.name},
                                          {"project", model.project},
                                          {"versions", model.versions},
                                          {"pending_promotions", model.pendingPromotions},
                                          {"aliases", aliases}};
                },
                [&](const api::ModelSummaryView& model) {
                    std::vector<std::string> aliases;
                    for (const auto& [alias, version] : model.aliases)
                        aliases.push_back(fmt::format("{}={}", alias, version));
                    return fmt::format(row, escapeControls(model.name),
                                       escapeControls(model.project), model.versions,
                                       model.pendingPromotions, aliasesText(aliases));
                });
            return kExitOk;
        });
}

int showModel(const CommandRegistry& registry, const ModelOptions& options)
{
    return runClientCall(
        registry, options.client,
        [&](api::ControlClient& client) { return client.registry().showModel(options.name); },
        [&](const auto& model) {
            if (options.json) {
                nlohmann::json versions = nlohmann::json::array();
                for (const api::ModelVersionView& version : model.versions)
                    versions.push_back(versionJson(version));
                nlohmann::json promotions = nlohmann::json::array();
                for (const api::PromotionView& promotion : model.promotions)
                    promotions.push_back(promotionJson(promotion));
                nlohmann::json exports = nlohmann::json::array();
                for (const api::ModelExportView& exported : model.exports)
                    exports.push_back(exportJson(exported));
                registry.out() << nlohmann::json{{"name", model.name},
                                                 {"project", model.project},
                                                 {"versions", versions},
                                                 {"promotions", promotions},
                                                 {"exports", exports}}
                                      .dump(2)
                               << '\n';
                return kExitOk;
            }
            std::ostream& out = registry.out();
            out << fmt::format("model '{}' in project '{}'\n", escapeControls(model.name),
                               escapeControls(model.project));
            for (const api::ModelVersionView& version : model.versions) {
                if (version.source == "import")
                    out << fmt::format("  version {} [{}]: imported base model, by {} at {}\n",
                                       version.version, aliasesText(version.aliases),
                                       escapeControls(version.registeredBy),
                                       utcText(version.registeredUnix));
                else
                    out << fmt::format(
                        "  version {} [{}]: job {} at step {}, worker {}, registered by {} "
                        "at {}\n",
                        version.version, aliasesText(version.aliases), version.job, version.step,
                        escapeControls(version.worker), escapeControls(version.registeredBy),
                        utcText(version.registeredUnix));
                if (!version.base.empty())
                    out << fmt::format("    fine-tuned from: {}\n", escapeControls(version.base));
                out << fmt::format("    digest: {}\n", version.digest);
                if (!version.description.empty())
                    out << fmt::format("    {}\n", escapeControls(version.description));
            }
            for (const api::PromotionView& promotion : model.promotions)
                printPromotion(out, promotion);
            for (const api::ModelExportView& exported : model.exports)
                printExport(out, exported);
            return kExitOk;
        });
}

// NAME@VERSION, as a promotion names its version.
bool splitVersion(const std::string& reference, std::string& name, std::int64_t& version)
{
    const auto at = reference.rfind('@');
    if (at == std::string::npos)
        return false;
    name = reference.substr(0, at);
    const char* begin = reference.data() + at + 1;
    const char* end = reference.data() + reference.size();
    const auto [last, failed] = std::from_chars(begin, end, version);
    return failed == std::errc() && last == end && version > 0 && !name.empty();
}

int requestPromotion(const CommandRegistry& registry, const ModelOptions& options)
{
    std::string name;
    std::int64_t version = 0;
    if (!splitVersion(options.name, name, version))
        return registry.failUsage(
            "Name the version to promote as NAME@VERSION, e.g. 'model promote fortunes@3 "
            "--to production'.");
    return runClientCall(
        registry, options.client,
        [&](api::ControlClient& client) {
            return client.registry().requestPromotion(name, version, options.alias, options.reason);
        },
        [&](const auto& promotion) {
            if (options.json) {
                registry.out() << promotionJson(promotion).dump(2) << '\n';
                return kExitOk;
            }
            printPromotion(registry.out(), promotion);
            registry.out() << fmt::format(
                "A second person approves it with 'sealtrainctl model approve "
                "{} --digest {}'.\n",
                promotion.id, promotion.digest);
            return kExitOk;
        });
}

int decidePromotion(const CommandRegistry& registry, const ModelOptions& options, bool approve)
{
    auto client = signedInClient(options.client, registry.err());
    if (!client)
        return registry.fail(client.error());
    auto promotion = approve
                         ? (*client)->registry().approvePromotion(options.promotion, options.digest)
                         : (*client)->registry().rejectPromotion(options.promotion, options.reason);
    if (!promotion)
        return registry.fail(promotion.error());
    if (options.json) {
        registry.out() << promotionJson(*promotion).dump(2) << '\n';
        return kExitOk;
    }
    printPromotion(registry.out(), *promotion);
    return kExitOk;
}

int approvePromotion(const CommandRegistry& registry, const ModelOptions& options)
{
    return decidePromotion(registry, options, true);
}

int rejectPromotion(const CommandRegistry& registry, const ModelOptions& options)
{
    return decidePromotion(registry, options, false);
}

int requestExport(const CommandRegistry& registry, const ModelOptions& options)
{
    return runClientCall(
        registry, options.client,
        [&](api::ControlClient& client) {
            return client.registry().requestExport(options.name, options.reason);
        },
        [&](const auto& exported) {
            if (options.json) {
                registry.out() << exportJson(exported).dump(2) << '\n';
                return kExitOk;
            }
            printExport(registry.out(), exported);
            registry.out() << fmt::format("A second person approves it with 'sealtrainctl model "
                                          "export-approve {} --digest {}'.\n",
                                          exported.id, exported.digest);
            return kExitOk;
        });
}

int decideExport(const CommandRegistry& registry, const ModelOptions& options, bool approve)
{
    auto client = signedInClient(options.client, registry.err());
    if (!client)
        return registry.fail(client.error());
    auto exported = approve ? (*client)->registry().approveExport(options.promotion, options.digest)
                            : (*client)->registry().rejectExport(options.promotion, options.reason);
    if (!exported)
        return registry.fail(exported.error());
    if (options.json) {
        registry.out() << exportJson(*exported).dump(2) << '\n';
        return kExitOk;
    }
    printExport(registry.out(), *exported);
    return kExitOk;
}

int approveExport(const CommandRegistry& registry, const ModelOptions& options)
{
    return decideExport(registry, options, true);
}

int rejectExport(const CommandRegistry& registry, const ModelOptions& options)
{
    return decideExport(registry, options, false);
}

int downloadExport(const CommandRegistry& registry, const ModelOptions& options)
{
    return runClientCall(
        registry, options.client,
        [&](api::ControlClient& client) {
            return client.registry().downloadExport(options.promotion, options.out);
        },
        [&](const auto& digest) {
            registry.out() << fmt::format(
                "exported into {} (digest {}); a reviewer checks it against the "
                "artefact root ('sealtrainctl signing-keys' saves it), never the "
                "identity CA: 'model_signing verify certificate --signature "
                "{}/model.sig --certificate_chain artefact-ca.pem {}'\n",
                options.out, digest, options.out, options.out);
            return kExitOk;
        });
}

int exportLineage(const CommandRegistry& registry, const ModelOptions& options)
{
    return runClientCall(
        registry, options.client,
        [&](api::ControlClient& client) { return client.registry().modelLineage(options.name); },
        [&](const auto& document) {
            if (options.out.empty()) {
                registry.out() << document;
                return kExitOk;
            }
            const auto* bytes = reinterpret_cast<const std::uint8_t*>(document.data());
            if (auto written =
                    writeOutputFile(options.out, {bytes, document.size()}, "lineage document");
                !written)
                return registry.fail(written.error());
            registry.err() << fmt::format(
                "Wrote the lineage of {} to {}; check it with 'sealtrainctl "
                "model verify-lineage {} --key registry.pub.pem'.\n",
                escapeControls(options.name), options.out, options.out);
            return kExitOk;
        });
}

int verifyLineageDocument(const CommandRegistry& registry, const ModelOptions& options)
{
    auto keyText = readInputFile(options.key, "registry public key");
    if (!keyText)
        return registry.fail(keyText.error());
    auto key = crypto::PublicKey::fromPem(*keyText);
    if (!key)
        return registry.fail(key.error(), "Give the registry.pub.pem that 'sealtrainctl "
                                          "signing-keys' wrote.");
    auto document = readInputFile(options.name, "lineage document");
    if (!document)
        return registry.fail(document.error());
    auto verdict = verifyLineage(*document, *key);
    if (!verdict) {
        registry.out() << "FAILED\n";
        return registry.fail(verdict.error());
    }
    for (const std::string& line : verdict->checked)
        registry.out() << "ok  " << escapeControls(line) << '\n';
    registry.out() << fmt::format("VERIFIED {} {}: {} signatures and links checked\n",
                                  escapeControls(verdict->model), verdict->digest,
                                  verdict->checked.size());
    return kExitOk;
}

}  // namespace

// Over 100 lines: one CLI11 declaration per option of the model subcommands, in the
// order `--help` prints them.
void registerModelCommands(CLI::App& app, CommandRegistry& registry)
{
    auto* group = app.add_subcommand(
        "model", "The model registry: versions of a model from verified checkpoints, aliases "
                 "moved by approved promotions, lineage (docs/registry.md)");
    group->require_subcommand(1);
    const auto command = [&](const std::string& name, const std::string& help,
                             int (*body)(const CommandRegistry&, const ModelOptions&),
                             bool client = true) {
        auto options = std::make_shared<ModelOptions>();
        auto* sub = group->add_subcommand(name, help);
        if (client) {
            addClientOptions(sub, options->client, true);
            sub->add_flag("--json", options->json, "Print JSON, for scripts");
        }
        registry.onRun(sub, [&registry, options, body] { return body(registry, *options); });
        return std::pair{sub, options};
    };
    auto [add, addOptions] =
        command("register",
                "Register a job's recorded checkpoint as the model's next version (model.register)",
                registerModel);
    add->add_option("NAME", addOptions->name, "The model: 1 to 64 of a-z, 0-9, '_' and '-'")
        ->required();
    add->add_option("--job", addOptions->job, "The job whose checkpoint it is")->required();
    add->add_option("--step", addOptions->step,
                    "The checkpoint's step (default: the job's newest recorded checkpoint)");
    add->add_option("--description", addOptions->description,
                    "What this version is, at most 1000 bytes");
    auto [import, importOptions] =
        command("import",
                "Import a Hugging Face GPT-2 folder as the model's next version, a base model to "
                "fine-tune from (model.register)",
                importModel);
    import
        ->add_option("FOLDER", importOptions->out,
                     "The folder save_pretrained wrote: config.json, model.safetensors, "
                     "vocab.json, merges.txt")
        ->required();
    import->add_option("--name", importOptions->name, "The model: 1 to 64 of a-z, 0-9, '_' and '-'")
        ->required();
    import->add_option("--project", importOptions->project, "The project the model belongs to")
        ->required();
    import->add_option("--description", importOptions->description,
                       "What this version is, at most 1000 bytes");
    import->add_flag("--quiet", importOptions->quiet, "No progress on standard error");
    command("list", "The models of your projects: versions, pending promotions, aliases",
            listModels);
    auto [show, showOptions] =
        command("show", "One model: its versions with their digests and aliases, its promotions",
                showModel);
    show->add_option("NAME", showOptions->name, "The model")->required();
    auto [promote, promoteOptions] = command(
        "promote", "Ask that an alias name a version; a second person approves (model.register)",
        requestPromotion);
    promote->add_option("VERSION", promoteOptions->name, "NAME@VERSION, e.g. fortunes@3")
        ->required();
    promote->add_option("--to", promoteOptions->alias, "dev, staging, production, or your own")
        ->required();
    promote->add_option("--reason", promoteOptions->reason, "Why, for the approver (500 bytes)");
    auto [approve, approveOptions] = command(
        "approve",
        "Approve another person's promotion for exactly the version's digest (model.approve)",
        approvePromotion);
    approve->add_option("PROMOTION", approveOptions->promotion, "The promotion's number")
        ->required();
    approve
        ->add_option("--digest", approveOptions->digest,
                     "The digest you reviewed ('model show' prints it), sha256:…")
        ->required();
    auto [reject, rejectOptions] =
        command("reject", "Reject another person's promotion (model.approve)", rejectPromotion);
    reject->add_option("PROMOTION", rejectOptions->promotion, "The promotion's number")->required();
    reject->add_option("--reason", rejectOptions->reason, "Why, for whoever asked")->required();
    auto [lineage, lineageOptions] =
        command("lineage",
                "A version's lineage as one signed document: job, checkpoint chain, registration, "
                "promotions (docs/formats/registry.md)",
                exportLineage);
    lineage->add_option("MODEL", lineageOptions->name, "NAME, NAME@VERSION or NAME@ALIAS")
        ->required();
    lineage->add_option("--out", lineageOptions->out,
                        "Write it to this file (mode 0600) instead of standard output");
    auto [exportAsk, exportAskOptions] =
        command("export-request",
                "Ask that a version be exported as a signed Hugging Face folder (model.register)",
                requestExport);
    exportAsk->add_option("VERSION", exportAskOptions->name, "NAME@VERSION, e.g. fortunes@3")
        ->required();
    exportAsk->add_option("--reason", exportAskOptions->reason, "Why, for the approver");
    auto [exportApprove, exportApproveOptions] =
        command("export-approve",
                "Approve another person's export for exactly the version's digest (model.approve)",
                approveExport);
    exportApprove->add_option("EXPORT", exportApproveOptions->promotion, "The export's number")
        ->required();
    exportApprove
        ->add_option("--digest", exportApproveOptions->digest,
                     "The digest you reviewed ('model show' prints it), sha256:…")
        ->required();
    auto [exportReject, exportRejectOptions] =
        command("export-reject", "Reject another person's export (model.approve)", rejectExport);
    exportReject->add_option("EXPORT", exportRejectOptions->promotion, "The export's number")
        ->required();
    exportReject->add_option("--reason", exportRejectOptions->reason, "Why, for whoever asked")
        ->required();
    auto [exportGet, exportGetOptions] = command(
        "export",
        "Receive an approved export: model.safetensors, config.json, the tokenizer files and "
        "model.sig (docs/formats/model-export.md)",
        downloadExport);
    exportGet->add_option("EXPORT", exportGetOptions->promotion, "The export's number")->required();
    exportGet->add_option("--out", exportGetOptions->out, "The folder to make (must not exist)")
        ->required();
    auto [verify, verifyOptions] = command(
        "verify-lineage",
        "Check a lineage document offline: every signature and link, with the registry's key "
        "(exit 0 VERIFIED, 1 FAILED)",
        verifyLineageDocument, false);
    verify->add_option("DOCUMENT", verifyOptions->name, "The lineage document")->required();
    verify
        ->add_option("--key", verifyOptions->key,
                     "registry.pub.pem, as 'sealtrainctl signing-keys' writes it")
        ->required();
}

}  // namespace sealtrain::ctl
