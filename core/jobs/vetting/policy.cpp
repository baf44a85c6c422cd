// The job policy (jobs/vetting/policy.h): the file an admin edits, its defaults, and the caps and
// sampling limits it sets (docs/formats/job-policy.md).
#include "sealtrain/core/jobs/vetting/policy.h"

#include "sealtrain/formats/gpt_config.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <string_view>
#include <utility>

namespace sealtrain::core {
namespace {

using Json = nlohmann::json;

constexpr const char* kDefaultPolicy = R"json({
  "policy_version": 1,
  "pools": {
    "cpu": {"classifications": ["public", "internal"],
            "max_parameters": 200000000, "max_memory_gib": 64, "max_step_tflop": 100},
    "gpu": {"classifications": ["public", "internal"],
            "max_parameters": 2000000000, "max_memory_gib": 80, "max_step_tflop": 1000000},
    "gpu-secure": {"classifications": ["public", "internal", "confidential", "phi"],
                   "max_parameters": 2000000000, "max_memory_gib": 80, "max_step_tflop": 1000000}
  },
  "caps": {
    "nodes": 4,
    "gpus_per_node": 8,
    "steps": 1000000,
    "layers": 48,
    "width": 8192,
    "context": 8192,
    "batch": 4096,
    "lr": 0.1,
    "max_restarts": 10,
    "gpu_hours": 1000,
    "cpu_hours": 10000,
    "grad_accum": 64,
    "threads": 64,
    "cpu_ranks_per_node": 64,
    "cpu_steps": 100000
  },
  "sampling": {"max_length": 1024, "max_prompt_bytes": 4096, "max_seconds": 120},
  "exports": {"classifications": ["public", "internal"]},
  "budgets": {
    "demo": {"gpu_hours": 10, "cpu_hours": 100, "alert_at": 0.8}
  }
}
)json";

Error policyError(const std::string& field, const std::string& what)
{
    return Error(ErrorCode::InvalidArgument,
                 fmt::format("The policy field '{}' {}; fix the policy file "
                             "(docs/formats/job-policy.md).",
                             field, what));
}

Result<std::int64_t> readNumber(const Json& object, const char* field, std::int64_t fallback,
                                const std::string& path)
{
    if (!object.contains(field))
        return fallback;
    const Json& value = object[field];
    if (!value.is_number_integer() || value.get<std::int64_t>() < 0)
        return policyError(path + "." + field, "must be a whole number from 0");
    return value.get<std::int64_t>();
}

Result<double> readReal(const Json& object, const char* field, double fallback,
                        const std::string& path)
{
    if (!object.contains(field))
        return fallback;
    const Json& value = object[field];
    if (!value.is_number() || value.get<double>() < 0.0 || !std::isfinite(value.get<double>()))
        return policyError(path + "." + field, "must be a number from 0");
    return value.get<double>();
}

// What a caller may pass to `sealtrain-train sample` (docs/api.md, "Training").
constexpr std::array<std::string_view, 5> kSamplerOptions{"--prompt", "--length", "--temperature",
                                                          "--top-k", "--seed"};
constexpr std::uint64_t kMaxTopK = 1'000'000;
constexpr double kGib = 1024.0 * 1024.0 * 1024.0;
constexpr double kMaxTemperature = 100.0;

// `text` is a whole number (digits only) from `low` to `high`.
bool wholeNumberIn(const std::string& text, std::uint64_t low, std::uint64_t high)
{
    std::uint64_t number = 0;
    const auto [end, failed] = std::from_chars(text.data(), text.data() + text.size(), number);
    return !text.empty() && failed == std::errc() && end == text.data() + text.size()
           && number >= low && number <= high;
}

// `text` is a decimal number from 0 to kMaxTemperature.
bool temperatureIn(const std::string& text)
{
    double value = 0.0;
    const auto [end, failed] =
        std::from_chars(text.data(), text.data() + text.size(), value, std::chars_format::fixed);
    return !text.empty() && failed == std::errc() && end == text.data() + text.size()
           && std::isfinite(value) && value >= 0.0 && value <= kMaxTemperature;
}

}  // namespace

