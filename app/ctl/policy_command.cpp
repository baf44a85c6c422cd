// `sealtrainctl policy`: the job policy as the control plane applies it (worker pools and the
// data classifications each may see, caps, sampling limits) and the GPU-hour budget use of each
// project the caller works in (Jobs.ShowPolicy, audited as policy.show).
#include "client_options.h"
#include "commands.h"
#include "ctl.h"

#include "sealtrain/base/utf8.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <memory>
#include <ostream>
#include <string>

namespace sealtrain::ctl {
namespace {

struct PolicyOptions {
    bool json = false;
    ClientOptions client;
};

nlohmann::json toJson(const api::PolicySummary& policy)
{
    nlohmann::json pools = nlohmann::json::object();
    for (const auto& pool : policy.pools)
        pools[pool.name] = {{"classifications", pool.classifications},
                            {"max_parameters", pool.maxParameters},
                            {"max_memory_gib", pool.maxMemoryGib},
                            {"max_step_tflop", pool.maxStepTflop}};
    nlohmann::json caps = nlohmann::json::object();
    for (const auto& [name, value] : policy.caps)
        caps[name] = value;
    nlohmann::json budgets = nlohmann::json::array();
    for (const auto& budget : policy.budgets)
        budgets.push_back({{"project", budget.project},
                           {"gpu_hours", budget.gpuHours},
                           {"alert_at", budget.alertAt},
                           {"used_hours", budget.usedHours},
                           {"held_hours", budget.heldHours},
                           {"cpu_hours", budget.cpuHours},
                           {"cpu_used_hours", budget.cpuUsedHours},
                           {"cpu_held_hours", budget.cpuHeldHours}});
    return {{"pools", pools},
            {"caps", caps},
            {"sampling",
             {{"max_length", policy.sampleMaxLength},
              {"max_prompt_bytes", policy.sampleMaxPromptBytes},
              {"max_seconds", policy.sampleMaxSeconds}}},
            {"budgets", budgets}};
}

int showPolicy(const CommandRegistry& registry, const PolicyOptions& options)
{
    return runClientCall(
        registry, options.client,
        [&](api::ControlClient& client) { return client.jobs().showPolicy(); },
        [&](const auto& policy) {
            if (options.json) {
                registry.out() << toJson(policy).dump(2) << '\n';
                return kExitOk;
            }
            std::ostream& out = registry.out();
            out << "Pools (the data classifications their workers may see; what one job may "
                   "cost):\n";
            for (const auto& pool : policy.pools) {
                std::string classes;
                for (const std::string& classification : pool.classifications)
                    classes += (classes.empty() ? "" : ", ") + escapeControls(classification);
                out << fmt::format(
                    "  {:<16} {}\n  {:<16} at most {:g} M parameters, {:g} GiB per rank, "
                    "{:g} TFLOP per step\n",
                    escapeControls(pool.name), classes, "", pool.maxParameters / 1e6,
                    pool.maxMemoryGib, pool.maxStepTflop);
            }
            out << "Caps:\n";
            for (const auto& [name, value] : policy.caps)
                out << fmt::format("  {:<20} {:g}\n", name, value);
            out << fmt::format("Sampling: at most {} tokens, a {}-byte prompt, {} s\n",
                               policy.sampleMaxLength, policy.sampleMaxPromptBytes,
                               policy.sampleMaxSeconds);
            if (policy.budgets.empty()) {
                out << "Budgets: none in the projects you work in.\n";
                return kExitOk;
            }
            out << fmt::format("Budgets:\n  {:<16} {:<10} {:>10} {:>10} {:>10}  {}\n", "project",
                               "hours", "budget", "used", "held", "alert at");
            for (const auto& budget : policy.budgets) {
                const auto row = [&](const char* unit, double limit, double used, double held) {
                    out << fmt::format(
                        "  {:<16} {:<10} {:>10.3f} {:>10.3f} {:>10.3f}  {:.0f} %{}\n",
                        escapeControls(budget.project), unit, limit, used, held,
                        budget.alertAt * 100,
                        held >= budget.alertAt * limit && limit > 0 ? "  (alert)" : "");
                };
                row("GPU", budget.gpuHours, budget.usedHours, budget.heldHours);
                row("CPU", budget.cpuHours, budget.cpuUsedHours, budget.cpuHeldHours);
            }
            return kExitOk;
        });
}

}  // namespace

void registerPolicyCommands(CLI::App& app, CommandRegistry& registry)
{
    auto options = std::make_shared<PolicyOptions>();
    auto* command = app.add_subcommand(
        "policy", "The job policy (pools and their cost caps, caps, sampling limits) and your "
                  "projects' GPU-hour and CPU-hour budget use (audited)");
    command->add_flag("--json", options->json, "Print JSON");
    addClientOptions(command, options->client, true);
    registry.onRun(command, [options, &registry] { return showPolicy(registry, *options); });
}

}  // namespace sealtrain::ctl
