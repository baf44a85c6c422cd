// The simulated fleet of bench_workers (bench_workers.cpp): its options, what the workers and
// the submitter record (Ledger), one simulated node (SimulatedWorker), what each does one step at
// a time (Fleet), and the bounded pool that runs those steps (StepPool).
#pragma once

#include "control_bench.h"

#include "sealtrain/api/client.h"

#include <fmt/format.h>

#include <pthread.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <queue>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace sealtrain::bench::fleet {

using Clock = std::chrono::steady_clock;
using Milliseconds = std::chrono::milliseconds;
constexpr std::size_t kErrorsShown = 5;

struct Options {
    int workers = 200;
    int seconds = 30;
    double jobsPerSecond = 5.0;
    Milliseconds heartbeat{1000};
    Milliseconds poll{1000};
    Milliseconds job{2000};
    std::chrono::seconds workerTimeout{0};  // 0: six heartbeat intervals, as the daemon's defaults
    int threads = 64;
    int drainSeconds = 60;
    int quietSeconds = 5;
    std::filesystem::path base = std::filesystem::temp_directory_path();
};

inline double millisecondsBetween(Clock::time_point from, Clock::time_point to)
{
    return std::chrono::duration<double, std::milli>(to - from).count();
}

// What the workers and the submitter record: failed calls (counted, the first few kept), the
// moment each job was approved, taken and finished.
class Ledger final {
public:
    void failed(const std::string& what)
    {
        const std::lock_guard guard(lock_);
        ++errors_;
        if (shown_.size() < kErrorsShown)
            shown_.push_back(what);
    }
    // ApproveJob of `job` was sent at `asked` and answered at `answered`.
    void approved(std::int64_t job, Clock::time_point asked, Clock::time_point answered)
    {
        const std::lock_guard guard(lock_);
        approved_[job] = {asked, answered};
    }
    void taken(std::int64_t job, Clock::time_point when)
    {
        const std::lock_guard guard(lock_);
        if (taken_.emplace(job, when).second)
            return;
        ++errors_;
        if (shown_.size() < kErrorsShown)
            shown_.push_back(fmt::format("job {} was dispatched a second time", job));
    }
    void finished(std::int64_t job)
    {
        const std::lock_guard guard(lock_);
        finished_.insert(job);
    }

    [[nodiscard]] std::size_t errors() const
    {
        const std::lock_guard guard(lock_);
        return errors_;
    }
    [[nodiscard]] std::vector<std::string> shown() const
    {
        const std::lock_guard guard(lock_);
        return shown_;
    }
    // Every approved job finished (or none approved).
    [[nodiscard]] bool allFinished() const
    {
        const std::lock_guard guard(lock_);
        return std::all_of(approved_.begin(), approved_.end(),
                           [&](const auto& job) { return finished_.count(job.first) != 0; });
    }

    struct Dispatches {
        std::size_t approved = 0;
        std::size_t dispatched = 0;
        std::size_t finished = 0;
        std::size_t beforeApprovalAnswer = 0;  // taken before the approver had its answer
        std::vector<double> fromAnswerMs;      // 0 for those
        std::vector<double> fromRequestMs;     // from the moment ApproveJob was sent
        std::vector<std::int64_t> approvedJobs;
    };
    [[nodiscard]] Dispatches dispatches() const
    {
        const std::lock_guard guard(lock_);
        Dispatches result;
        result.approved = approved_.size();
        for (const auto& [job, approval] : approved_) {
            result.approvedJobs.push_back(job);
            result.finished += finished_.count(job);
            const auto taken = taken_.find(job);
            if (taken == taken_.end())
                continue;
            ++result.dispatched;
            // The approval and a worker's TakeJob can share one group commit; the TakeJob's
            // answer may then arrive first.
            if (taken->second < approval.second)
                ++result.beforeApprovalAnswer;
            result.fromAnswerMs.push_back(
                std::max(0.0, millisecondsBetween(approval.second, taken->second)));
            result.fromRequestMs.push_back(millisecondsBetween(approval.first, taken->second));
        }
        return result;
    }

private:
    mutable std::mutex lock_;
    std::size_t errors_ = 0;
    std::vector<std::string> shown_;
    std::map<std::int64_t, std::pair<Clock::time_point, Clock::time_point>> approved_;
    std::map<std::int64_t, Clock::time_point> taken_;
    std::set<std::int64_t> finished_;
};