const char* defaultJobPolicyText() noexcept
{
    return kDefaultPolicy;
}

Result<JobPolicy> parseJobPolicy(std::string_view text)
{
    const auto json = Json::parse(text, nullptr, false);
    if (json.is_discarded() || !json.is_object())
        return Error(ErrorCode::InvalidArgument,
                     "The job policy is not a JSON object; fix the policy file "
                     "(docs/formats/job-policy.md).");
    for (const auto& item : json.items()) {
        if (item.key() != "policy_version" && item.key() != "pools" && item.key() != "caps"
            && item.key() != "budgets" && item.key() != "sampling" && item.key() != "exports")
            return policyError(item.key(), "is not part of a version 1 policy");
    }
    if (json.value("policy_version", 0) != 1)
        return policyError("policy_version", "must be 1");
    JobPolicy policy;
    if (!json.contains("pools") || !json["pools"].is_object())
        return policyError("pools", "must map each worker pool to what it may see");
    for (const auto& [pool, rules] : json["pools"].items()) {
        const std::string path = "pools." + pool;
        if (!rules.is_object() || !rules.contains("classifications")
            || !rules["classifications"].is_array())
            return policyError(path + ".classifications", "must be a list of classifications");
        std::vector<std::string>& allowed = policy.poolClassifications[pool];
        for (const auto& label : rules["classifications"]) {
            if (!label.is_string())
                return policyError(path + ".classifications", "must hold strings only");
            allowed.push_back(label.get<std::string>());
        }
        for (const auto& item : rules.items())
            if (item.key() != "classifications" && item.key() != "max_parameters"
                && item.key() != "max_memory_gib" && item.key() != "max_step_tflop")
                return policyError(path + "." + item.key(), "is not part of a pool");
        JobPolicy::PoolCosts& costs = policy.poolCosts[pool];
        SEALTRAIN_ASSIGN(costs.maxParameters,
                         readNumber(rules, "max_parameters", costs.maxParameters, path));
        SEALTRAIN_ASSIGN(costs.maxMemoryGib,
                         readReal(rules, "max_memory_gib", costs.maxMemoryGib, path));
        SEALTRAIN_ASSIGN(costs.maxStepTflop,
                         readReal(rules, "max_step_tflop", costs.maxStepTflop, path));
    }
    const Json caps = json.value("caps", Json::object());
    if (!caps.is_object())
        return policyError("caps", "must be an object");
    auto& c = policy.caps;
    SEALTRAIN_ASSIGN(c.nodes, readNumber(caps, "nodes", c.nodes, "caps"));
    SEALTRAIN_ASSIGN(c.gpusPerNode, readNumber(caps, "gpus_per_node", c.gpusPerNode, "caps"));
    SEALTRAIN_ASSIGN(c.steps, readNumber(caps, "steps", c.steps, "caps"));
    SEALTRAIN_ASSIGN(c.layers, readNumber(caps, "layers", c.layers, "caps"));
    SEALTRAIN_ASSIGN(c.width, readNumber(caps, "width", c.width, "caps"));
    SEALTRAIN_ASSIGN(c.context, readNumber(caps, "context", c.context, "caps"));
    SEALTRAIN_ASSIGN(c.batch, readNumber(caps, "batch", c.batch, "caps"));
    SEALTRAIN_ASSIGN(c.lr, readReal(caps, "lr", c.lr, "caps"));
    SEALTRAIN_ASSIGN(c.maxRestarts, readNumber(caps, "max_restarts", c.maxRestarts, "caps"));
    SEALTRAIN_ASSIGN(c.gpuHours, readReal(caps, "gpu_hours", c.gpuHours, "caps"));
    SEALTRAIN_ASSIGN(c.cpuHours, readReal(caps, "cpu_hours", c.cpuHours, "caps"));
    SEALTRAIN_ASSIGN(c.gradAccum, readNumber(caps, "grad_accum", c.gradAccum, "caps"));
    SEALTRAIN_ASSIGN(c.threads, readNumber(caps, "threads", c.threads, "caps"));
    SEALTRAIN_ASSIGN(c.cpuRanksPerNode,
                     readNumber(caps, "cpu_ranks_per_node", c.cpuRanksPerNode, "caps"));
    SEALTRAIN_ASSIGN(c.cpuSteps, readNumber(caps, "cpu_steps", c.cpuSteps, "caps"));
    const Json sampling = json.value("sampling", Json::object());
    if (!sampling.is_object())
        return policyError("sampling", "must be an object");
    auto& s = policy.sampling;
    SEALTRAIN_ASSIGN(s.maxLength, readNumber(sampling, "max_length", s.maxLength, "sampling"));
    SEALTRAIN_ASSIGN(s.maxPromptBytes,
                     readNumber(sampling, "max_prompt_bytes", s.maxPromptBytes, "sampling"));
    SEALTRAIN_ASSIGN(s.maxSeconds, readNumber(sampling, "max_seconds", s.maxSeconds, "sampling"));
    if (s.maxLength < 1 || s.maxSeconds < 1)
        return policyError("sampling", "must allow at least one token and one second");
    if (json.contains("exports")) {
        const Json& exports = json["exports"];
        if (!exports.is_object() || !exports.contains("classifications")
            || !exports["classifications"].is_array())
            return policyError("exports.classifications", "must be a list of classifications");
        policy.exportClassifications.clear();
        for (const auto& label : exports["classifications"]) {
            if (!label.is_string())
                return policyError("exports.classifications", "must hold strings only");
            policy.exportClassifications.push_back(label.get<std::string>());
        }
    }
    const Json budgets = json.value("budgets", Json::object());
    if (!budgets.is_object())
        return policyError("budgets", "must map projects to budgets");
    for (const auto& [project, budget] : budgets.items()) {
        const std::string path = "budgets." + project;
        if (!budget.is_object())
            return policyError(path, "must be an object");
        JobPolicy::Budget b;
        SEALTRAIN_ASSIGN(b.gpuHours, readReal(budget, "gpu_hours", 0.0, path));
        SEALTRAIN_ASSIGN(b.cpuHours, readReal(budget, "cpu_hours", b.cpuHours, path));
        SEALTRAIN_ASSIGN(b.alertAt, readReal(budget, "alert_at", b.alertAt, path));
        if (b.alertAt > 1.0)
            return policyError(path + ".alert_at", "must be a share from 0 to 1");
        policy.budgets[project] = b;
    }
    return policy;
}

