// The vetting of a fine-tuning spec's starting model (jobs/rows.h's vetBaseModel; docs/registry.md,
// "Fine-tuning").
#include "jobs/rows.h"
#include "sealtrain/core/datasets/datasets.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

namespace sealtrain::core::internal {
namespace {

struct Shape {
    std::int64_t layers = 0;
    std::int64_t heads = 0;
    std::int64_t width = 0;
    std::int64_t context = 0;
};

// The shape of `version`: an import's from its row, a job's version from its job's spec.
Result<Shape> shapeOf(const Database& database, const StartingVersion& version)
{
    if (version.imported) {
        const auto shape = nlohmann::json::parse(version.shape, nullptr, false);
        if (!shape.is_object())
            return Error(ErrorCode::Integrity,
                         fmt::format("The shape of {} is not recorded; restore the database from "
                                     "a backup.",
                                     version.label));
        return Shape{shape.value("layers", 0), shape.value("heads", 0), shape.value("width", 0),
                     shape.value("context", 0)};
    }
    auto job = loadJob(database, version.jobId);
    if (!job)
        return job.error();
    auto spec = formats::parseJobSpec(job->info.specJson, formats::kJobSpecCeiling);
    if (!spec)
        return spec.error();
    return Shape{spec->model.layers, spec->model.heads, spec->model.width, spec->model.context};
}

}  // namespace

VettingCheck vetBaseModel(const Database& database, const ModelLookup& models,
                          const formats::JobSpec& spec, const std::string& datasetId,
                          const TokenizerLookup& tokenizerOf, std::string& pinned)
{
    const auto failed = [](std::string detail) {
        return VettingCheck{"base model", false, std::move(detail)};
    };
    auto reference = parseModelReference(spec.model.init);
    if (!reference)
        return failed(reference.error().message());
    std::int64_t number = reference->version;
    if (!reference->alias.empty()) {
        auto named = models.aliasVersion(database, reference->name, reference->alias);
        if (!named)
            return failed(named.error().message());
        if (*named == 0)
            return failed(
                fmt::format("no version of model '{}' is {}", reference->name, reference->alias));
        number = *named;
    }
    auto version = models.version(database, reference->name, number);
    if (!version)
        return failed(fmt::format("there is no version {} of model '{}'", number, reference->name));
    if (version->project != spec.project)
        return failed(fmt::format("{} belongs to project '{}', not the job's '{}'", version->label,
                                  version->project, spec.project));
    pinned = version->label;
    auto shape = shapeOf(database, *version);
    if (!shape)
        return failed(shape.error().message());
    const std::pair<const char*, std::pair<std::int64_t, std::int64_t>> fields[] = {
        {"layers", {spec.model.layers, shape->layers}},
        {"heads", {spec.model.heads, shape->heads}},
        {"width", {spec.model.width, shape->width}},
        {"context", {spec.model.context, shape->context}}};
    for (const auto& [field, values] : fields)
        if (values.first != values.second)
            return failed(fmt::format("model.{} is {} but {} has {}; a fine-tuning job keeps "
                                      "the model's shape",
                                      field, values.first, version->label, values.second));
    if (!tokenizerOf)
        return failed("this control plane has no data directory to read tokenizers from");
    if (datasetId.empty())
        return failed("the dataset did not resolve, so its tokenizer can not be compared");
    auto wanted = version->imported ? Result<std::string>(version->tokenizer)
                                    : tokenizerOf(version->datasetId);
    if (!wanted)
        return failed(wanted.error().message());
    auto used = tokenizerOf(datasetId);
    if (!used)
        return failed(used.error().message());
    if (*wanted != *used)
        return failed(fmt::format("the dataset's tokenizer is not the one {} was trained with; "
                                  "import the dataset with the model's vocab.json and merges.txt",
                                  version->label));
    return {"base model", true,
            fmt::format("{} ({}), same shape and tokenizer", version->label, version->digest)};
}

VettingCheck vetBaseModelData(const Database& database, const ModelLookup& models,
                              const std::string& label, std::int64_t submitterId,
                              const std::vector<std::string>* poolAllowed, const std::string& pool)
{
    const auto failed = [](std::string detail) {
        return VettingCheck{"base model data", false, std::move(detail)};
    };
    auto reference = parseModelReference(label);
    if (!reference)
        return failed(reference.error().message());
    auto datasets = models.datasetsBehind(database, reference->name, reference->version);
    if (!datasets)
        return failed(datasets.error().message());
    if (datasets->empty())
        return {"base model data", true, fmt::format("{} carries no dataset of ours", label)};
    for (const std::string& id : *datasets) {
        auto view = datasetForReader(database, id, submitterId);
        if (!view)
            return failed(view.error().message());
        if (!view->granted)
            return failed(fmt::format("the submitter holds no read grant on {} version {}, which "
                                      "{} was trained on",
                                      view->dataset.name, view->dataset.version, label));
        const std::string& classification = view->dataset.classification;
        if (poolAllowed == nullptr
            || std::find(poolAllowed->begin(), poolAllowed->end(), classification)
                   == poolAllowed->end())
            return failed(fmt::format("{} carries '{}' data ({}), which is not allowed on pool "
                                      "'{}'",
                                      label, classification, view->dataset.name, pool));
    }
    return {"base model data", true,
            fmt::format("the submitter may read the {} dataset{} behind {}, allowed on pool '{}'",
                        datasets->size(), datasets->size() == 1 ? "" : "s", label, pool)};
}

}  // namespace sealtrain::core::internal
