// The job policy an admin edits (docs/formats/job-policy.md; the default is
// resources/job-policy.json): which classifications each worker pool may see, caps on resources
// and hyper-parameters, GPU-hour budgets per project, and the limits of sampling a model. Every
// field a job or a sampling request sets that decides what it costs is capped here.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/formats/job_spec.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sealtrain::core {

// What `sealtrain-train sample` generates when the caller names no --length.
inline constexpr std::int64_t kDefaultSampleLength = 200;

struct JobPolicy {
    std::map<std::string, std::vector<std::string>> poolClassifications;
    // What one job may cost on a pool (issue #54: per-field caps passed a 39-billion-parameter
    // CPU job): its model's parameters, the memory its training needs per rank, and the
    // floating-point work of one optimizer step, as jobCost estimates them. A pool's fields
    // left out keep these values.
    struct PoolCosts {
        std::int64_t maxParameters = 2'000'000'000;
        double maxMemoryGib = 80.0;
        double maxStepTflop = 1'000'000.0;
    };
    std::map<std::string, PoolCosts> poolCosts;  // every pool of poolClassifications
    struct Caps {
        std::int64_t nodes = 1;
        std::int64_t gpusPerNode = 8;
        std::int64_t steps = 1'000'000;
        std::int64_t layers = 48;
        std::int64_t width = 8192;
        std::int64_t context = 8192;
        std::int64_t batch = 4096;
        double lr = 0.1;
        std::int64_t maxRestarts = 10;
        double gpuHours = 1000.0;
        double cpuHours = 10'000.0;  // a CPU job's limits.cpu_hours
        std::int64_t gradAccum = 64;
        std::int64_t threads = 64;          // per rank
        std::int64_t cpuRanksPerNode = 64;  // of a CPU job
        std::int64_t cpuSteps = 100'000;    // a CPU job's steps
    } caps;
    struct Budget {
        double gpuHours = 0.0;
        // Left out of a policy file written before CPU-hours were charged: 100, so that its CPU
        // jobs still run after the upgrade. 0: the project's CPU jobs are refused.
        double cpuHours = 100.0;
        double alertAt = 0.8;  // share of the budget at which vetting warns
    };
    std::map<std::string, Budget> budgets;  // by project; a project without one has none
    // Sampling a trained model on the control plane (Sample): what one request may ask for,
    // and how long its sampler may run before it is stopped.
    struct Sampling {
        std::int64_t maxLength = 1024;  // tokens generated
        std::int64_t maxPromptBytes = 4096;
        std::int64_t maxSeconds = 120;
    } sampling;
    // The classifications of data whose models may leave the platform as an export (issue #48):
    // every dataset behind an exported version must have one of them.
    std::vector<std::string> exportClassifications{"public", "internal"};
};

// Parses a policy file (JSON); InvalidArgument naming the field otherwise.
[[nodiscard]] Result<JobPolicy> parseJobPolicy(std::string_view text);
// The policy a data directory starts with (the same text as resources/job-policy.json).
[[nodiscard]] const char* defaultJobPolicyText() noexcept;

// Each field of `spec` over its cap, as "field value > cap"; empty when none is.
[[nodiscard]] std::vector<std::string> capsExceeded(const JobPolicy::Caps& caps,
                                                    const formats::JobSpec& spec);

// What a spec asks of the machine that trains it, estimated from its shape before it runs
// (docs/formats/job-policy.md, "Costs"): the parameters of its model with `vocabSize` tokens
// (its dataset's tokenizer), the bytes one rank holds while training (16 a parameter, and the
// activations of one micro-batch as the CPU trainer or, for a GPU job, the CUDA trainer lays them
// out), and the FLOPs of one optimizer step over every rank.
struct JobCost {
    double parameters = 0.0;
    double bytesPerRank = 0.0;
    double stepFlops = 0.0;
};
[[nodiscard]] JobCost jobCost(const formats::JobSpec& spec, std::size_t vocabSize);
// Each cost over its pool's cap, as "parameters 39.0 B > 2.0 B"; empty when none is.
[[nodiscard]] std::vector<std::string> costsExceeded(const JobPolicy::PoolCosts& caps,
                                                     const JobCost& cost);
// "about 12.3 M parameters, 0.41 GiB per rank, 0.052 TFLOP per step".
[[nodiscard]] std::string describeCost(const JobCost& cost);

// What the control plane hands `sealtrain-train sample`: its arguments, and the prompt apart,
// for the sampler's standard input (--prompt-stdin), so that no prompt shows in the process list
// (issue #27, item 4).
struct SamplerCall {
    std::vector<std::string> arguments;
    std::optional<std::string> prompt;  // none: the sampler starts from end-of-text
};

// The sampler's call (as `sealtrain-train sample` takes it) from a caller's options within
// `limits`: only --prompt, --length, --temperature, --top-k and --seed, each once, as
// "--name=value" or "--name value"; a --length from 0 to max_length (added, the sampler's default
// or the cap if lower, when absent), a --top-k from 0 to 1,000,000, a --temperature from 0 to 100,
// a whole
// --seed, and a --prompt of at most max_prompt_bytes, moved out of the arguments. InvalidArgument,
// naming the option and what to do, otherwise.
[[nodiscard]] Result<SamplerCall> samplerArguments(const JobPolicy::Sampling& limits,
                                                   const std::vector<std::string>& given);

}  // namespace sealtrain::core
