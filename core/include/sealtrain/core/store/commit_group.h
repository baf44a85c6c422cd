// Group commit (issue #15, docs/operations/control-daemon.md): the calls of many clients share one
// durable transaction, each still failing closed on its own. One committer thread takes every
// call that is waiting, opens one transaction (Database::beginGroup), runs the calls one after
// another, each in its own savepoint through the audited transaction as always (a call that
// fails rolls back its own change alone and its refusal is appended in the group), and COMMITs
// once. Only then does any caller learn its result; when the COMMIT fails, every call of the
// group fails, and the audit log forgets the group's entries (its rollback hook).
//
// The committer holds `exclusive` while it runs a group. Whoever else holds it runs alone between
// groups, in transactions of its own: a call that signs an audit head (an export) or that holds
// the database for long must do so, since a head must never be signed inside a group.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/core/store/database.h"

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace sealtrain::core {

// Runs one step of a call in the control plane's next group commit, the way its server runs
// every call (with the call's origin, answered only once the group committed): the step's own
// result, else the error that kept the group from committing. Core's calls that act in several
// steps, with file work between them (dispatch/handover.h), take one.
using InGroup = std::function<Result<void>(const std::function<Result<void>()>& step)>;

// Runs `step`, which returns a Result<T>, in a group through `inGroup`: its result, else the
// error that kept the group from committing.
template <typename Step>
[[nodiscard]] auto inGroupResult(const InGroup& inGroup, const Step& step) -> decltype(step())
{
    decltype(step()) result = Error(ErrorCode::Internal, "The step did not run; try again.");
    auto committed = inGroup([&]() -> Result<void> {
        result = step();
        return result ? success() : Result<void>(result.error());
    });
    if (!committed)
        return committed.error();
    return result;
}

class CommitGroup final {
public:
    // A call: it runs on the committer thread, inside the group's transaction.
    using Call = std::function<void()>;

    // `database` and `exclusive` must outlive the group. Starts the committer thread.
    CommitGroup(Database& database, std::mutex& exclusive, std::size_t maxCalls = 256);
    CommitGroup(const CommitGroup&) = delete;
    CommitGroup& operator=(const CommitGroup&) = delete;
    // Runs the calls still waiting, then stops the committer.
    ~CommitGroup();

    // Runs `call` in the next group and returns once that group's transaction is over: success
    // when it committed, else the error that kept it from committing (whatever `call` changed is
    // then gone, and what it computed must not be reported as done).
    [[nodiscard]] Result<void> run(Call call);

    // Runs `calls` in one transaction on this thread and returns the outcome of its COMMIT (the
    // committer's step; public for tests). The caller holds `exclusive`.
    [[nodiscard]] static Result<void> runGroup(Database& database, const std::vector<Call>& calls);

private:
    struct Waiting;
    void commitLoop();

    Database& database_;
    std::mutex& exclusive_;
    const std::size_t maxCalls_;
    std::mutex queueLock_;
    std::condition_variable queued_;
    std::deque<Waiting*> queue_;
    bool stopping_ = false;
    std::thread committer_;
};

}  // namespace sealtrain::core
