// A job's checkpoints for the people who may see the job (issue #29): the list of what the
// control plane recorded (verified under the key of the worker that signed it), and the choice
// of one to download, sealed, with its DSSE envelope. Each is one audit entry: job.checkpoints
// for the list, job.checkpoint_download for a download, with the step and the sealed file's
// SHA-256. Who may: the submitter and whoever holds job.submit or job.approve in the job's project
// (as Jobs::show allows); anyone else is refused, and the refusal audited. The files stay sealed
// under the job's KEK: a download gives a reviewer the bytes and the signed statement to check,
// never a key.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/core/jobs/scheduling/scheduler.h"

#include <cstdint>
#include <string>
#include <vector>

namespace sealtrain::core {

class AuditedTransactions;

class JobCheckpointReads final {
public:
    // `gate` and `scheduler` must outlive this object.
    JobCheckpointReads(AuditedTransactions& gate, Scheduler& scheduler);

    // Every checkpoint recorded for job `jobId`, oldest first (job.checkpoints).
    [[nodiscard]] Result<std::vector<JobCheckpoint>> list(const std::string& session,
                                                          std::int64_t jobId);
    // The recorded checkpoint at `step` (0: the newest), to send (job.checkpoint_download);
    // NotFound, saying what to do, when there is none.
    [[nodiscard]] Result<JobCheckpoint> download(const std::string& session, std::int64_t jobId,
                                                 std::int64_t step);

private:
    AuditedTransactions& gate_;
    Scheduler& scheduler_;
};

}  // namespace sealtrain::core
