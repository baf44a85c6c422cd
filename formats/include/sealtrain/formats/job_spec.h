// A training job's specification (issue #16): what an engineer submits, policy vets and a second
// person approves. Written as JSON or YAML (docs/formats/job-spec.md; the JSON Schema is
// resources/job-spec.schema.json); parsed strictly, every field checked, unknown fields refused,
// each error naming the field. The approval binds to the SHA-256 of the canonical form: the spec
// with every default filled in, as compact JSON with sorted keys, so that any change of what
// would run changes the hash.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/crypto/hash.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sealtrain::formats {

inline constexpr std::int64_t kJobSpecVersion = 1;

struct JobSpec {
    std::string name;     // [a-z0-9_-]{1,64}
    std::string project;  // [a-z0-9_-]{1,64}
    std::string dataset;  // id ("sha256:…"), NAME or NAME@VERSION

    struct Model {
        std::int64_t layers = 4;
        std::int64_t heads = 4;
        std::int64_t width = 128;  // a multiple of heads
        std::int64_t context = 128;
        // Fine-tuning (issue #30): the model version the parameters start from, "NAME@VERSION"
        // or "NAME@ALIAS" (vetting pins an alias to the version it names); empty: from scratch.
        std::string init;
    } model;
    struct Optimizer {
        double lr = 6e-4;
        double minLr = 6e-5;
        std::int64_t warmup = 0;
        double weightDecay = 0.1;
        double clip = 1.0;  // 0: none
    } optimizer;
    struct Schedule {
        std::int64_t steps = 0;  // required
        std::int64_t batch = 8;
        std::int64_t gradAccum = 1;
        std::int64_t seed = 1337;
    } schedule;
    struct Checkpoints {
        std::int64_t every = 0;  // 0: only at the end
        std::int64_t keep = 3;   // 0: all
    } checkpoints;
    struct Validation {
        std::int64_t every = 0;  // 0: none
        std::int64_t batches = 8;
    } validation;
    struct Resources {
        std::string pool;             // the worker pool; required
        std::string device = "auto";  // cpu, cuda or auto
        std::int64_t nodes = 1;
        std::int64_t gpusPerNode = 0;
        std::int64_t cpuRanksPerNode = 1;  // ranks of a CPU job (gpus_per_node 0) on each node
        std::int64_t threads = 0;          // per rank; 0: the defaults
    } resources;
    struct Limits {
        double gpuHours = 0.0;  // what the job may use; 0: no GPU time
        // What a CPU job (gpus_per_node 0) may use: hours times the cores it is charged
        // (core::chargedCpus). Above 0 for a CPU job; a GPU job is charged GPU hours only.
        double cpuHours = 1.0;
        std::int64_t maxRestarts = 2;
    } limits;
    std::int64_t priority = 0;  // higher first, -100..100
};

// What a spec's text may cost to read, checked before anything is built from it (issue #27: a
// 400-byte YAML with nested aliases grew the daemon by 780 MiB). A real spec is about 1 KiB,
// 3 levels deep and 60 values; docs/operations/limits.md.
struct JobSpecLimits {
    std::size_t maxBytes = std::size_t{64} * 1024;
    std::size_t maxDepth = 8;
    std::size_t maxNodes = 1024;
};

// The range an operator may set each limit in (sealtrain-control --max-spec-bytes,
// --max-spec-depth,
// --max-spec-values): any real spec fits the floor, and the ceiling is what a stored spec,
// accepted under whatever setting was in force, is read back with.
inline constexpr JobSpecLimits kJobSpecFloor{std::size_t{4} * 1024, 4, 128};
inline constexpr JobSpecLimits kJobSpecCeiling{std::size_t{1} << 20U, 32, std::size_t{1} << 16U};

// Parses and checks a spec (JSON when it starts with '{', else YAML). YAML aliases, anchors
// and explicit tags are refused, and `limits` bound its size, depth and value count; cheap enough
// for any caller's thread, but the control plane parses a caller's spec only after the caller
// is known and never on the thread that commits (api/jobs_service.cpp). InvalidArgument with one
// sentence naming the field ("The field 'schedule.steps' …") for anything malformed, missing,
// out of range or unknown.
[[nodiscard]] Result<JobSpec> parseJobSpec(std::string_view text, const JobSpecLimits& limits = {});

// The canonical JSON of `spec` (every field, sorted keys, no spaces): what is stored and hashed.
[[nodiscard]] std::string canonicalJobSpec(const JobSpec& spec);

// SHA-256 of canonicalJobSpec(spec): what an approval binds to.
[[nodiscard]] crypto::Sha256Digest jobSpecHash(const JobSpec& spec);

// The spec's model, optimizer, schedule, checkpoint, validation and thread settings as
// sealtrain-train options (paths, keys and the dataset are the launcher's).
[[nodiscard]] std::vector<std::string> trainerArguments(const JobSpec& spec);

}  // namespace sealtrain::formats