std::vector<std::string> capsExceeded(const JobPolicy::Caps& caps, const formats::JobSpec& spec)
{
    std::vector<std::string> over;
    const auto cap = [&](const char* field, double value, double limit) {
        if (value > limit)
            over.push_back(fmt::format("{} {} > {}", field, value, limit));
    };
    const auto whole = [](std::int64_t value) { return static_cast<double>(value); };
    cap("resources.nodes", whole(spec.resources.nodes), whole(caps.nodes));
    cap("resources.gpus_per_node", whole(spec.resources.gpusPerNode), whole(caps.gpusPerNode));
    cap("resources.cpu_ranks_per_node", whole(spec.resources.cpuRanksPerNode),
        whole(caps.cpuRanksPerNode));
    cap("resources.threads", whole(spec.resources.threads), whole(caps.threads));
    cap("schedule.steps", whole(spec.schedule.steps), whole(caps.steps));
    // A CPU job's steps are capped on their own too (CPU-hours bound its time).
    if (spec.resources.gpusPerNode == 0)
        cap("schedule.steps of a CPU job", whole(spec.schedule.steps), whole(caps.cpuSteps));
    cap("schedule.grad_accum", whole(spec.schedule.gradAccum), whole(caps.gradAccum));
    cap("model.layers", whole(spec.model.layers), whole(caps.layers));
    cap("model.width", whole(spec.model.width), whole(caps.width));
    cap("model.context", whole(spec.model.context), whole(caps.context));
    cap("schedule.batch", whole(spec.schedule.batch), whole(caps.batch));
    cap("optimizer.lr", spec.optimizer.lr, caps.lr);
    cap("limits.max_restarts", whole(spec.limits.maxRestarts), whole(caps.maxRestarts));
    cap("limits.gpu_hours", spec.limits.gpuHours, caps.gpuHours);
    if (spec.resources.gpusPerNode == 0)
        cap("limits.cpu_hours", spec.limits.cpuHours, caps.cpuHours);
    return over;
}

