// The attempt a worker runs (worker.cpp): what the trainer's output relay, the reporter and the
// heartbeat share. Not installed.
#pragma once

#include "sealtrain/api/client.h"
#include "sealtrain/worker/identity.h"
#include "sealtrain/worker/launch.h"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <filesystem>
#include <mutex>
#include <string>
#include <utility>

namespace sealtrain::worker {

// Everything about the attempt being run, shared by the trainer's output relay, the reporter
// and the heartbeat.
struct Attempt {
    api::JobAssignment assignment;
    std::mutex lock;
    std::deque<std::string> metrics;  // not yet acknowledged
    std::deque<std::string> logs;
    std::int64_t firstLog = 1;  // the number of logs.front()
    std::int64_t nextLog = 1;
    std::deque<std::pair<std::filesystem::path, std::filesystem::path>> checkpoints;
    LaunchControl control;            // stops the trainer's ranks, however they were launched
    std::atomic<bool> stop{false};    // the control plane said to stop (cancel, budget)
    std::atomic<bool> fenced{false};  // the attempt is no longer this worker's
    std::atomic<bool> stoppedForExit{false};
    bool reportFailing = false;  // the last report was not taken (flush's alone)
    std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();

    void log(const std::string& line)
    {
        say(fmt::format("job {}: {}", assignment.job, line));
        const std::lock_guard guard(lock);
        logs.push_back(line);
        ++nextLog;
    }

    [[nodiscard]] double gpuHours() const
    {
        const double hours = std::chrono::duration<double, std::ratio<3600>>(
                                 std::chrono::steady_clock::now() - started)
                                 .count();
        return hours * static_cast<double>(assignment.chargedGpus);
    }

    void stopTrainer() { control.stop(); }

    // The control plane gave the attempt up (the worker was presumed lost, or revoked): nothing
    // more of it is taken, so the trainer is stopped rather than left to train for nobody.
    void fence()
    {
        if (fenced.exchange(true))
            return;
        say(fmt::format("job {}: the control plane gave attempt {} up; stopping the trainer",
                        assignment.job, assignment.attempt));
        stopTrainer();
    }

    // The control plane ended the job (cancelled, or over a limit) while the attempt is still
    // this worker's: the trainer stops, and the attempt is finished as stopped.
    void stopForControlPlane()
    {
        if (stop.exchange(true))
            return;
        log("the control plane stopped this job; stopping the trainer");
        stopTrainer();
    }
};

}  // namespace sealtrain::worker
