// `sealtrainctl job submit|edit|vet|approve|reject|cancel|show|list|run|logs|metrics`: training
// jobs on the control plane (docs/api.md "Jobs", docs/formats/job-spec.md). An approval names the
// spec hash the approver reviewed with `job show`; the control plane refuses it for any other
// spec. `job validate` checks a spec offline, as the control plane will, and prints that hash.
#include "client_options.h"
#include "commands.h"
#include "ctl.h"
#include "input_file.h"

#include "sealtrain/base/encoding.h"
#include "sealtrain/base/utf8.h"
#include "sealtrain/formats/job_spec.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <ctime>
#include <memory>
#include <string>

namespace sealtrain::ctl {

std::string utcText(std::int64_t unixSeconds)
{
    const std::time_t time = unixSeconds;
    std::tm parts{};
    gmtime_r(&time, &parts);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
    return text;
}

namespace {

nlohmann::json toJson(const api::JobSummary& job)
{
    nlohmann::json vetting = nlohmann::json::array();
    for (const api::VettingCheck& check : job.vetting)
        vetting.push_back({{"check", check.check}, {"ok", check.ok}, {"detail", check.detail}});
    return {{"id", job.id},
            {"name", job.name},
            {"project", job.project},
            {"state", job.state},
            {"submitter", job.submitter},
            {"approver", job.approver},
            {"spec_sha256", job.specSha256},
            {"spec", nlohmann::json::parse(job.specJson, nullptr, false)},
            {"dataset_id", job.datasetId},
            {"pool", job.pool},
            {"priority", job.priority},
            {"vetting", vetting},
            {"reason", job.reason},
            {"restarts", job.restarts},
            {"max_restarts", job.maxRestarts},
            {"gpu_hours_limit", job.gpuHoursLimit},
            {"gpu_hours_used", job.gpuHoursUsed},
            {"cpu_hours_limit", job.cpuHoursLimit},
            {"cpu_hours_used", job.cpuHoursUsed},
            {"created", utcText(job.createdUnix)},
            {"updated", utcText(job.updatedUnix)},
            {"worker", job.worker},
            {"attempt", job.attempt}};
}

// What an approver reads before approving: state, who, the spec hash, the vetting report. Every
// text another user chose is escaped (escapeControls): a reason may not clear the screen.
void printJob(std::ostream& out, const api::JobSummary& job)
{
    const auto shown = [](const std::string& text) { return escapeControls(text); };
    out << fmt::format("job {} '{}' in project '{}': {}\n", job.id, shown(job.name),
                       shown(job.project), shown(job.state));
    out << fmt::format("  submitted by {}{}\n", shown(job.submitter),
                       job.approver.empty() ? std::string()
                                            : fmt::format(", decided by {}", shown(job.approver)));
    out << fmt::format("  spec sha256 {}\n", shown(job.specSha256));
    // A CPU job is charged CPU-hours, a GPU job GPU hours (issue #54).
    const bool cpu = job.gpuHoursLimit <= 0.0 && job.cpuHoursLimit > 0.0;
    out << fmt::format("  dataset {}, pool {}, priority {}, {} hours {:.3f} of {:.3f}, "
                       "restarts {} of {}\n",
                       job.datasetId.empty() ? std::string("(unresolved)") : shown(job.datasetId),
                       shown(job.pool), job.priority, cpu ? "CPU" : "GPU",
                       cpu ? job.cpuHoursUsed : job.gpuHoursUsed,
                       cpu ? job.cpuHoursLimit : job.gpuHoursLimit, job.restarts, job.maxRestarts);
    out << "  vetting:\n";
    for (const api::VettingCheck& check : job.vetting)
        out << fmt::format("    {:<4} {:<15} {}\n", check.ok ? "ok" : "FAIL", shown(check.check),
                           shown(check.detail));
    if (!job.worker.empty())
        out << fmt::format("  running on worker {} (attempt {})\n", shown(job.worker), job.attempt);
    if (!job.reason.empty())
        out << fmt::format("  reason: {}\n", shown(job.reason));
    // The canonical spec the approval binds to, every hyper-parameter and the dataset id it was
    // pinned to, as the approver must read it (issue #27).
    const auto spec = nlohmann::json::parse(job.specJson, nullptr, false);
    if (!spec.is_discarded()) {
        out << "  spec (canonical; what the sha256 above binds):\n";
        std::string text = spec.dump(2);
        for (std::size_t start = 0; start < text.size();) {
            const std::size_t end = std::min(text.find('\n', start), text.size());
            out << "    " << shown(text.substr(start, end - start)) << '\n';
            start = end + 1;
        }
    }
}

struct JobOptions {
    ClientOptions client;
    std::int64_t id = 0;
    std::string file;
    std::string sha256;
    std::string reason;
    bool json = false;
    std::int64_t fromStep = 0;
    bool follow = false;
};

using JobCall = std::function<Result<api::JobSummary>(api::ControlClient&, const JobOptions&)>;

int runJobCall(const CommandRegistry& registry, const JobOptions& options, const JobCall& call)
{
    auto client = signedInClient(options.client, registry.err());
    if (!client)
        return registry.fail(client.error());
    auto job = call(**client, options);
    if (!job)
        return registry.fail(job.error());
    if (options.json)
        registry.out() << toJson(*job).dump(2) << '\n';
    else
        printJob(registry.out(), *job);
    return kExitOk;
}

Result<std::string> specText(const JobOptions& options)
{
    return readInputFile(options.file, "job spec");
}

int listJobs(const CommandRegistry& registry, const JobOptions& options)
{
    return runClientCall(
        registry, options.client,
        [&](api::ControlClient& client) { return client.jobs().listJobs(); },
        [&](const auto& jobs) {
            if (options.json) {
                nlohmann::json array = nlohmann::json::array();
                for (const api::JobSummary& job : jobs)
                    array.push_back(toJson(job));
                registry.out() << array.dump(2) << '\n';
                return kExitOk;
            }
            registry.out() << fmt::format("{:>5}  {:<24} {:<12} {:<10} {:<10} {}\n", "id", "name",
                                          "project", "state", "submitter", "spec sha256");
            for (const api::JobSummary& job : jobs)
                registry.out() << fmt::format(
                    "{:>5}  {:<24} {:<12} {:<10} {:<10} {}\n", job.id, escapeControls(job.name),
                    escapeControls(job.project), escapeControls(job.state),
                    escapeControls(job.submitter), escapeControls(job.specSha256.substr(0, 16)));
            return kExitOk;
        });
}

// The job's metrics on standard output as the trainer writes them, the run on standard error;
// the exit code is the trainer's.
int runJob(const CommandRegistry& registry, const JobOptions& options)
{
    auto client = signedInClient(options.client, registry.err());
    if (!client)
        return registry.fail(client.error());
    auto outcome = (*client)->training().runJob(options.id, [&registry](const std::string& line) {
        registry.out() << line << '\n' << std::flush;
    });
    if (!outcome)
        return registry.fail(outcome.error());
    registry.err() << fmt::format(
        "Job {} {}: run {} with {} checkpoint{} (sealed and signed, in "
        "the control plane's runs/{}/).\n",
        options.id,
        outcome->exitCode == 0 ? "succeeded" : fmt::format("failed (exit {})", outcome->exitCode),
        outcome->runId, outcome->checkpoints, outcome->checkpoints == 1 ? "" : "s", outcome->runId);
    return outcome->exitCode == 0 ? kExitOk : kExitFailure;
}

// The step a metrics line names (0 when it names none).
std::int64_t stepOf(const std::string& line)
{
    const auto parsed = nlohmann::json::parse(line, nullptr, false);
    if (!parsed.is_object() || !parsed.contains("step") || !parsed["step"].is_number_integer())
        return 0;
    return parsed["step"].get<std::int64_t>();
}

// `--follow`: the lines as the job's workers report them (Jobs.WatchJob, audited once), the
// job's changes of state on standard error, until it ends; the exit code says whether it
// succeeded.
int followJobLines(const CommandRegistry& registry, api::ControlClient& client,
                   const JobOptions& options, bool logs)
{
    std::string shownState;
    auto last = client.jobs().watchJob(options.id, [&](const api::JobWatchEvent& event) {
        using Kind = api::JobWatchEvent::Kind;
        if (event.kind == Kind::Job && event.job.state != shownState) {
            shownState = event.job.state;
            registry.err() << fmt::format(
                "Job {}: {}{}.\n", event.job.id, escapeControls(event.job.state),
                event.job.worker.empty()
                    ? std::string()
                    : fmt::format(" on {} (attempt {})", escapeControls(event.job.worker),
                                  event.job.attempt));
        } else if ((event.kind == Kind::Log) == logs
                   && (event.kind == Kind::Log || event.kind == Kind::Metrics)) {
            if (logs || stepOf(event.line) >= options.fromStep)
                registry.out() << escapeControls(event.line) << '\n' << std::flush;
        }
        return true;
    });
    if (!last)
        return registry.fail(last.error());
    if (last->state == "succeeded")
        return kExitOk;
    registry.err() << fmt::format(
        "Job {} {}{}; see 'sealtrainctl job logs {}'.\n", last->id, escapeControls(last->state),
        last->reason.empty() ? std::string() : ": " + escapeControls(last->reason), last->id);
    return kExitFailure;
}

// The job's metrics (JSON lines, as the trainer wrote them) or its log lines, one per line.
int printJobLines(const CommandRegistry& registry, const JobOptions& options, bool logs)
{
    auto client = signedInClient(options.client, registry.err());
    if (!client)
        return registry.fail(client.error());
    if (options.follow)
        return followJobLines(registry, **client, options, logs);
    auto lines = (*client)->jobs().jobMetrics(options.id, logs, options.fromStep);
    if (!lines)
        return registry.fail(lines.error());
    for (const std::string& line : *lines)
        registry.out() << escapeControls(line) << '\n';
    return kExitOk;
}

struct ValidateOptions {
    std::string file;
    bool canonical = false;
};

int validate(const CommandRegistry& registry, const ValidateOptions& options)
{
    auto text = readInputFile(options.file, "job spec");
    if (!text)
        return registry.fail(text.error());
    auto spec = formats::parseJobSpec(*text);
    if (!spec)
        return registry.fail(spec.error());
    if (options.canonical) {
        registry.out() << formats::canonicalJobSpec(*spec) << '\n';
        return kExitOk;
    }
    registry.out() << fmt::format("{}: job '{}' in project '{}' on dataset '{}', pool '{}'\n"
                                  "sha256 {}\n",
                                  options.file, spec->name, spec->project, spec->dataset,
                                  spec->resources.pool, toHex(formats::jobSpecHash(*spec)));
    return kExitOk;
}

}  // namespace

// Over 100 lines: one CLI11 declaration per option of the job subcommands, in the order
// `--help` prints them.
void registerJobCommands(CLI::App& app, CommandRegistry& registry)
{
    auto* group = app.add_subcommand(
        "job", "Training jobs: submitted, vetted by policy, approved by a second person; "
               "`job validate` checks a spec offline");
    group->require_subcommand(1);
    auto validateOptions = std::make_shared<ValidateOptions>();
    auto* validateCommand = group->add_subcommand(
        "validate", "Check a job spec (JSON or YAML) as the control plane will, offline, and "
                    "print the SHA-256 an approval binds to");
    validateCommand->add_option("FILE", validateOptions->file, "The spec")->required();
    validateCommand->add_flag("--canonical", validateOptions->canonical,
                              "Print the canonical form (every default filled in) instead");
    registry.onRun(validateCommand,
                   [validateOptions, &registry] { return validate(registry, *validateOptions); });
    const auto command = [&](const std::string& name, const std::string& help, bool withId,
                             const JobCall& call) {
        auto options = std::make_shared<JobOptions>();
        auto* sub = group->add_subcommand(name, help);
        if (withId)
            sub->add_option("ID", options->id, "The job's number")->required();
        addClientOptions(sub, options->client, true);
        sub->add_flag("--json", options->json, "Print the job as JSON");
        registry.onRun(sub,
                       [&registry, options, call] { return runJobCall(registry, *options, call); });
        return std::pair{sub, options};
    };

    auto [submit, submitOptions] = command(
        "submit", "Submit a job spec (JSON or YAML); it is vetted at once", false,
        [](api::ControlClient& client, const JobOptions& options) -> Result<api::JobSummary> {
            auto text = specText(options);
            if (!text)
                return text.error();
            return client.jobs().submitJob(*text);
        });
    submit->add_option("FILE", submitOptions->file, "The spec (docs/formats/job-spec.md)")
        ->required();

    auto [edit, editOptions] = command(
        "edit", "Replace your job's spec; approvals are void and it is vetted again", true,
        [](api::ControlClient& client, const JobOptions& options) -> Result<api::JobSummary> {
            auto text = specText(options);
            if (!text)
                return text.error();
            return client.jobs().editJob(options.id, *text);
        });
    edit->add_option("FILE", editOptions->file, "The new spec")->required();

    command("vet", "Vet a job again under the current policy", true,
            [](api::ControlClient& client, const JobOptions& options) {
                return client.jobs().vetJob(options.id);
            });
    command("show", "Show a job: state, spec hash and vetting report", true,
            [](api::ControlClient& client, const JobOptions& options) {
                return client.jobs().showJob(options.id);
            });

    auto [approve, approveOptions] =
        command("approve", "Approve someone else's vetted job, for the spec hash you reviewed",
                true, [](api::ControlClient& client, const JobOptions& options) {
                    return client.jobs().approveJob(options.id, options.sha256);
                });
    approve
        ->add_option("--sha256", approveOptions->sha256,
                     "The spec hash `job show` printed: the approval counts for that spec only")
        ->required();

    auto [reject, rejectOptions] =
        command("reject", "Reject someone else's job (it will not run)", true,
                [](api::ControlClient& client, const JobOptions& options) {
                    return client.jobs().rejectJob(options.id, options.reason);
                });
    reject->add_option("--reason", rejectOptions->reason, "Why, for the submitter and the log")
        ->required();

    auto [cancel, cancelOptions] =
        command("cancel", "Cancel a job that has not ended (its submitter or an approver)", true,
                [](api::ControlClient& client, const JobOptions& options) {
                    return client.jobs().cancelJob(options.id, options.reason);
                });
    cancel->add_option("--reason", cancelOptions->reason, "Why (kept with the job)");

    auto runOptions = std::make_shared<JobOptions>();
    auto* run = group->add_subcommand(
        "run", "Run your approved job on the control plane's machine (metrics on standard "
               "output), until workers take jobs");
    run->add_option("ID", runOptions->id, "The job's number")->required();
    addClientOptions(run, runOptions->client, true);
    registry.onRun(run, [&registry, runOptions] { return runJob(registry, *runOptions); });

    for (const bool logs : {false, true}) {
        auto linesOptions = std::make_shared<JobOptions>();
        auto* lines = group->add_subcommand(
            logs ? "logs" : "metrics",
            logs ? "The job's log: its attempts, workers, checkpoints and the trainer's messages"
                 : "The job's metrics as JSON lines (each step once, across restarts)");
        lines->add_option("ID", linesOptions->id, "The job's number")->required();
        if (!logs)
            lines->add_option("--from-step", linesOptions->fromStep, "Only steps from this one");
        lines->add_flag("--follow,-f", linesOptions->follow,
                        "Keep printing as the workers report, until the job ends (its changes "
                        "of state on standard error; the exit code says whether it succeeded)");
        addClientOptions(lines, linesOptions->client, true);
        registry.onRun(lines, [&registry, linesOptions, logs] {
            return printJobLines(registry, *linesOptions, logs);
        });
    }

    auto listOptions = std::make_shared<JobOptions>();
    auto* list = group->add_subcommand("list", "The jobs of your projects, newest first");
    addClientOptions(list, listOptions->client, true);
    list->add_flag("--json", listOptions->json, "Print JSON");
    registry.onRun(list, [&registry, listOptions] { return listJobs(registry, *listOptions); });
}

}  // namespace sealtrain::ctl
