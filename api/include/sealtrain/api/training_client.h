// The client library's handle on the Training service, ControlClient::training() (docs/api.md).
// Runs on the control plane's own machine and text sampled from checkpoints and models. Every call
// returns a Result whose error is the server's one sentence, or the client's own for a transport
// failure; no gRPC type crosses this header.
#pragma once

#include "sealtrain/api/client_call.h"
#include "sealtrain/base/result.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace sealtrain::api {

struct TrainOutcome {
    std::string runId;
    int exitCode = 0;  // the trainer's
    std::uint64_t checkpoints = 0;
};

struct SampleOutcome {
    std::string text;
    std::uint64_t step = 0;
};

class TrainingClient final : public client_internal::Handle {
public:
    using Handle::Handle;

    // Runs an approved job on the control plane (its submitter): metrics as Train's.
    [[nodiscard]] Result<TrainOutcome>
    runJob(std::int64_t id, const std::function<void(const std::string& line)>& onMetrics);
    // Has the control plane train on `dataset` with `trainerArguments` (hyper-parameters only);
    // each metrics line (JSON, no newline) goes to `onMetrics` as the trainer writes it.
    [[nodiscard]] Result<TrainOutcome>
    train(const std::string& dataset, const std::vector<std::string>& trainerArguments,
          const std::function<void(const std::string& line)>& onMetrics);
    // Text from a run's checkpoint (`step` 0: its newest). `cancel`, when given, abandons the
    // call from another thread (the control plane then stops the sampler).
    [[nodiscard]] Result<SampleOutcome> sample(const std::string& runId, std::uint64_t step,
                                               const std::vector<std::string>& samplerArguments,
                                               CallCancel* cancel = nullptr);
    // Text from a job's checkpoint, as a worker trained it (`step` 0: its newest).
    [[nodiscard]] Result<SampleOutcome> sampleJob(std::int64_t job, std::uint64_t step,
                                                  const std::vector<std::string>& samplerArguments,
                                                  CallCancel* cancel = nullptr);
    // Text from a registered model version (NAME, NAME@VERSION or NAME@ALIAS).
    [[nodiscard]] Result<SampleOutcome>
    sampleModel(const std::string& reference, const std::vector<std::string>& samplerArguments,
                CallCancel* cancel = nullptr);
};

}  // namespace sealtrain::api