JobCost jobCost(const formats::JobSpec& spec, std::size_t vocabSize)
{
    const auto whole = [](std::int64_t value) { return static_cast<std::size_t>(value); };
    trainer::GptConfig config;
    config.vocabSize = vocabSize;
    config.paddedVocabSize = trainer::GptConfig::padVocab(vocabSize);
    config.contextLength = whole(spec.model.context);
    config.layers = whole(spec.model.layers);
    config.heads = whole(spec.model.heads);
    config.width = whole(spec.model.width);
    const trainer::ParameterLayout layout(config);
    JobCost cost;
    cost.parameters = static_cast<double>(layout.totalSize());
    const double c = static_cast<double>(config.width);
    const double t = static_cast<double>(config.contextLength);
    const double layers = static_cast<double>(config.layers);
    const double vocab = static_cast<double>(config.paddedVocabSize);
    const double rows = static_cast<double>(spec.schedule.batch) * t;
    // Either trainer keeps 16 bytes a parameter: the weights, their gradients, AdamW's moments.
    if (spec.resources.gpusPerNode > 0) {
        // The CUDA trainer (cuda_gpt_memory.cpp): per position, 16 width-wide rows a layer and
        // the logits in bf16, one layer's gradients at a time, flash attention (no T x T).
        cost.bytesPerRank =
            16.0 * cost.parameters + 2.0 * rows * (layers * 16.0 * c + vocab + 16.0 * c);
    } else {
        // The CPU trainer (gpt.cpp, carve), fp32: per position, each layer keeps 17 width-wide
        // rows, 4 statistics and a row of attention weights per head, then the embedding, the
        // final norm, the logits and the probabilities; kept twice, with their gradients.
        const double perRow = layers * (17.0 * c + 4.0 + static_cast<double>(config.heads) * t)
                              + 2.0 * c + 2.0 * vocab + 3.0;
        cost.bytesPerRank = 16.0 * cost.parameters + 4.0 * 2.0 * rows * perRow;
    }
    const double ranks =
        static_cast<double>(spec.resources.nodes)
        * static_cast<double>(spec.resources.gpusPerNode > 0 ? spec.resources.gpusPerNode
                                                             : spec.resources.cpuRanksPerNode);
    cost.stepFlops = trainer::trainingFlopsPerToken(config, config.contextLength) * rows
                     * static_cast<double>(spec.schedule.gradAccum) * ranks;
    return cost;
}

std::vector<std::string> costsExceeded(const JobPolicy::PoolCosts& caps, const JobCost& cost)
{
    std::vector<std::string> over;
    if (cost.parameters > static_cast<double>(caps.maxParameters))
        over.push_back(fmt::format("parameters {:.1f} M > {:.1f} M (max_parameters)",
                                   cost.parameters / 1e6,
                                   static_cast<double>(caps.maxParameters) / 1e6));
    if (cost.bytesPerRank > caps.maxMemoryGib * kGib)
        over.push_back(fmt::format("memory {:.1f} GiB per rank > {:.1f} GiB (max_memory_gib)",
                                   cost.bytesPerRank / kGib, caps.maxMemoryGib));
    if (cost.stepFlops > caps.maxStepTflop * 1e12)
        over.push_back(fmt::format("{:.3g} TFLOP per step > {:.3g} (max_step_tflop)",
                                   cost.stepFlops / 1e12, caps.maxStepTflop));
    return over;
}

