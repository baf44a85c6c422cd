// Job specs (formats/job_spec.h, docs/formats/job-spec.md): YAML or JSON read by
// base/structured_text, a strict field-by-field reader whose errors name the field, and the
// canonical form that approvals bind to.
#include "sealtrain/formats/job_spec.h"

#include "sealtrain/base/encoding.h"
#include "sealtrain/base/structured_text.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>

namespace sealtrain::formats {
namespace {

using Json = nlohmann::json;

Error fieldError(const std::string& path, const std::string& what)
{
    return Error(
        ErrorCode::InvalidArgument,
        fmt::format("The field '{}' {}; fix the job spec (docs/formats/job-spec.md).", path, what));
}

bool isName(const std::string& text)
{
    return !text.empty() && text.size() <= 64 && std::all_of(text.begin(), text.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    });
}

// Reads the fields of one JSON object, each checked, and refuses the ones it does not know.
class Fields {
public:
    Fields(const Json& object, std::string path)
        : object_(object)
        , path_(std::move(path))
    {
    }

    [[nodiscard]] std::string path(std::string_view name) const
    {
        return path_.empty() ? std::string(name) : path_ + "." + std::string(name);
    }

    [[nodiscard]] Result<void> onlyKnown(std::initializer_list<std::string_view> known) const
    {
        for (const auto& item : object_.items()) {
            if (std::find(known.begin(), known.end(), item.key()) == known.end())
                return fieldError(
                    path(item.key()),
                    fmt::format("is not part of a version {} job spec", kJobSpecVersion));
        }
        return success();
    }

    [[nodiscard]] const Json* find(std::string_view name) const
    {
        const auto it = object_.find(std::string(name));
        return it == object_.end() || it->is_null() ? nullptr : &*it;
    }

    [[nodiscard]] Result<std::string> name(std::string_view field, bool required,
                                           std::string fallback = {}) const
    {
        const Json* value = find(field);
        if (value == nullptr) {
            if (required)
                return fieldError(path(field), "is required");
            return fallback;
        }
        if (!value->is_string() || !isName(value->get<std::string>()))
            return fieldError(path(field), "must be a name of 1 to 64 of a-z 0-9 _ -");
        return value->get<std::string>();
    }

    [[nodiscard]] Result<std::string> text(std::string_view field) const
    {
        const Json* value = find(field);
        if (value == nullptr)
            return fieldError(path(field), "is required");
        if (!value->is_string() || value->get<std::string>().empty()
            || value->get<std::string>().size() > 200)
            return fieldError(path(field), "must be a non-empty string of at most 200 characters");
        return value->get<std::string>();
    }