// One call's answer and how long it took.
struct Sample {
    Clock::time_point answered;
    double ms = 0;
};

// One simulated node. Only the pool thread that runs its current step touches it.
struct SimulatedWorker {
    std::string name;
    std::unique_ptr<api::ControlClient> client;
    std::int64_t job = 0;  // the job it holds (0: none)
    std::int64_t attempt = 0;
    Clock::time_point nextBeat;
    Clock::time_point nextPoll;
    Clock::time_point finishAt;
    std::vector<Sample> beats;
    std::vector<Sample> polls;   // TakeJob calls that found no job
    std::vector<Sample> takes;   // TakeJob calls that handed it a job
    std::vector<double> lateMs;  // how late each step started: the pool's own lag

    [[nodiscard]] Clock::time_point due() const
    {
        return std::min(nextBeat, job == 0 ? nextPoll : finishAt);
    }
};

// What every simulated worker does, one step at a time: beat when its beat is due, finish its
// job when its time is up, and poll when it is idle and its poll is due.
class Fleet final {
public:
    Fleet(const Options& options, std::string inventoryJson, Ledger& ledger)
        : options_(options)
        , inventoryJson_(std::move(inventoryJson))
        , ledger_(ledger)
    {
    }

    // Runs what is due of `worker` and returns when its next step is due.
    Clock::time_point step(SimulatedWorker& worker, Clock::time_point due)
    {
        worker.lateMs.push_back(std::max(0.0, millisecondsBetween(due, Clock::now())));
        if (Clock::now() >= worker.nextBeat)
            beat(worker);
        if (worker.job != 0 && Clock::now() >= worker.finishAt)
            finish(worker);
        if (worker.job == 0 && Clock::now() >= worker.nextPoll)
            poll(worker);
        return worker.due();
    }

private:
    void beat(SimulatedWorker& worker)
    {
        const auto before = Clock::now();
        auto answer = worker.client->worker().heartbeat(inventoryJson_, worker.job, worker.attempt);
        const auto after = Clock::now();
        worker.nextBeat = std::max(worker.nextBeat + options_.heartbeat, after);
        if (!answer) {
            ledger_.failed(fmt::format("{}: Heartbeat: {}", worker.name, answer.error().message()));
            return;
        }
        worker.beats.push_back({after, millisecondsBetween(before, after)});
        if (!answer->stopJobs.empty())
            ledger_.failed(fmt::format("{}: Heartbeat told it to stop job {}", worker.name,
                                       answer->stopJobs.front()));
        if (answer->intervalMs != options_.heartbeat.count())
            ledger_.failed(fmt::format("{}: Heartbeat asked for an interval of {} ms", worker.name,
                                       answer->intervalMs));
    }

    void poll(SimulatedWorker& worker)
    {
        const auto before = Clock::now();
        auto taken = worker.client->worker().takeJob();
        const auto after = Clock::now();
        worker.nextPoll = std::max(worker.nextPoll + options_.poll, after);
        if (!taken) {
            ledger_.failed(fmt::format("{}: TakeJob: {}", worker.name, taken.error().message()));
            return;
        }
        if (!*taken) {
            worker.polls.push_back({after, millisecondsBetween(before, after)});
            return;
        }
        worker.takes.push_back({after, millisecondsBetween(before, after)});
        ledger_.taken((*taken)->job, after);
        worker.job = (*taken)->job;
        worker.attempt = (*taken)->attempt;
        worker.finishAt = after + options_.job;
    }

    void finish(SimulatedWorker& worker)
    {
        api::MetricsReport report;
        report.job = worker.job;
        report.attempt = worker.attempt;
        report.metricsLines = {R"({"kind":"step","step":1,"loss":4.25,"tok_per_s":1000.0})"};
        auto stop = worker.client->worker().reportMetrics(report);
        if (!stop)
            ledger_.failed(fmt::format("{}: ReportMetrics of job {}: {}", worker.name, worker.job,
                                       stop.error().message()));
        else if (*stop)
            ledger_.failed(
                fmt::format("{}: ReportMetrics: job {} must stop", worker.name, worker.job));
        auto finished =
            worker.client->worker().finishJob(worker.job, worker.attempt, true, 0.0, "");
        if (!finished)
            ledger_.failed(fmt::format("{}: FinishJob of job {}: {}", worker.name, worker.job,
                                       finished.error().message()));
        else if (finished->state != "succeeded")
            ledger_.failed(
                fmt::format("{}: job {} ended {}", worker.name, worker.job, finished->state));
        ledger_.finished(worker.job);
        worker.job = 0;
        worker.attempt = 0;
        // As sealtrain-worker does: back to TakeJob at once.
        worker.nextPoll = Clock::now();
    }

