// Handing jobs to workers and taking back what they send (issue #50, item 2;
// docs/operations/workers.md): the job lifecycle of the Workers service, one call of core per
// RPC, so that the adapter only maps the wire. Each call first finds its caller by the serial of
// the client certificate it presented (Workers::caller, inside a group commit, audited when it is
// no enrolled, active worker) and reads nothing of the request before. The steps that touch the
// database run in the control plane's group commits (`InGroup`, which the adapter gives with the
// call's origin); those that read or write files (sealing the keys, verifying an upload) run
// between them.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/core/jobs/scheduling/scheduler.h"
#include "sealtrain/core/keys/key_release.h"
#include "sealtrain/core/store/commit_group.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sealtrain::core {

class DataDirectory;
class Workers;

// One attempt handed to a worker (Workers.TakeJob): the dispatch and what its trainer receives.
struct Handover {
    Dispatch dispatch;
    WorkerRelease release;
};

// What a worker's call names: the job and its attempt (fenced: only the caller's current one).
struct AttemptRef {
    std::int64_t job = 0;
    std::int64_t attempt = 0;
};

// A worker's report (Workers.ReportMetrics): metrics lines as the trainer wrote them, the log
// lines from `firstLogLine` on, and the GPU-hours its attempt has used so far.
struct AttemptReport {
    AttemptRef attempt;
    std::vector<std::string> metricsLines;
    std::int64_t firstLogLine = 0;
    std::vector<std::string> logLines;
    double gpuHours = 0.0;
};

// How a worker says its attempt ended (Workers.FinishJob).
struct AttemptEnd {
    AttemptRef attempt;
    bool succeeded = false;
    double gpuHours = 0.0;
    std::string reason;
};

class CheckpointUpload;

class Handovers final {
public:
    // `platform` (the files and keys), `workers` and `scheduler` (its control plane's) must
    // outlive this object; `inGroup` runs each step that reads or writes the database in a
    // group commit.
    Handovers(DataDirectory& platform, Workers& workers, Scheduler& scheduler, InGroup inGroup);

    // A heartbeat of the worker presenting `serial`: its inventory recorded, and the jobs it must
    // stop. A worker that says it holds no job (`reportedJob` 0; -1 while it is taking one)
    // although the scheduler gave it one (it restarted and lost its trainer) gives that job back
    // for another attempt.
    [[nodiscard]] Result<std::vector<std::int64_t>>
    heartbeat(const std::string& serial, std::string_view inventoryJson, std::int64_t reportedJob);

    // The next job for the worker presenting `serial`, its keys sealed to that worker; none when
    // nothing waits for it. A job that can not be handed over (its keys, dataset or starting
    // model are not readable) ends failed, saying why, rather than wait on a worker that never
    // got it; the error is returned.
    [[nodiscard]] Result<std::optional<Handover>> take(const std::string& serial);

    // The files of the caller's current attempt: its dataset's (NotFound, saying what to do,
    // when the folder is gone), its job's newest checkpoint (NotFound when there is none yet),
    // the model a fine-tuning job starts from (NotFound for a job trained from scratch).
    // `call` is the RPC's name, for the audit entry of a refused attempt.
    [[nodiscard]] Result<std::vector<std::filesystem::path>>
    datasetFiles(const std::string& serial, std::string_view call, AttemptRef attempt);
    [[nodiscard]] Result<std::vector<std::filesystem::path>>
    checkpointFiles(const std::string& serial, std::string_view call, AttemptRef attempt);
    [[nodiscard]] Result<std::vector<std::filesystem::path>>
    startingModelFiles(const std::string& serial, std::string_view call, AttemptRef attempt);

    // Whether `serial` is an enrolled, active worker's (in a group of its own; a refusal audited
    // there), for a call that then reads its request outside the group that acts on it.
    [[nodiscard]] Result<void> knownWorker(const std::string& serial, std::string_view call);

    // A report of the caller's attempt: its lines parsed (only after the caller is known), then
    // recorded. True when the worker must stop the attempt (cancelled, over a limit).
    [[nodiscard]] Result<bool> report(const std::string& serial, const AttemptReport& report);

    // The end of the caller's attempt, as the scheduler records it.
    [[nodiscard]] Result<JobInfo> finish(const std::string& serial, const AttemptEnd& end);

    // A checkpoint upload of the worker presenting `serial` (CheckpointUpload below): a folder
    // for it in the data directory, made only once the caller is known.
    [[nodiscard]] Result<CheckpointUpload> openUpload(const std::string& serial);

private:
    friend class CheckpointUpload;

    // The caller, inside a group (Workers::caller: a refusal is audited there).
    [[nodiscard]] Result<WorkerInfo> caller(const std::string& serial, std::string_view call);
    // The caller's current attempt `attempt` (Scheduler::current), in a group of its own.
    [[nodiscard]] Result<Dispatch> current(const std::string& serial, std::string_view call,
                                           AttemptRef attempt);
    // The trainer's arguments and the sealed keys of `dispatch` for `worker` (KeyRelease).
    [[nodiscard]] Result<WorkerRelease> release(const WorkerInfo& worker, const Dispatch& dispatch,
                                                const std::optional<JobCheckpoint>& resumeFrom,
                                                const std::string& signerPem,
                                                const std::optional<StartingModel>& start) const;
    // A checkpoint upload refused before it was recorded, audited with the worker as the actor
    // (issue #27, item 7), in a group of its own; returns `why`.
    [[nodiscard]] Error refuseCheckpoint(const std::string& serial, AttemptRef attempt,
                                         const Error& why);

    DataDirectory& platform_;
    Workers& workers_;
    Scheduler& scheduler_;
    InGroup inGroup_;
    KeyRelease keys_;
    ReturnedCheckpoints returned_;
};

// One checkpoint upload: its sealed file and DSSE envelope are received into folder(), which
// is removed with this object; then record() verifies them and, only once the record is
// accepted, moves them into the job's folder (a refused upload never replaces a recorded
// checkpoint's files).
class CheckpointUpload final {
public:
    CheckpointUpload(CheckpointUpload&& other) noexcept;
    CheckpointUpload(const CheckpointUpload&) = delete;
    CheckpointUpload& operator=(const CheckpointUpload&) = delete;
    CheckpointUpload& operator=(CheckpointUpload&&) = delete;
    ~CheckpointUpload();

    // The folder the files are received into.
    [[nodiscard]] const std::filesystem::path& folder() const noexcept { return folder_; }

    // The attempt the upload names in its first chunk: accepted when it is the caller's current
    // one. One that is not the caller's is refused and audited as a refused checkpoint.
    [[nodiscard]] Result<void> admit(AttemptRef attempt);

    // The received files (the .sealed file and its .dsse.json envelope), verified (signed by
    // this worker's enrolled key, sealed under its job's own key, its plaintext the statement's,
    // of this job, run and dataset, naming a fine-tuning job's starting model as its base) and
    // recorded. A refusal is audited with the worker as the actor.
    [[nodiscard]] Result<JobCheckpoint> record(const std::vector<std::filesystem::path>& files,
                                               std::uint64_t maxBytes);

private:
    friend class Handovers;
    CheckpointUpload(Handovers& handovers, std::string serial, std::filesystem::path folder);

    Handovers* handovers_;
    std::string serial_;
    std::filesystem::path folder_;  // empty once moved from
    std::optional<Dispatch> dispatch_;
};

}  // namespace sealtrain::core
