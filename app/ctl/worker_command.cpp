// `sealtrainctl worker enroll-token|list|interconnect|revoke`: the control plane's workers
// (docs/operations/workers.md). A token is shown once and works once; hand it to the node's
// operator out of band with the CA fingerprint.
#include "client_options.h"
#include "commands.h"
#include "ctl.h"
#include "sealtrain/base/utf8.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <memory>
#include <string>

namespace sealtrain::ctl {
namespace {

struct WorkerOptions {
    ClientOptions client;
    std::string worker;
    std::string pool;
    std::string reason;
    bool encrypted = false;
    bool notEncrypted = false;
    std::int64_t validMinutes = std::int64_t{24} * 60;
    bool json = false;
};

std::string whenText(std::int64_t unixSeconds)
{
    return unixSeconds == 0 ? std::string("never") : utcText(unixSeconds);
}

// "2 x NVIDIA H200 (141 GiB), 16 cores" from the inventory's JSON; the worker wrote it, so it is
// shown escaped (issue #54: an inventory stored before its fields were checked).
std::string inventoryText(const std::string& json, bool interconnectDeclared)
{
    const auto inventory = nlohmann::json::parse(json, nullptr, false);
    if (!inventory.is_object())
        return "?";
    std::string text;
    if (inventory.contains("gpus") && inventory["gpus"].is_array() && !inventory["gpus"].empty()) {
        const auto& first = inventory["gpus"][0];
        text = fmt::format("{} x {} ({:.0f} GiB), ", inventory["gpus"].size(),
                           first.value("model", "?"),
                           static_cast<double>(first.value("memory_bytes", std::uint64_t{0}))
                               / (1024.0 * 1024.0 * 1024.0));
    }
    text += fmt::format("{} cores", inventory.value("cpu_cores", 0));
    // What the operator declared counts; the worker's own claim is shown as a claim.
    if (interconnectDeclared)
        text += ", interconnect declared encrypted";
    else if (inventory.value("interconnect_encrypted", false))
        text += ", interconnect claimed encrypted (not declared)";
    return text;
}

int enrollToken(const CommandRegistry& registry, const WorkerOptions& options)
{
    auto client = signedInClient(options.client, registry.err());
    if (!client)
        return registry.fail(client.error());
    auto grant = (*client)->workers().createEnrollToken(options.worker, options.pool,
                                                        options.validMinutes * 60);
    if (!grant)
        return registry.fail(grant.error());
    if (options.json) {
        registry.out() << nlohmann::json{{"token", grant->token},
                                         {"worker", options.worker},
                                         {"pool", options.pool},
                                         {"expires", whenText(grant->expiresUnix)}}
                              .dump(2)
                       << '\n';
        return kExitOk;
    }
    registry.out() << grant->token << '\n';
    registry.err() << fmt::format(
        "A one-time token for worker '{}' in pool '{}', valid until {}. On the node, run\n"
        "  sealtrain-worker enroll --control ADDRESS --ca-fingerprint FINGERPRINT --dir DIR\n"
        "with the token in SEALTRAIN_ENROLL_TOKEN.\n",
        options.worker, options.pool, whenText(grant->expiresUnix));
    return kExitOk;
}

nlohmann::json toJson(const api::WorkerSummary& worker)
{
    return {{"name", worker.name},
            {"pool", worker.pool},
            {"state", worker.state},
            {"serial", worker.serial},
            {"enrolled", whenText(worker.enrolledUnix)},
            {"last_seen", whenText(worker.lastSeenUnix)},
            {"current_job", worker.currentJob},
            {"signing_public_key_pem", worker.signingPublicKeyPem},
            {"interconnect_declared", worker.interconnectDeclared},
            {"certificate_expires", whenText(worker.certificateExpiresUnix)},
            {"inventory", nlohmann::json::parse(worker.inventoryJson, nullptr, false)}};
}

int listWorkers(const CommandRegistry& registry, const WorkerOptions& options)
{
    return runClientCall(
        registry, options.client,
        [&](api::ControlClient& client) { return client.workers().listWorkers(); },
        [&](const auto& workers) {
            if (options.json) {
                nlohmann::json array = nlohmann::json::array();
                for (const api::WorkerSummary& worker : workers)
                    array.push_back(toJson(worker));
                registry.out() << array.dump(2) << '\n';
                return kExitOk;
            }
            registry.out() << fmt::format("{:<20} {:<12} {:<8} {:<21} {:<21} {:>5}  {}\n", "name",
                                          "pool", "state", "last seen", "certificate expires",
                                          "job", "inventory");
            for (const api::WorkerSummary& worker : workers)
                registry.out() << fmt::format(
                    "{:<20} {:<12} {:<8} {:<21} {:<21} {:>5}  {}\n", worker.name, worker.pool,
                    worker.state, whenText(worker.lastSeenUnix),
                    whenText(worker.certificateExpiresUnix),
                    worker.currentJob == 0 ? std::string("-") : std::to_string(worker.currentJob),
                    escapeControls(
                        inventoryText(worker.inventoryJson, worker.interconnectDeclared)));
            return kExitOk;
        });
}

}  // namespace

void registerWorkerCommands(CLI::App& app, CommandRegistry& registry)
{
    auto* group = app.add_subcommand("worker", "GPU nodes: enrolment tokens, the list, "
                                               "the interconnect, revocation");
    group->require_subcommand(1);

    auto tokenOptions = std::make_shared<WorkerOptions>();
    auto* token = group->add_subcommand(
        "enroll-token", "Make a one-time token for a new worker (admin); printed once");
    token->add_option("WORKER", tokenOptions->worker, "The worker's name, e.g. gpu-node-3")
        ->required();
    token->add_option("--pool", tokenOptions->pool, "Its pool (job-policy.json names them)")
        ->required();
    token->add_option("--valid-minutes", tokenOptions->validMinutes, "How long the token works")
        ->capture_default_str()
        ->check(CLI::Range(1, 7 * 24 * 60));
    token->add_flag("--json", tokenOptions->json, "Print JSON");
    addClientOptions(token, tokenOptions->client, true);
    registry.onRun(token,
                   [&registry, tokenOptions] { return enrollToken(registry, *tokenOptions); });

    auto listOptions = std::make_shared<WorkerOptions>();
    auto* list = group->add_subcommand("list", "Every worker: pool, state, last beat, job");
    list->add_flag("--json", listOptions->json, "Print JSON");
    addClientOptions(list, listOptions->client, true);
    registry.onRun(list, [&registry, listOptions] { return listWorkers(registry, *listOptions); });

    auto interconnectOptions = std::make_shared<WorkerOptions>();
    auto* interconnect = group->add_subcommand(
        "interconnect", "Declare whether the network between a worker's nodes is encrypted "
                        "(operator); only then does it get jobs on several nodes");
    interconnect->add_option("WORKER", interconnectOptions->worker, "The worker's name")
        ->required();
    auto* encrypted = interconnect->add_flag(
        "--encrypted", interconnectOptions->encrypted,
        "You checked that its nodes talk over an encrypted network (IPsec, WireGuard, MACsec)");
    auto* notEncrypted = interconnect->add_flag(
        "--not-encrypted", interconnectOptions->notEncrypted, "Withdraw the declaration");
    encrypted->excludes(notEncrypted);
    addClientOptions(interconnect, interconnectOptions->client, true);
    registry.onRun(interconnect, [&registry, interconnectOptions] {
        if (!interconnectOptions->encrypted && !interconnectOptions->notEncrypted)
            return registry.fail(
                Error(ErrorCode::InvalidArgument, "Say --encrypted or --not-encrypted."));
        const bool declared = interconnectOptions->encrypted;
        return runClientChange(
            registry, interconnectOptions->client,
            [interconnectOptions, declared](api::ControlClient& client) -> Result<void> {
                auto changed =
                    client.workers().declareInterconnect(interconnectOptions->worker, declared);
                if (!changed)
                    return changed.error();
                return success();
            },
            declared ? fmt::format("Worker {}'s interconnect is declared encrypted; it may now "
                                   "take jobs on several nodes.\n",
                                   interconnectOptions->worker)
                     : fmt::format("Worker {} takes jobs on one node only.\n",
                                   interconnectOptions->worker));
    });

    auto revokeOptions = std::make_shared<WorkerOptions>();
    auto* revoke = group->add_subcommand(
        "revoke", "Revoke a worker (admin): refused from its next handshake, its job re-queued");
    revoke->add_option("WORKER", revokeOptions->worker, "The worker's name")->required();
    revoke->add_option("--reason", revokeOptions->reason, "Why, for the audit log")->required();
    addClientOptions(revoke, revokeOptions->client, true);
    registry.onRun(revoke, [&registry, revokeOptions] {
        return runClientChange(
            registry, revokeOptions->client,
            [revokeOptions](api::ControlClient& client) -> Result<void> {
                auto revoked =
                    client.workers().revokeWorker(revokeOptions->worker, revokeOptions->reason);
                if (!revoked)
                    return revoked.error();
                return success();
            },
            fmt::format("Worker {} is revoked; its job, if any, is queued again.\n",
                        revokeOptions->worker));
    });
}

}  // namespace sealtrain::ctl
