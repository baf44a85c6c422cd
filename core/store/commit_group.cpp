// Group commit: the committer thread, and one group's transaction.
#include "sealtrain/core/store/commit_group.h"

namespace sealtrain::core {

// A caller waiting for its group: the call, and the group's outcome once it is known.
struct CommitGroup::Waiting {
    Call call;
    bool done = false;
    Result<void> outcome = success();
    std::condition_variable finished;
};

CommitGroup::CommitGroup(Database& database, std::mutex& exclusive, std::size_t maxCalls)
    : database_(database)
    , exclusive_(exclusive)
    , maxCalls_(maxCalls == 0 ? 1 : maxCalls)
    , committer_([this] { commitLoop(); })
{
}

CommitGroup::~CommitGroup()
{
    {
        const std::lock_guard guard(queueLock_);
        stopping_ = true;
    }
    queued_.notify_all();
    committer_.join();
}

Result<void> CommitGroup::run(Call call)
{
    Waiting waiting;
    waiting.call = std::move(call);
    std::unique_lock lock(queueLock_);
    if (stopping_)
        return Error(ErrorCode::Io, "The control plane is stopping; try again later.");
    queue_.push_back(&waiting);
    queued_.notify_one();
    waiting.finished.wait(lock, [&] { return waiting.done; });
    return waiting.outcome;
}

Result<void> CommitGroup::runGroup(Database& database, const std::vector<Call>& calls)
{
    auto group = database.beginGroup();
    if (!group)
        return group.error();
    for (const Call& call : calls)
        call();
    return (*group)->commit();
}

void CommitGroup::commitLoop()
{
    for (;;) {
        std::vector<Waiting*> group;
        {
            std::unique_lock lock(queueLock_);
            queued_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
            if (queue_.empty())
                return;  // stopping, and nobody waits
            while (!queue_.empty() && group.size() < maxCalls_) {
                group.push_back(queue_.front());
                queue_.pop_front();
            }
        }
        std::vector<Call> calls;
        calls.reserve(group.size());
        for (Waiting* waiting : group)
            calls.push_back(std::move(waiting->call));
        Result<void> outcome = success();
        {
            const std::lock_guard exclusive(exclusive_);
            outcome = runGroup(database_, calls);
        }
        // Only now, with the COMMIT returned, does any caller learn its result.
        const std::lock_guard lock(queueLock_);
        for (Waiting* waiting : group) {
            waiting->outcome = outcome;
            waiting->done = true;
            waiting->finished.notify_one();
        }
    }
}

}  // namespace sealtrain::core
