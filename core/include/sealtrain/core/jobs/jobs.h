// Training jobs (issue #16; docs/operations/scheduling.md): the state machine
//   submitted → vetted (automatic policy) → approved (a second person) → queued → running →
//   succeeded | failed | cancelled, with rejected (by policy or by an approver),
// the automatic vetting against the admin's policy file, and the four-eyes rule: an approval
// binds to the SHA-256 of the exact canonical spec (formats/job_spec.h), any edit voids it, the
// submitter can never approve, and nothing runs without it. Every call goes through the audited
// transaction: each transition, allowed or refused, is in the audit log.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/core/jobs/vetting/policy.h"
#include "sealtrain/core/store/list_page.h"
#include "sealtrain/formats/job_spec.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace sealtrain::core {

enum class JobState {
    Submitted,
    Vetted,
    Rejected,
    Approved,
    Queued,  // waiting for a worker of its pool (scheduler.h)
    Running,
    Succeeded,
    Failed,
    Cancelled
};

[[nodiscard]] const char* jobStateName(JobState state) noexcept;

// A dataset's tokenizer as canonical JSON ({"files", "id", "vocab_size"}), from its signed
// manifest: what a fine-tuning job's dataset must share with the model it starts from.
using TokenizerLookup = std::function<Result<std::string>(const std::string& datasetId)>;

// What a Sample call samples from: exactly one of a job's checkpoint (`job`, at `step`; 0: its
// newest), a registered model version (`model`, NAME, NAME@VERSION or NAME@ALIAS) or a checkpoint
// of the control plane's own run (`runId`, at `step`).
struct SampleTarget {
    std::int64_t job = 0;
    std::string model;
    std::string runId;
    std::uint64_t step = 0;
};

struct VettingCheck {
    std::string check;  // "spec", "dataset", "classification", "caps", "budget"
    bool ok = false;
    std::string detail;
};

struct JobInfo {
    std::int64_t id = 0;
    std::string name;
    std::string project;
    JobState state = JobState::Submitted;
    std::string submitter;
    std::string approver;  // empty until approved
    std::string specJson;  // canonical
    std::string specSha256;
    std::string datasetId;  // resolved at vetting; empty when it could not be
    std::string pool;
    std::int64_t priority = 0;
    std::vector<VettingCheck> vetting;
    std::string reason;  // why it was rejected, failed or cancelled
    std::string worker;  // the worker it runs on (or ended on); empty while it waits or ran locally
    std::int64_t attempt = 0;  // its current or last attempt (0: never dispatched)
    std::int64_t restarts = 0;
    std::int64_t maxRestarts = 0;
    double gpuHoursLimit = 0.0;
    double gpuHoursUsed = 0.0;
    double cpuHoursLimit = 0.0;  // a CPU job's (issue #54); 0 for a GPU job
    double cpuHoursUsed = 0.0;   // measured by the control plane (core::chargedCpus)
    std::int64_t created = 0;
    std::int64_t updated = 0;

    [[nodiscard]] bool vettingPassed() const;
};

class AuditedTransactions;
class Database;
class Datasets;
class ModelLookup;

class Jobs final {
public:
    // `gate` and `models` (the registry's answers, jobs/model_lookup.h) must outlive this object;
    // `policy` is copied (setPolicy replaces it).
    Jobs(AuditedTransactions& gate, const ModelLookup& models, JobPolicy policy);

    void setPolicy(JobPolicy policy);
    // Set once the data directory is open: until then a fine-tuning spec fails its vetting.
    void setTokenizerLookup(TokenizerLookup lookup) { tokenizerOf_ = std::move(lookup); }
    [[nodiscard]] const JobPolicy& policy() const noexcept { return policy_; }