    [[nodiscard]] Result<std::int64_t> integer(std::string_view field, std::int64_t fallback,
                                               std::int64_t lowest, std::int64_t highest,
                                               bool required = false) const
    {
        const Json* value = find(field);
        if (value == nullptr) {
            if (required)
                return fieldError(path(field), "is required");
            return fallback;
        }
        if (!value->is_number_integer()
            || (value->is_number_unsigned()
                && value->get<std::uint64_t>()
                       > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
            || value->get<std::int64_t>() < lowest || value->get<std::int64_t>() > highest)
            return fieldError(path(field), lowest == highest
                                               ? fmt::format("must be {}", lowest)
                                               : fmt::format("must be a whole number from {} to {}",
                                                             lowest, highest));
        return value->get<std::int64_t>();
    }

    [[nodiscard]] Result<double> number(std::string_view field, double fallback, double lowest,
                                        double highest) const
    {
        const Json* value = find(field);
        if (value == nullptr)
            return fallback;
        if (!value->is_number() || !std::isfinite(value->get<double>())
            || value->get<double>() < lowest || value->get<double>() > highest)
            return fieldError(path(field),
                              fmt::format("must be a number from {} to {}", lowest, highest));
        return value->get<double>();
    }

    [[nodiscard]] Result<Fields> object(std::string_view field, bool required) const
    {
        static const Json kEmpty = Json::object();
        const Json* value = find(field);
        if (value == nullptr) {
            if (required)
                return fieldError(path(field), "is required");
            return Fields(kEmpty, path(field));
        }
        if (!value->is_object())
            return fieldError(path(field), "must be an object (a mapping of fields)");
        return Fields(*value, path(field));
    }

private:
    const Json& object_;
    std::string path_;
};

constexpr std::int64_t kMaxCount = 1'000'000'000;

Result<void> readModel(const Fields& top, JobSpec::Model& model)
{
    auto fields = top.object("model", true);
    if (!fields)
        return fields.error();
    SEALTRAIN_TRY(fields->onlyKnown({"layers", "heads", "width", "context", "init"}));
    SEALTRAIN_ASSIGN(model.layers, fields->integer("layers", model.layers, 1, 256));
    SEALTRAIN_ASSIGN(model.heads, fields->integer("heads", model.heads, 1, 256));
    SEALTRAIN_ASSIGN(model.width, fields->integer("width", model.width, 8, 65536));
    SEALTRAIN_ASSIGN(model.context, fields->integer("context", model.context, 2, 1 << 20));
    if (model.width % model.heads != 0)
        return fieldError("model.width",
                          fmt::format("must be a multiple of model.heads ({})", model.heads));
    if (fields->find("init") != nullptr) {
        SEALTRAIN_ASSIGN(model.init, fields->text("init"));
        const auto at = model.init.find('@');
        if (at == std::string::npos || !isName(model.init.substr(0, at))
            || !isName(model.init.substr(at + 1)))
            return fieldError("model.init", "must name a model version as NAME@VERSION or "
                                            "NAME@ALIAS, e.g. gpt2@1");
    }
    return success();
}

Result<void> readTraining(const Fields& top, JobSpec& spec)
{
    auto schedule = top.object("schedule", true);
    if (!schedule)
        return schedule.error();
    SEALTRAIN_TRY(schedule->onlyKnown({"steps", "batch", "grad_accum", "seed"}));
    SEALTRAIN_ASSIGN(spec.schedule.steps, schedule->integer("steps", 0, 1, kMaxCount, true));
    SEALTRAIN_ASSIGN(spec.schedule.batch,
                     schedule->integer("batch", spec.schedule.batch, 1, 65536));
    SEALTRAIN_ASSIGN(spec.schedule.gradAccum,
                     schedule->integer("grad_accum", spec.schedule.gradAccum, 1, 65536));
    SEALTRAIN_ASSIGN(spec.schedule.seed,
                     schedule->integer("seed", spec.schedule.seed, 0, std::int64_t{1} << 53));

    auto optimizer = top.object("optimizer", false);
    if (!optimizer)
        return optimizer.error();
    SEALTRAIN_TRY(optimizer->onlyKnown({"lr", "min_lr", "warmup", "weight_decay", "clip"}));
    auto& o = spec.optimizer;
    SEALTRAIN_ASSIGN(o.lr, optimizer->number("lr", o.lr, 1e-9, 10.0));
    SEALTRAIN_ASSIGN(o.minLr, optimizer->number("min_lr", std::min(o.minLr, o.lr), 0.0, o.lr));
    SEALTRAIN_ASSIGN(o.warmup, optimizer->integer("warmup", o.warmup, 0, spec.schedule.steps));
    SEALTRAIN_ASSIGN(o.weightDecay, optimizer->number("weight_decay", o.weightDecay, 0.0, 10.0));
    SEALTRAIN_ASSIGN(o.clip, optimizer->number("clip", o.clip, 0.0, 1e6));

    auto checkpoints = top.object("checkpoints", false);
    if (!checkpoints)
        return checkpoints.error();
    SEALTRAIN_TRY(checkpoints->onlyKnown({"every", "keep"}));
    SEALTRAIN_ASSIGN(spec.checkpoints.every,
                     checkpoints->integer("every", spec.checkpoints.every, 0, kMaxCount));
    SEALTRAIN_ASSIGN(spec.checkpoints.keep,
                     checkpoints->integer("keep", spec.checkpoints.keep, 0, 1'000'000));

    auto validation = top.object("validation", false);
    if (!validation)
        return validation.error();
    SEALTRAIN_TRY(validation->onlyKnown({"every", "batches"}));
    SEALTRAIN_ASSIGN(spec.validation.every,
                     validation->integer("every", spec.validation.every, 0, kMaxCount));
    SEALTRAIN_ASSIGN(spec.validation.batches,
                     validation->integer("batches", spec.validation.batches, 1, 1'000'000));
    return success();
}

Result<void> readResources(const Fields& top, JobSpec& spec)
{
    auto resources = top.object("resources", true);
    if (!resources)
        return resources.error();
    SEALTRAIN_TRY(resources->onlyKnown(
        {"pool", "device", "nodes", "gpus_per_node", "cpu_ranks_per_node", "threads"}));
    auto& r = spec.resources;
    SEALTRAIN_ASSIGN(r.pool, resources->name("pool", true));
    if (const Json* device = resources->find("device")) {
        if (!device->is_string() || (*device != "cpu" && *device != "cuda" && *device != "auto"))
            return fieldError("resources.device", "must be cpu, cuda or auto");
        r.device = device->get<std::string>();
    }
    SEALTRAIN_ASSIGN(r.nodes, resources->integer("nodes", r.nodes, 1, 4096));
    SEALTRAIN_ASSIGN(r.gpusPerNode, resources->integer("gpus_per_node", r.gpusPerNode, 0, 64));
    SEALTRAIN_ASSIGN(r.cpuRanksPerNode,
                     resources->integer("cpu_ranks_per_node", r.cpuRanksPerNode, 1, 64));
    SEALTRAIN_ASSIGN(r.threads, resources->integer("threads", r.threads, 0, 1024));
    if (r.gpusPerNode > 0 && r.cpuRanksPerNode != 1)
        return fieldError("resources.cpu_ranks_per_node",
                          "must be 1 for a job that uses GPUs (it runs one rank per GPU)");
    if (r.device == "cuda" && r.gpusPerNode == 0)
        return fieldError("resources.gpus_per_node", "must be at least 1 for device cuda");
    if (r.device == "cpu" && r.gpusPerNode > 0)
        return fieldError("resources.gpus_per_node", "must be 0 for device cpu");

    auto limits = top.object("limits", false);
    if (!limits)
        return limits.error();
    SEALTRAIN_TRY(limits->onlyKnown({"gpu_hours", "cpu_hours", "max_restarts"}));
    SEALTRAIN_ASSIGN(spec.limits.gpuHours, limits->number("gpu_hours", 0.0, 0.0, 1e7));
    SEALTRAIN_ASSIGN(spec.limits.cpuHours,
                     limits->number("cpu_hours", spec.limits.cpuHours, 0.0, 1e7));
    SEALTRAIN_ASSIGN(spec.limits.maxRestarts,
                     limits->integer("max_restarts", spec.limits.maxRestarts, 0, 100));
    if (r.gpusPerNode > 0 && spec.limits.gpuHours <= 0.0)
        return fieldError("limits.gpu_hours", "must be above 0 for a job that uses GPUs");
    if (r.gpusPerNode == 0 && spec.limits.cpuHours <= 0.0)
        return fieldError("limits.cpu_hours", "must be above 0 for a job that runs on CPUs");
    return success();
}

}  // namespace

Result<JobSpec> parseJobSpec(std::string_view text, const JobSpecLimits& limits)
{
    if (text.size() > limits.maxBytes)
        return Error(ErrorCode::InvalidArgument,
                     fmt::format("The job spec is larger than {} bytes; a spec holds settings, "
                                 "not data.",
                                 limits.maxBytes));
    StructuredTextRules rules;
    rules.maxDepth = limits.maxDepth;
    rules.maxNodes = limits.maxNodes;
    auto json = parseStructuredText(text, rules);
    if (!json)
        return json.error();
    if (!json->is_object())
        return Error(ErrorCode::InvalidArgument,
                     "The job spec must be a mapping of fields (a JSON object); see "
                     "docs/formats/job-spec.md.");
    const Fields top(*json, "");
    SEALTRAIN_TRY(top.onlyKnown({"spec_version", "name", "project", "dataset", "model", "optimizer",
                                 "schedule", "checkpoints", "validation", "resources", "limits",
                                 "priority"}));
    auto version = top.integer("spec_version", 0, kJobSpecVersion, kJobSpecVersion, true);
    if (!version)
        return version.error();
    JobSpec spec;
    SEALTRAIN_ASSIGN(spec.name, top.name("name", true));
    SEALTRAIN_ASSIGN(spec.project, top.name("project", true));
    SEALTRAIN_ASSIGN(spec.dataset, top.text("dataset"));
    SEALTRAIN_TRY(readModel(top, spec.model));
    SEALTRAIN_TRY(readTraining(top, spec));
    SEALTRAIN_TRY(readResources(top, spec));
    SEALTRAIN_ASSIGN(spec.priority, top.integer("priority", 0, -100, 100));
    return spec;
}

std::string canonicalJobSpec(const JobSpec& spec)
{
    Json json = {
        {"spec_version", kJobSpecVersion},
        {"name", spec.name},
        {"project", spec.project},
        {"dataset", spec.dataset},
        {"model",
         {{"layers", spec.model.layers},
          {"heads", spec.model.heads},
          {"width", spec.model.width},
          {"context", spec.model.context}}},
        {"optimizer",
         {{"lr", spec.optimizer.lr},
          {"min_lr", spec.optimizer.minLr},
          {"warmup", spec.optimizer.warmup},
          {"weight_decay", spec.optimizer.weightDecay},
          {"clip", spec.optimizer.clip}}},
        {"schedule",
         {{"steps", spec.schedule.steps},
          {"batch", spec.schedule.batch},
          {"grad_accum", spec.schedule.gradAccum},
          {"seed", spec.schedule.seed}}},
        {"checkpoints", {{"every", spec.checkpoints.every}, {"keep", spec.checkpoints.keep}}},
        {"validation", {{"every", spec.validation.every}, {"batches", spec.validation.batches}}},
        {"resources",
         {{"pool", spec.resources.pool},
          {"device", spec.resources.device},
          {"nodes", spec.resources.nodes},
          {"gpus_per_node", spec.resources.gpusPerNode},
          {"cpu_ranks_per_node", spec.resources.cpuRanksPerNode},
          {"threads", spec.resources.threads}}},
        {"limits",
         {{"gpu_hours", spec.limits.gpuHours},
          {"cpu_hours", spec.limits.cpuHours},
          {"max_restarts", spec.limits.maxRestarts}}},
        {"priority", spec.priority}};
    // Only a fine-tuning spec carries model.init, so every other spec keeps its hash.
    if (!spec.model.init.empty())
        json["model"]["init"] = spec.model.init;
    return json.dump();  // nlohmann's objects keep their keys sorted
}

crypto::Sha256Digest jobSpecHash(const JobSpec& spec)
{
    return crypto::sha256(asBytes(canonicalJobSpec(spec)));
}

std::vector<std::string> trainerArguments(const JobSpec& spec)
{
    const auto integer = [](std::int64_t value) { return std::to_string(value); };
    const auto number = [](double value) { return fmt::format("{}", value); };
    return {"--device",
            spec.resources.device,
            "--layers",
            integer(spec.model.layers),
            "--heads",
            integer(spec.model.heads),
            "--width",
            integer(spec.model.width),
            "--context",
            integer(spec.model.context),
            "--batch",
            integer(spec.schedule.batch),
            "--grad-accum",
            integer(spec.schedule.gradAccum),
            "--steps",
            integer(spec.schedule.steps),
            "--seed",
            integer(spec.schedule.seed),
            "--lr",
            number(spec.optimizer.lr),
            "--min-lr",
            number(spec.optimizer.minLr),
            "--warmup",
            integer(spec.optimizer.warmup),
            "--weight-decay",
            number(spec.optimizer.weightDecay),
            "--clip",
            number(spec.optimizer.clip),
            "--checkpoint-every",
            integer(spec.checkpoints.every),
            "--keep",
            integer(spec.checkpoints.keep),
            "--val-every",
            integer(spec.validation.every),
            "--val-batches",
            integer(spec.validation.batches),
            "--threads",
            integer(spec.resources.threads)};
}

}  // namespace sealtrain::formats