    const Options& options_;
    std::string inventoryJson_;
    Ledger& ledger_;
};

// A bounded pool that runs the workers' steps: a timer thread hands each worker to the pool when
// its next step is due; `threads` threads run steps. A worker is in the timer's queue or in one
// thread's hands, never both, so its steps never overlap.
class StepPool final {
public:
    using Step = std::function<Clock::time_point(std::size_t worker, Clock::time_point due)>;

    StepPool(int threads, const std::vector<Clock::time_point>& firstDue, Step step)
        : step_(std::move(step))
    {
        for (std::size_t i = 0; i < firstDue.size(); ++i)
            timers_.push({firstDue[i], i});
        timer_ = std::thread([this] { runTimer(); });
        for (int i = 0; i < threads; ++i)
            threads_.emplace_back([this] { runSteps(); });
        clocks_.push_back(clockOf(timer_));
        for (std::thread& thread : threads_)
            clocks_.push_back(clockOf(thread));
    }

    StepPool(const StepPool&) = delete;
    StepPool& operator=(const StepPool&) = delete;

    // CPU seconds its threads have used so far: the part of the simulated workers' calls that runs
    // on the calling thread (gRPC runs the rest of a client's work on threads of its own).
    [[nodiscard]] double cpuSeconds() const
    {
        double total = 0;
        for (const clockid_t clock : clocks_) {
            timespec used{};
            if (clock_gettime(clock, &used) == 0)
                total += static_cast<double>(used.tv_sec) + static_cast<double>(used.tv_nsec) / 1e9;
        }
        return total;
    }

    // Lets the steps under way end, then stops.
    ~StepPool()
    {
        {
            const std::lock_guard guard(lock_);
            stopping_ = true;
        }
        timerWake_.notify_all();
        ready_.notify_all();
        timer_.join();
        for (auto& thread : threads_)
            thread.join();
    }

private:
    using Due = std::pair<Clock::time_point, std::size_t>;

    static clockid_t clockOf(std::thread& thread)
    {
        clockid_t clock{};
        if (pthread_getcpuclockid(thread.native_handle(), &clock) != 0)
            die(Error(ErrorCode::Internal, "Cannot read a thread's CPU clock."));
        return clock;
    }

    void runTimer()
    {
        std::unique_lock guard(lock_);
        while (!stopping_) {
            if (timers_.empty()) {
                timerWake_.wait(guard);
                continue;
            }
            // A copy: the queue may grow, and move its elements, while this thread waits.
            const Clock::time_point next = timers_.top().first;
            if (next > Clock::now()) {
                timerWake_.wait_until(guard, next);
                continue;
            }
            while (!timers_.empty() && timers_.top().first <= Clock::now()) {
                runnable_.push_back(timers_.top());
                timers_.pop();
                ready_.notify_one();
            }
        }
    }

    void runSteps()
    {
        std::unique_lock guard(lock_);
        while (true) {
            ready_.wait(guard, [this] { return stopping_ || !runnable_.empty(); });
            if (stopping_)
                return;
            const Due due = runnable_.front();
            runnable_.pop_front();
            guard.unlock();
            const Clock::time_point next = step_(due.second, due.first);
            guard.lock();
            const bool earliest = timers_.empty() || next < timers_.top().first;
            timers_.push({next, due.second});
            if (earliest)
                timerWake_.notify_one();
        }
    }

    Step step_;
    std::mutex lock_;
    std::condition_variable timerWake_;
    std::condition_variable ready_;
    std::priority_queue<Due, std::vector<Due>, std::greater<>> timers_;
    std::deque<Due> runnable_;
    bool stopping_ = false;
    std::thread timer_;
    std::vector<std::thread> threads_;
    std::vector<clockid_t> clocks_;  // each thread's CPU-time clock
};

}  // namespace sealtrain::bench::fleet
