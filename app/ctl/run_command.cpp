// `sealtrainctl run list|show|compare|metrics`: experiment tracking (docs/runs.md). A run is a
// job that started; its parameters are the job's canonical spec. Tables for people, --json (and
// --csv for histories) for scripts (docs/formats/run-metrics.md).
#include "client_options.h"
#include "commands.h"
#include "ctl.h"
#include "list_output.h"

#include "sealtrain/api/run_compare.h"
#include "sealtrain/base/utf8.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <memory>
#include <set>
#include <string>
#include <vector>

namespace sealtrain::ctl {
namespace {

struct RunOptions {
    ClientOptions client;
    std::vector<std::int64_t> ids;
    bool json = false;
    bool csv = false;
    bool allParameters = false;
    std::string out;
};

std::string lossText(const std::optional<double>& loss)
{
    return loss ? fmt::format("{:.4f}", *loss) : std::string("-");
}

// The workers of a run's attempts, in order, each once ("local" for the control plane's own).
std::string workersOf(const api::RunView& run)
{
    std::vector<std::string> names;
    for (const api::RunAttemptView& attempt : run.attempts) {
        const std::string name = attempt.worker.empty() ? "local" : escapeControls(attempt.worker);
        if (std::find(names.begin(), names.end(), name) == names.end())
            names.push_back(name);
    }
    return fmt::format("{}", fmt::join(names, ","));
}

nlohmann::json summaryJson(const api::RunSummaryView& summary)
{
    nlohmann::json out{{"steps_planned", summary.stepsPlanned},
                       {"steps_done", summary.stepsDone},
                       {"best_val_step", summary.bestValidationStep},
                       {"mean_tokens_per_second", summary.meanTokensPerSecond},
                       {"mean_mfu", summary.meanMfu},
                       {"peak_memory_bytes", summary.peakMemoryBytes}};
    const auto put = [&out](const char* name, const std::optional<double>& value) {
        out[name] = value ? nlohmann::json(*value) : nlohmann::json();
    };
    put("last_loss", summary.lastLoss);
    put("last_val_loss", summary.lastValidationLoss);
    put("best_val_loss", summary.bestValidationLoss);
    return out;
}

nlohmann::json runJson(const api::RunView& run)
{
    nlohmann::json attempts = nlohmann::json::array();
    for (const api::RunAttemptView& attempt : run.attempts)
        attempts.push_back(
            {{"attempt", attempt.attempt},
             {"worker", attempt.worker},
             {"started", utcText(attempt.startedUnix)},
             {"ended", attempt.endedUnix == 0 ? nlohmann::json()
                                              : nlohmann::json(utcText(attempt.endedUnix))},
             {"outcome", attempt.outcome},
             {"reason", attempt.reason},
             {"resumed_from_step", attempt.resumedFromStep},
             {"first_step", attempt.firstStep},
             {"last_step", attempt.lastStep}});
    nlohmann::json checkpoints = nlohmann::json::array();
    for (const api::JobCheckpointView& checkpoint : run.checkpoints)
        checkpoints.push_back({{"step", checkpoint.step},
                               {"attempt", checkpoint.attempt},
                               {"worker", checkpoint.worker},
                               {"sealed_sha256", checkpoint.sealedSha256},
                               {"plaintext_sha256", checkpoint.plaintextSha256}});
    return {{"run", run.job.id},
            {"name", run.job.name},
            {"project", run.job.project},
            {"state", run.job.state},
            {"reason", run.job.reason},
            {"submitter", run.job.submitter},
            {"approver", run.job.approver},
            {"dataset_id", run.job.datasetId},
            {"spec_sha256", run.job.specSha256},
            {"parameters", nlohmann::json::parse(run.job.specJson, nullptr, false)},
            {"gpu_hours_used", run.job.gpuHoursUsed},
            {"restarts", run.job.restarts},
            {"attempts", attempts},
            {"checkpoints", checkpoints},
            {"summary", summaryJson(run.summary)}};
}

int listRuns(const CommandRegistry& registry, const RunOptions& options)
{
    return runClientCall(
        registry, options.client,
        [&](api::ControlClient& client) { return client.runs().listRuns(); },
        [&](const auto& runs) {
            constexpr std::string_view row =
                "{:>5}  {:<22} {:<10} {:<9} {:>11} {:>8} {:>8} {:>8}  {}\n";
            printList(registry.out(), options.json, runs,
                      fmt::format(row, "run", "name", "project", "state", "steps", "loss", "val",
                                  "restarts", "workers"),
                      runJson, [&](const api::RunView& run) {
                          return fmt::format(
                              row, run.job.id, escapeControls(run.job.name),
                              escapeControls(run.job.project), escapeControls(run.job.state),
                              fmt::format("{}/{}", run.summary.stepsDone, run.summary.stepsPlanned),
                              lossText(run.summary.lastLoss),
                              lossText(run.summary.lastValidationLoss), run.job.restarts,
                              workersOf(run));
                      });
            return kExitOk;
        });
}

void printRun(std::ostream& out, const api::RunView& run)
{
    out << fmt::format(
        "run {} '{}' in project '{}': {}{}\n", run.job.id, escapeControls(run.job.name),
        escapeControls(run.job.project), escapeControls(run.job.state),
        run.job.reason.empty() ? std::string() : " (" + escapeControls(run.job.reason) + ")");
    out << fmt::format("  submitted by {}, approved by {}; dataset {}; spec sha256 {}\n",
                       escapeControls(run.job.submitter), escapeControls(run.job.approver),
                       escapeControls(run.job.datasetId), escapeControls(run.job.specSha256));
    const api::RunSummaryView& summary = run.summary;
    out << fmt::format("  steps {} of {}; loss {}; validation loss {} (best {} at step {})\n",
                       summary.stepsDone, summary.stepsPlanned, lossText(summary.lastLoss),
                       lossText(summary.lastValidationLoss), lossText(summary.bestValidationLoss),
                       summary.bestValidationStep);
    out << fmt::format("  {:.0f} tokens/s and MFU {:.1f}% on average; peak memory {:.1f} MiB; "
                       "GPU hours {:.3f}\n",
                       summary.meanTokensPerSecond, summary.meanMfu * 100.0,
                       static_cast<double>(summary.peakMemoryBytes) / (1024.0 * 1024.0),
                       run.job.gpuHoursUsed);
    out << "  attempts:\n";
    for (const api::RunAttemptView& attempt : run.attempts) {
        out << fmt::format(
            "    {} on {}, {} to {}: {}{}; {}; steps {}\n", attempt.attempt,
            attempt.worker.empty() ? std::string("the control plane")
                                   : escapeControls(attempt.worker),
            utcText(attempt.startedUnix),
            attempt.endedUnix == 0 ? std::string("now") : utcText(attempt.endedUnix),
            escapeControls(attempt.outcome),
            attempt.reason.empty() ? "" : " (" + escapeControls(attempt.reason) + ")",
            attempt.resumedFromStep == 0
                ? std::string("from scratch")
                : fmt::format("resumed from the checkpoint at step {}", attempt.resumedFromStep),
            attempt.lastStep == 0 ? std::string("none recorded")
                                  : fmt::format("{} to {}", attempt.firstStep, attempt.lastStep));
    }
    out << "  checkpoints:\n";
    for (const api::JobCheckpointView& checkpoint : run.checkpoints)
        out << fmt::format("    step {} (attempt {}, signed by {}) sha256 {}\n", checkpoint.step,
                           checkpoint.attempt, escapeControls(checkpoint.worker),
                           escapeControls(checkpoint.sealedSha256));
    out << "  parameters:\n";
    for (const auto& [name, value] : api::runParameters(run.job.specJson))
        out << fmt::format("    {} = {}\n", escapeControls(name), escapeControls(value));
}

int showRun(const CommandRegistry& registry, const RunOptions& options)
{
    return runClientCall(
        registry, options.client,
        [&](api::ControlClient& client) { return client.runs().showRun(options.ids.front()); },
        [&](const auto& run) {
            if (options.json)
                registry.out() << runJson(run).dump(2) << '\n';
            else
                printRun(registry.out(), run);
            return kExitOk;
        });
}

// The signed-in client and the runs `options.ids` name, each shown whole.
struct ShownRuns {
    std::unique_ptr<api::ControlClient> client;
    std::vector<api::RunView> runs;
};

Result<ShownRuns> showRuns(const RunOptions& options, std::ostream& err)
{
    auto client = signedInClient(options.client, err);
    if (!client)
        return client.error();
    ShownRuns chosen{std::move(client).value(), {}};
    for (const std::int64_t id : options.ids) {
        auto run = chosen.client->runs().showRun(id);
        if (!run)
            return run.error();
        chosen.runs.push_back(std::move(*run));
    }
    return chosen;
}

int compareRuns(const CommandRegistry& registry, const RunOptions& options)
{
    if (std::set<std::int64_t>(options.ids.begin(), options.ids.end()).size() < 2)
        return registry.failUsage("Compare at least two different runs, e.g. 'run compare 3 4'.");
    auto chosen = showRuns(options, registry.err());
    if (!chosen)
        return registry.fail(chosen.error());
    const std::vector<api::RunView>* runs = &chosen->runs;
    const auto parameters = api::compareParameters(*runs);
    if (options.json) {
        nlohmann::json document{{"runs", nlohmann::json::array()},
                                {"parameters", nlohmann::json::array()}};
        for (const api::RunView& run : *runs)
            document["runs"].push_back(runJson(run));
        for (const api::ParameterRow& row : parameters)
            document["parameters"].push_back(
                {{"name", row.name}, {"values", row.values}, {"differs", row.differs}});
        registry.out() << document.dump(2) << '\n';
        return kExitOk;
    }
    std::ostream& out = registry.out();
    const auto line = [&](const std::string& name, const auto& cell) {
        out << fmt::format("{:<24}", name);
        for (const api::RunView& run : *runs)
            out << fmt::format(" {:>16}", cell(run));
        out << '\n';
    };
    line("run", [](const api::RunView& run) { return fmt::format("{}", run.job.id); });
    line("name",
         [](const api::RunView& run) { return escapeControls(run.job.name).substr(0, 16); });
    line("state", [](const api::RunView& run) { return escapeControls(run.job.state); });
    line("dataset",
         [](const api::RunView& run) { return escapeControls(run.job.datasetId).substr(0, 16); });
    line("steps", [](const api::RunView& run) {
        return fmt::format("{}/{}", run.summary.stepsDone, run.summary.stepsPlanned);
    });
    line("loss", [](const api::RunView& run) { return lossText(run.summary.lastLoss); });
    line("val loss",
         [](const api::RunView& run) { return lossText(run.summary.lastValidationLoss); });
    line("best val loss",
         [](const api::RunView& run) { return lossText(run.summary.bestValidationLoss); });
    line("tokens/s", [](const api::RunView& run) {
        return fmt::format("{:.0f}", run.summary.meanTokensPerSecond);
    });
    line("restarts", [](const api::RunView& run) { return fmt::format("{}", run.job.restarts); });
    line("workers", [](const api::RunView& run) { return workersOf(run); });
    out << (options.allParameters ? "parameters:\n" : "parameters that differ:\n");
    bool any = false;
    for (const api::ParameterRow& row : parameters) {
        if (!row.differs && !options.allParameters)
            continue;
        any = true;
        out << fmt::format("{:<24}", escapeControls(row.name).substr(0, 24));
        for (const std::string& value : row.values)
            out << fmt::format(" {:>16}", escapeControls(value).substr(0, 16));
        out << '\n';
    }
    if (!any)
        out << "  (none: the runs share every parameter)\n";
    return kExitOk;
}

int printMetrics(const CommandRegistry& registry, const RunOptions& options)
{
    if (options.json && options.csv)
        return registry.failUsage("Choose one of --json and --csv.");
    auto chosen = showRuns(options, registry.err());
    if (!chosen)
        return registry.fail(chosen.error());
    const std::vector<api::RunView>* runs = &chosen->runs;
    std::vector<std::vector<api::RunPointView>> histories;
    for (const api::RunView& run : *runs) {
        auto history = chosen->client->runs().runMetrics(run.job.id);
        if (!history)
            return registry.fail(history.error());
        histories.push_back(std::move(*history));
    }
    std::string text;
    if (options.csv) {
        text = api::metricsCsv(*runs, histories);
    } else if (options.json) {
        text = api::metricsJson(*runs, histories);
    } else {
        for (std::size_t i = 0; i < runs->size(); ++i) {
            const api::RunView& run = (*runs)[i];
            text += fmt::format("run {} '{}'\n{:>7} {:>7} {:>9} {:>9} {:>9} {:>9} {:>10} {:>6}\n",
                                run.job.id, escapeControls(run.job.name), "step", "attempt", "loss",
                                "val", "lr", "grad", "tok/s", "MFU");
            std::int64_t attempt = -1;
            for (const api::RunPointView& point : histories[i]) {
                if (attempt != -1 && point.attempt != attempt) {
                    // Where another attempt's lines begin: the restart, and where it resumed.
                    for (const api::RunAttemptView& a : run.attempts)
                        if (a.attempt == point.attempt)
                            text += fmt::format(
                                "  -- restart: attempt {} on {} resumed from step {} --\n",
                                a.attempt,
                                a.worker.empty() ? "the control plane" : escapeControls(a.worker),
                                a.resumedFromStep);
                }
                attempt = point.attempt;
                text += fmt::format("{:>7} {:>7} {:>9.4f} {:>9} {:>9.2e} {:>9.3f} {:>10.0f} "
                                    "{:>5.1f}%\n",
                                    point.step, point.attempt, point.loss,
                                    lossText(point.validationLoss), point.learningRate,
                                    point.gradientNorm, point.tokensPerSecond, point.mfu * 100.0);
            }
        }
    }
    if (options.out.empty()) {
        registry.out() << text;
        return kExitOk;
    }
    if (auto written = writeText(options.out, text, 0600); !written)
        return registry.fail(written.error());
    registry.err() << fmt::format("Wrote the history of {} run{} to {}.\n", runs->size(),
                                  runs->size() == 1 ? "" : "s", options.out);
    return kExitOk;
}

}  // namespace

void registerRunCommands(CLI::App& app, CommandRegistry& registry)
{
    auto* group = app.add_subcommand(
        "run", "Runs: every job that started, with its parameters, attempts, checkpoints and "
               "metrics history (docs/runs.md)");
    group->require_subcommand(1);
    const auto command = [&](const std::string& name, const std::string& help,
                             int (*body)(const CommandRegistry&, const RunOptions&)) {
        auto options = std::make_shared<RunOptions>();
        auto* sub = group->add_subcommand(name, help);
        addClientOptions(sub, options->client, true);
        sub->add_flag("--json", options->json, "Print JSON, for scripts");
        registry.onRun(sub, [&registry, options, body] { return body(registry, *options); });
        return std::pair{sub, options};
    };
    command("list", "The runs of your projects, newest first: state, steps, losses, workers",
            listRuns);
    auto [show, showOptions] = command(
        "show", "One run: outcome, summary, attempts (with restarts), checkpoints, parameters",
        showRun);
    show->add_option("ID", showOptions->ids, "The run's (its job's) number")
        ->required()
        ->expected(1);
    auto [compare, compareOptions] = command(
        "compare", "Runs side by side: outcomes, losses, speed, and the parameters that differ",
        compareRuns);
    compare->add_option("IDS", compareOptions->ids, "Two or more runs' numbers")->required();
    compare->add_flag("--all-parameters", compareOptions->allParameters,
                      "List every parameter, not only those that differ");
    auto [metrics, metricsOptions] = command(
        "metrics",
        "Runs' metrics histories, each step once, restarts marked (a table; --csv or --json "
        "for scripts, docs/formats/run-metrics.md)",
        printMetrics);
    metrics->add_option("IDS", metricsOptions->ids, "One or more runs' numbers")->required();
    metrics->add_flag("--csv", metricsOptions->csv, "Print CSV (RFC 4180), a line per step");
    metrics->add_option("--out", metricsOptions->out,
                        "Write to this file (mode 0600) instead of standard output");
}

}  // namespace sealtrain::ctl