    // job.submit in the spec's project. The spec is parsed (InvalidArgument naming the field,
    // audited as failed) and vetted at once: the job is vetted, or rejected with the report.
    [[nodiscard]] Result<JobInfo> submit(const std::string& session, std::string_view specText);
    // The same with the spec already read (formats::parseJobSpec, or its refusal): how the daemon
    // calls it, having parsed the text on the caller's thread once the caller was known. A refused
    // session is refused before `spec` is looked at.
    [[nodiscard]] Result<JobInfo> submit(const std::string& session,
                                         const Result<formats::JobSpec>& spec);
    // The submitter replaces the spec (same project); every approval is void, and the new spec
    // is vetted. Not once the job runs or has ended.
    [[nodiscard]] Result<JobInfo> edit(const std::string& session, std::int64_t id,
                                       std::string_view specText);
    [[nodiscard]] Result<JobInfo> edit(const std::string& session, std::int64_t id,
                                       const Result<formats::JobSpec>& spec);
    // Vets again under the current policy (after the admin changed it): the submitter or an
    // approver, while the job is submitted, vetted or rejected by policy.
    [[nodiscard]] Result<JobInfo> vet(const std::string& session, std::int64_t id);
    // job.approve in the job's project, by someone other than the submitter, of a vetted job,
    // for exactly `specSha256` (hex), the spec the approver reviewed.
    [[nodiscard]] Result<JobInfo> approve(const std::string& session, std::int64_t id,
                                          const std::string& specSha256);
    // job.approve, not the submitter: the job will not run; `reason` is kept and audited.
    [[nodiscard]] Result<JobInfo> reject(const std::string& session, std::int64_t id,
                                         const std::string& reason);
    // The submitter or an approver ends a job that has not ended.
    [[nodiscard]] Result<JobInfo> cancel(const std::string& session, std::int64_t id,
                                         const std::string& reason);
    [[nodiscard]] Result<JobInfo> show(const std::string& session, std::int64_t id);
    // Whether the caller may run job `id` on the control plane's machine: only its submitter
    // may (job.run; a refusal is audited, issue #27 item 7). The job, for the run to start.
    // Refused too, before any key is released (issue #54: decide, then record), when the job may
    // not start (not approved as it is, or not waiting) or the submitter may no longer have its
    // dataset's read key (dataset.read and a read grant).
    [[nodiscard]] Result<JobInfo> admitRun(const std::string& session, std::int64_t id);
    // Whether the caller may sample `target` with the sampler options `arguments` (issue #54):
    // one decision, audited as `model.sample` only when refused (the release that follows is
    // audited as model.use and dataset.read_key_release). In order: the session; the options
    // (samplerArguments under the policy's limits); the object's read rule (a job's or run's
    // dataset: dataset.read and a read grant; a model: model.register or model.approve in its
    // project, then dataset.read there and a grant on every dataset behind it); and only then
    // what the object holds (a job's checkpoint at the step), so that a caller who may not read
    // the object learns nothing of it.
    [[nodiscard]] Result<SamplerCall> admitSample(const std::string& session,
                                                  const SampleTarget& target,
                                                  const std::vector<std::string>& arguments);
    // One page of the jobs the caller may see (job.submit or job.approve, globally or in their
    // projects), newest first (jobs/list.cpp; each page audited as job.list with its start).
    [[nodiscard]] Result<Paged<JobInfo>> list(const std::string& session,
                                              const ListPage& page = {});

    // Training that is not an approved job (the old direct Training.Train call): always refused,
    // and audited as denied (action train.direct, the dataset as target), saying how to train.
    [[nodiscard]] Result<void> refuseDirectTraining(const std::string& session,
                                                    const std::string& dataset);

    // A run on the control plane's own machine (no session): an approved or queued job starts
    // running there, with a new attempt. Refused, and audited, unless someone other than the
    // submitter approved exactly the current spec.
    [[nodiscard]] Result<JobInfo> start(std::int64_t id);
    // How such a run ended, with the GPU hours it used (accounted against the project's budget).
    // A job running on a worker ends through Scheduler::finish instead (fenced by its attempt).
    [[nodiscard]] Result<JobInfo> finish(std::int64_t id, bool succeeded, double gpuHoursUsed,
                                         const std::string& reason);

private:
    AuditedTransactions& gate_;
    Database& database_;
    const ModelLookup& models_;
    JobPolicy policy_;
    TokenizerLookup tokenizerOf_;
};

}  // namespace sealtrain::core