std::string describeCost(const JobCost& cost)
{
    return fmt::format("about {:.1f} M parameters, {:.2f} GiB per rank, {:.3g} TFLOP per step",
                       cost.parameters / 1e6, cost.bytesPerRank / kGib, cost.stepFlops / 1e12);
}

Result<SamplerCall> samplerArguments(const JobPolicy::Sampling& limits,
                                     const std::vector<std::string>& given)
{
    // Every sampler option takes a value, given as "--name=value" or as the next argument; each
    // is given at most once, and only those a caller may give (the control plane sets paths,
    // keys and the dataset itself).
    std::vector<std::pair<std::string, std::string>> options;
    for (std::size_t i = 0; i < given.size(); ++i) {
        const std::string& argument = given[i];
        const auto equals = argument.find('=');
        std::string name = argument.substr(0, equals);
        if (std::find(kSamplerOptions.begin(), kSamplerOptions.end(), name)
            == kSamplerOptions.end())
            return Error(ErrorCode::InvalidArgument,
                         fmt::format("'{}' is not an option a caller may give the sampler; the "
                                     "control plane sets paths, keys and the dataset itself "
                                     "(allowed: {}).",
                                     name.substr(0, 64), fmt::join(kSamplerOptions, " ")));
        for (const auto& [seen, value] : options)
            if (seen == name)
                return Error(ErrorCode::InvalidArgument,
                             fmt::format("The option '{}' is given twice; give it once.", name));
        if (equals == std::string::npos && i + 1 >= given.size())
            return Error(ErrorCode::InvalidArgument,
                         fmt::format("The option '{}' needs a value.", name));
        std::string value = equals == std::string::npos ? given[++i] : argument.substr(equals + 1);
        options.emplace_back(std::move(name), std::move(value));
    }

    SamplerCall call;
    bool lengthGiven = false;
    for (auto& [name, value] : options) {
        if (name == "--prompt") {
            // The prompt leaves the arguments: it reaches the sampler on its standard input.
            if (static_cast<std::int64_t>(value.size()) > limits.maxPromptBytes)
                return Error(ErrorCode::InvalidArgument,
                             fmt::format("The prompt is over the job policy's "
                                         "sampling.max_prompt_bytes ({} bytes); shorten it.",
                                         limits.maxPromptBytes));
            call.prompt = std::move(value);
            continue;
        }
        if (name == "--length") {
            lengthGiven = true;
            if (!wholeNumberIn(value, 0, static_cast<std::uint64_t>(limits.maxLength)))
                return Error(ErrorCode::InvalidArgument,
                             fmt::format("The sampler's --length must be a whole number from 0 "
                                         "to {} (the job policy's sampling.max_length); ask for "
                                         "fewer tokens.",
                                         limits.maxLength));
        } else if (name == "--top-k") {
            if (!wholeNumberIn(value, 0, kMaxTopK))
                return Error(ErrorCode::InvalidArgument,
                             fmt::format("The sampler's --top-k must be a whole number from 0 (the "
                                         "whole vocabulary) to {}.",
                                         kMaxTopK));
        } else if (name == "--seed") {
            if (!wholeNumberIn(value, 0, std::numeric_limits<std::uint64_t>::max()))
                return Error(ErrorCode::InvalidArgument,
                             "The sampler's --seed must be a whole number of 0 or more.");
        } else if (name == "--temperature") {
            if (!temperatureIn(value))
                return Error(ErrorCode::InvalidArgument,
                             fmt::format("The sampler's --temperature must be a number from 0 "
                                         "(always the likeliest token) to {}; pass e.g. 0.8.",
                                         kMaxTemperature));
        }
        call.arguments.push_back(fmt::format("{}={}", name, value));
    }
    if (!lengthGiven)
        call.arguments.push_back(
            fmt::format("--length={}", std::min(kDefaultSampleLength, limits.maxLength)));
    if (call.prompt)
        call.arguments.push_back("--prompt-stdin");
    return call;
}

}  // namespace sealtrain::core
