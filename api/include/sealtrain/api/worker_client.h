// The client library's handle on the Workers service, ControlClient::worker() (docs/api.md). A
// worker's own calls (sealtrain-worker): enrolment, heartbeats, its job's files in and out. Every
// call returns a Result whose error is the server's one sentence, or the client's own for a
// transport failure; no gRPC type crosses this header.
#pragma once

#include "sealtrain/api/client_call.h"
#include "sealtrain/base/result.h"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace sealtrain::api {

// What a worker sends to enroll: its CSR (P-256 TLS key), its Ed25519 public key (checkpoints)
// and its X25519 public key (job keys are sealed to it).
struct WorkerEnrollment {
    std::string token;
    std::string csrPem;
    std::string signingPublicKeyPem;
    std::vector<std::uint8_t> boxPublicKey;
    std::string inventoryJson;
};

struct WorkerEnrolled {
    std::string certificatePem;
    std::string worker;
    std::string pool;
};

struct HeartbeatAnswer {
    std::vector<std::int64_t> stopJobs;
    std::int64_t intervalMs = 0;
};

// A job handed to this worker (TakeJob): its keys are sealed to the worker's X25519 key.
struct JobAssignment {
    std::int64_t job = 0;
    std::int64_t attempt = 0;
    std::string runId;
    std::string datasetId;
    std::vector<std::string> trainerArguments;
    std::vector<std::uint8_t> sealedKeys;
    std::string manifestsPublicKeyPem;
    bool resume = false;
    std::int64_t gpus = 0;         // GPUs per node
    std::int64_t chargedGpus = 0;  // what the attempt's wall-clock hours are multiplied by
    std::string checkpointKek;
    std::int64_t nodes = 1;
    std::int64_t ranksPerNode = 1;
    bool startsFromModel = false;  // fetchInitModel, then --init-from (unless resuming)
};

struct MetricsReport {
    std::int64_t job = 0;
    std::int64_t attempt = 0;
    std::vector<std::string> metricsLines;
    std::vector<std::string> logLines;
    std::int64_t firstLogLine = 1;
    double gpuHours = 0.0;
};

struct UploadedCheckpoint {
    std::int64_t step = 0;
    std::string sealedSha256;
};

class WorkerClient final : public client_internal::Handle {
public:
    using Handle::Handle;

    // The worker's own calls (sealtrain-worker): enrolment without a certificate, then every
    // other with the certificate it got.
    [[nodiscard]] Result<WorkerEnrolled> enrollWorker(const WorkerEnrollment& enrollment);
    // Whether the control plane refuses this client's certificate at the handshake (revoked,
    // or expired): a call without a certificate is answered, and the same call over this
    // client's channel, with its certificate, fails at the transport. False when that can not
    // be told (the control plane down or slow, the connection cut); a caller that acts on it
    // asks more than once.
    [[nodiscard]] bool certificateRefused();
    // `job` 0: no job; -1: taking one. A beat not answered within `timeout` fails (a worker
    // keeps it well under the control plane's --worker-timeout, so that it can try a new
    // connection before its job is given away).
    [[nodiscard]] Result<HeartbeatAnswer>
    heartbeat(const std::string& inventoryJson, std::int64_t job, std::int64_t attempt,
              std::chrono::milliseconds timeout = std::chrono::seconds(30));
    [[nodiscard]] Result<std::optional<JobAssignment>> takeJob();
    // The job's sealed dataset files, or its checkpoint to resume from, into `folder` (which must
    // exist and be empty); the files' paths.
    [[nodiscard]] Result<std::vector<std::filesystem::path>>
    fetchDataset(std::int64_t job, std::int64_t attempt, const std::filesystem::path& folder);
    [[nodiscard]] Result<std::vector<std::filesystem::path>>
    fetchCheckpoint(std::int64_t job, std::int64_t attempt, const std::filesystem::path& folder);
    // A fine-tuning job's sealed starting model, into `folder`.
    [[nodiscard]] Result<std::vector<std::filesystem::path>>
    fetchInitModel(std::int64_t job, std::int64_t attempt, const std::filesystem::path& folder);
    // Whether the job must stop.
    [[nodiscard]] Result<bool> reportMetrics(const MetricsReport& report);
    [[nodiscard]] Result<UploadedCheckpoint>
    uploadCheckpoint(std::int64_t job, std::int64_t attempt, const std::filesystem::path& sealed,
                     const std::filesystem::path& envelope);
    [[nodiscard]] Result<JobSummary> finishJob(std::int64_t job, std::int64_t attempt,
                                               bool succeeded, double gpuHours,
                                               const std::string& reason);
};

}  // namespace sealtrain::api
