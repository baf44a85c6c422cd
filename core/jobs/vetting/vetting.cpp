// The automatic vetting of a job spec (docs/formats/job-policy.md, "The vetting report"): every
// check the approver reads, in order, and what the spec's references resolved to.
#include "jobs/rows.h"
#include "sealtrain/core/datasets/datasets.h"
#include "sealtrain/core/jobs/scheduling/budgets.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>

namespace sealtrain::core::internal {
namespace {

// GPT-2's vocabulary, the largest the trainer reads: a job whose dataset's tokenizer is not
// known is costed with it.
constexpr std::size_t kLargestVocabulary = 50257;

VettingCheck vetBudget(const Database& database, const JobPolicy& policy,
                       const formats::JobSpec& spec, std::int64_t excludeJob)
{
    const auto budget = policy.budgets.find(spec.project);
    // Every project needs a budget: no job runs on a project the admin never accounted for.
    if (budget == policy.budgets.end())
        return {"budget", false,
                fmt::format("project '{}' has no budget in the policy", spec.project)};
    const bool cpu = spec.resources.gpusPerNode == 0;
    const Hours hours = cpu ? Hours::Cpu : Hours::Gpu;
    const char* unit = cpu ? "CPU-hour" : "GPU-hour";
    const double limit = cpu ? budget->second.cpuHours : budget->second.gpuHours;
    const double asked = cpu ? spec.limits.cpuHours : spec.limits.gpuHours;
    if (limit <= 0.0)
        return {"budget", false, fmt::format("project '{}' has no {} budget", spec.project, unit)};
    auto committed = projectHeldMilli(database, spec.project, excludeJob, hours);
    const double held = committed ? fromMilli(*committed) : 0.0;
    const double wanted = held + asked;
    const bool within = committed && wanted <= limit + 1e-9;
    std::string detail = fmt::format("{:.3f} of {:.3f} {}s of project '{}' with this job", wanted,
                                     limit, unit, spec.project);
    if (within && wanted >= budget->second.alertAt * limit)
        detail += fmt::format(" (alert: at or above {:.0f} %)", budget->second.alertAt * 100);
    return {"budget", within, detail};
}

}  // namespace

// The automatic vetting of `spec` for `submitterId` under `policy`: every check, passed or not,
// in the order the approver reads them; what its references resolved to in `pins`.
std::vector<VettingCheck> vetSpec(const Database& database, const JobPolicy& policy,
                                  const TokenizerLookup& tokenizerOf, const ModelLookup& models,
                                  const formats::JobSpec& spec, std::int64_t submitterId,
                                  std::int64_t excludeJob, Pins& pins)
{
    std::string& datasetId = pins.datasetId;
    std::vector<VettingCheck> checks;
    checks.push_back({"spec", true, "well-formed, version 1"});

    auto view = datasetForReader(database, spec.dataset, submitterId);
    std::string classification;
    if (!view) {
        checks.push_back({"dataset", false, view.error().message()});
    } else {
        datasetId = view->dataset.id;
        classification = view->dataset.classification;
        checks.push_back(
            {"dataset", view->granted,
             view->granted
                 ? fmt::format("{} version {} ({}), the submitter may read it", view->dataset.name,
                               view->dataset.version, view->dataset.id)
                 : fmt::format("the submitter holds no read grant on {} version {}",
                               view->dataset.name, view->dataset.version)});
    }

    const auto pool = policy.poolClassifications.find(spec.resources.pool);
    if (!spec.model.init.empty()) {
        checks.push_back(
            internal::vetBaseModel(database, models, spec, datasetId, tokenizerOf, pins.init));
        // The data the starting model carries (issue #48): the submitter may read it, and the
        // pool may see it, as for the job's own dataset.
        if (!pins.init.empty())
            checks.push_back(internal::vetBaseModelData(
                database, models, pins.init, submitterId,
                pool == policy.poolClassifications.end() ? nullptr : &pool->second,
                spec.resources.pool));
    }

    if (pool == policy.poolClassifications.end()) {
        checks.push_back({"classification", false,
                          fmt::format("the policy has no worker pool '{}'", spec.resources.pool)});
    } else if (!classification.empty()) {
        const bool allowed = std::find(pool->second.begin(), pool->second.end(), classification)
                             != pool->second.end();
        checks.push_back({"classification", allowed,
                          fmt::format("'{}' data {} allowed on pool '{}'", classification,
                                      allowed ? "is" : "is not", spec.resources.pool)});
    }

    const std::vector<std::string> over = capsExceeded(policy.caps, spec);
    checks.push_back({"caps", over.empty(),
                      over.empty()
                          ? std::string("within the policy's caps")
                          : "over the policy's caps: " + fmt::format("{}", fmt::join(over, ", "))});

    // What the job costs (issue #54), against its pool's cost caps: the model's vocabulary is
    // its dataset's tokenizer's, or GPT-2's (the largest the trainer reads) when it is unknown.
    std::size_t vocab = kLargestVocabulary;
    if (tokenizerOf && !datasetId.empty())
        if (auto tokenizer = tokenizerOf(datasetId)) {
            const auto parsed = nlohmann::json::parse(*tokenizer, nullptr, false);
            if (parsed.is_object() && parsed.value("vocab_size", 0) > 0)
                vocab = parsed.value("vocab_size", std::size_t{0});
        }
    const JobCost cost = jobCost(spec, vocab);
    const auto poolCosts = policy.poolCosts.find(spec.resources.pool);
    const std::vector<std::string> costly = costsExceeded(
        poolCosts == policy.poolCosts.end() ? JobPolicy::PoolCosts{} : poolCosts->second, cost);
    checks.push_back(
        {"cost", costly.empty(),
         costly.empty()
             ? describeCost(cost) + fmt::format(", within pool '{}'", spec.resources.pool)
             : describeCost(cost)
                   + fmt::format("; over pool '{}': {}", spec.resources.pool,
                                 fmt::join(costly, ", "))});

    // The budget: what the project's other jobs hold (their limit while they may still run,
    // what they used once ended) plus this job's limit, in GPU hours for a GPU job and in
    // CPU-hours for a CPU job.
    checks.push_back(vetBudget(database, policy, spec, excludeJob));
    return checks;
}

}  // namespace sealtrain::core::internal
