// sealtrain-worker (worker.h): the run loop (enrolment and the identity it writes: identity.cpp).
#include "sealtrain/worker/worker.h"

#include "attempt.h"
#include "sealtrain/worker/identity.h"

#include "sealtrain/worker/launch.h"

#include "sealtrain/api/client.h"
#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/random.h"
#include "sealtrain/crypto/sealed_box.h"
#include "sealtrain/crypto/secret_bytes.h"
#include "sealtrain/crypto/signing.h"
#include "sealtrain/formats/trainer_keys.h"
#include "sealtrain/node/inventory.h"
#include "sealtrain/node/trainer_launcher.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace sealtrain::worker {
namespace {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr auto kPollInterval = std::chrono::seconds(2);
constexpr auto kReportInterval = std::chrono::seconds(1);
constexpr auto kStopGrace = std::chrono::seconds(10);
// Failed beats in a row, each over a new connection, at which the control plane answered without
// a certificate and refused this worker's: then it was revoked (or its certificate expired).
constexpr int kRefusalsToStop = 3;

std::atomic<bool> gTerminate{false};

extern "C" void onTerminate(int /*signal*/)
{
    gTerminate.store(true);
}

// Sleeps up to `duration`, waking at once on SIGTERM.
void pause(std::chrono::milliseconds duration)
{
    const auto until = Clock::now() + duration;
    while (!gTerminate.load() && Clock::now() < until)
        std::this_thread::sleep_for(std::min<std::chrono::milliseconds>(
            std::chrono::milliseconds(100),
            std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now())));
}

// The control plane says the attempt is no longer this worker's (fencing), or it may not run it.
bool isFenced(const Error& error)
{
    return error.code() == ErrorCode::PermissionDenied;
}

class Runner {
public:
    Runner(const RunOptions& options, Identity identity, std::unique_ptr<api::ControlClient> client)
        : options_(options)
        , identity_(std::move(identity))
        , client_(std::move(client))
        , inventory_(node::workerInventoryJson(probeInventory(options.interconnectEncrypted)))
    {
    }

    // The channel in use; a call holds its own reference, so that reconnect() may replace the
    // channel meanwhile.
    [[nodiscard]] std::shared_ptr<api::ControlClient> client()
    {
        const std::lock_guard guard(clientLock_);
        return client_;
    }

    int run()
    {
        const std::string serving = fmt::format("worker {} (pool {}) serving {}", identity_.worker,
                                                identity_.pool, identity_.endpoint.address);
        say(serving);
        if (options_.onReady)
            options_.onReady(serving);
        std::jthread heartbeat([this](const std::stop_token& stop) { beat(stop); });
        auto idleSince = Clock::now();
        std::chrono::milliseconds backoff(500);
        while (!gTerminate.load()) {
            {
                // Not while a beat that says "no job" is on its way: the control plane would take
                // it, answered after this dispatch, as this worker giving the new job back.
                const std::lock_guard guard(beatLock_);
                currentJob_.store(-1);
            }
            auto taken = client()->worker().takeJob();
            if (!taken) {
                currentJob_.store(0);
                // Refused at the handshake (revoked or expired): the heartbeat decides, after a
                // few refusals in a row, that the worker is refused for good; until then this is
                // retried like a control plane that is away.
                if (taken.error().code() == ErrorCode::Unauthenticated
                    && !client()->worker().certificateRefused()) {
                    say(taken.error().message());
                    return 1;
                }
                if (taken.error().code() == ErrorCode::PermissionDenied) {
                    refused(taken.error());
                    break;
                }
                say(fmt::format("{} (retrying in {} ms)", taken.error().message(),
                                backoff.count()));
                pause(backoff);
                backoff = std::min<std::chrono::milliseconds>(backoff * 2, options_.maxBackoff);
                continue;
            }
            backoff = std::chrono::milliseconds(500);
            if (!*taken) {
                currentJob_.store(0);
                if (!options_.idleCommand.empty()
                    && Clock::now() - idleSince > options_.idleAfter) {
                    say(fmt::format("idle for {:.2f} minutes: running the idle command",
                                    static_cast<double>(options_.idleAfter.count()) / 60'000.0));
                    const int status = std::system(options_.idleCommand.c_str());
                    say(fmt::format("the idle command ended with status {}", status));
                    idleSince = Clock::now();
                }
                pause(kPollInterval);
                continue;
            }
            runAttempt(std::move(**taken));
            idleSince = Clock::now();
            if (options_.once)
                break;
        }
        currentJob_.store(0);
        if (refused_.load())
            return kExitRefused;
        // A last beat saying this worker holds no job: the control plane queues it again at once.
        (void)client()->worker().heartbeat(inventory_, 0, 0);
        return 0;
    }

private:
    // How long a beat may wait for its answer: two intervals (at least 1 s, at most 30 s). The
    // control plane gives a job away after --worker-timeout without a beat (six intervals by
    // default); a beat stuck on a connection that stopped forwarding fails well before, and the
    // next one goes over a new connection.
    static std::chrono::milliseconds beatTimeout(std::chrono::milliseconds interval)
    {
        return std::clamp<std::chrono::milliseconds>(2 * interval, std::chrono::seconds(1),
                                                     std::chrono::seconds(30));
    }

    // The heartbeat loop turns (systemd's watchdog, RunOptions::onAlive): at each beat, whose
    // call waits at most 30 s, and every 50 ms between beats, so a long --heartbeat-ms on the
    // control plane does not make a healthy worker look stuck.
    void alive() const
    {
        if (options_.onAlive)
            options_.onAlive();
    }

    void beat(const std::stop_token& stop)
    {
        bool reachable = true;
        int refusals = 0;  // failed beats in a row at which the certificate was refused
        std::chrono::milliseconds interval(5000);
        while (!stop.stop_requested()) {
            alive();
            auto answer = [&] {
                const std::lock_guard guard(beatLock_);
                return client()->worker().heartbeat(inventory_, currentJob_.load(),
                                                    currentAttempt_.load(), beatTimeout(interval));
            }();
            if (answer) {
                if (!reachable)
                    say("the control plane answers again");
                reachable = true;
                refusals = 0;
                if (answer->intervalMs > 0)
                    interval = std::chrono::milliseconds(answer->intervalMs);
                for (const std::int64_t stopJob : answer->stopJobs)
                    requestStop(stopJob);
            } else if (answer.error().code() == ErrorCode::PermissionDenied) {
                refused(answer.error());
                return;
            } else {
                if (reachable)
                    say(fmt::format("heartbeat failed: {} (retrying)", answer.error().message()));
                reachable = false;
                // Unauthenticated: the client library already found the certificate refused at
                // the handshake (api/client_state.h); counted like the others all the same.
                if (answer.error().code() == ErrorCode::Io
                    || answer.error().code() == ErrorCode::Unauthenticated) {
                    reconnect();
                    // Revoked while its connection was down (or expired): each new handshake
                    // is refused. Told apart from a control plane that is away by asking
                    // without a certificate, three failed beats in a row.
                    refusals = client()->worker().certificateRefused() ? refusals + 1 : 0;
                    if (refusals >= kRefusalsToStop) {
                        refused(Error(ErrorCode::PermissionDenied,
                                      "The control plane answers but refuses this worker's "
                                      "certificate at the handshake: the worker was revoked or "
                                      "its certificate expired; enroll the node again "
                                      "(docs/operations/workers.md)."));
                        return;
                    }
                }
            }
            const auto until = Clock::now() + interval;
            while (!stop.stop_requested() && Clock::now() < until) {
                if (gTerminate.load())
                    stopForExit();
                alive();
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
            }
        }
    }

    // SIGTERM: the trainer is stopped too (the attempt is given back by the last beat).
    void stopForExit()
    {
        const std::lock_guard guard(attemptLock_);
        if (attempt_ != nullptr && attempt_->control.running()
            && !attempt_->stoppedForExit.exchange(true)) {
            say(fmt::format("job {}: stopping the trainer (the worker is stopping)",
                            attempt_->assignment.job));
            attempt_->stopTrainer();
        }
    }

    void requestStop(std::int64_t job)
    {
        const std::lock_guard guard(attemptLock_);
        if (attempt_ != nullptr && attempt_->assignment.job == job)
            attempt_->stopForControlPlane();
    }

    // A new channel to the control plane. Once a connection attempt failed (the control plane
    // restarting, a connection cut), gRPC's channel may wait long before it tries again (more
    // than 10 s with gRPC 1.51), longer than the control plane waits for a heartbeat before it
    // gives the job to another worker; a new channel connects at its first call.
    void reconnect()
    {
        auto fresh = api::ControlClient::connect(identity_.endpoint, &identity_.tls);
        if (!fresh)
            return;
        const std::lock_guard guard(clientLock_);
        client_ = std::move(fresh).value();
    }

    // The control plane refuses this worker's own calls: it was revoked. Its job is already
    // queued for another worker; it stops the trainer and exits.
    void refused(const Error& error)
    {
        if (refused_.exchange(true))
            return;
        say(fmt::format("{} Stopping.", error.message()));
        gTerminate.store(true);
        const std::lock_guard guard(attemptLock_);
        if (attempt_ != nullptr)
            attempt_->fence();
    }

    // Whether the control plane ended the job while the attempt is still this worker's (a call
    // of the attempt that is refused is either that or fencing): asked with an empty report,
    // which it takes for an ended job and refuses for a fenced attempt.
    bool jobStopped(Attempt& attempt)
    {
        if (attempt.stop.load())
            return true;
        api::MetricsReport report;
        report.job = attempt.assignment.job;
        report.attempt = attempt.assignment.attempt;
        report.gpuHours = attempt.gpuHours();
        auto stop = client()->worker().reportMetrics(report);
        if (!stop || !*stop)
            return false;
        attempt.stopForControlPlane();
        return true;
    }

    // The dataset's sealed files, fetched once per dataset and kept.
    Result<std::filesystem::path> datasetFolder(Attempt& attempt)
    {
        const std::string& id = attempt.assignment.datasetId;
        const std::string name = id.rfind("sha256:", 0) == 0 ? id.substr(7) : id;
        const auto folder = options_.dir / "datasets" / name;
        std::error_code ec;
        if (std::filesystem::exists(folder / "manifest.json", ec))
            return folder;
        const auto incoming =
            options_.dir / "datasets" / (".incoming-" + toHex(crypto::randomBytes(6)));
        std::filesystem::create_directories(incoming, ec);
        auto files = client()->worker().fetchDataset(attempt.assignment.job,
                                                     attempt.assignment.attempt, incoming);
        if (!files) {
            std::filesystem::remove_all(incoming, ec);
            return files.error();
        }
        std::filesystem::rename(incoming, folder, ec);
        if (ec) {
            std::filesystem::remove_all(incoming, ec);
            if (!std::filesystem::exists(folder / "manifest.json", ec))
                return Error(ErrorCode::Io,
                             fmt::format("Cannot keep the dataset in '{}'; check the worker "
                                         "folder's free space.",
                                         folder.string()));
        }
        attempt.log(fmt::format("fetched dataset {} ({} files)", id, files->size()));
        return folder;
    }

    // Retries `call` with back-off until it succeeds, is fenced, or the worker is stopping.
    template <typename Call>
    auto retry(Attempt& attempt, const char* what, const Call& call) -> decltype(call())
    {
        std::chrono::milliseconds backoff(250);
        for (;;) {
            auto result = call();
            if (result || isFenced(result.error()) || gTerminate.load()
                || result.error().code() == ErrorCode::InvalidArgument
                || result.error().code() == ErrorCode::Integrity
                || result.error().code() == ErrorCode::Unauthenticated) {
                if (!result && isFenced(result.error()))
                    attempt.fence();
                return result;
            }
            say(fmt::format("job {}: {} failed: {} (retrying in {} ms)", attempt.assignment.job,
                            what, result.error().message(), backoff.count()));
            pause(backoff);
            backoff = std::min<std::chrono::milliseconds>(backoff * 2, options_.maxBackoff);
        }
    }

    // Sends what is buffered: metrics and log lines, then checkpoints in order. Returns false
    // when something is still waiting.
    bool flush(Attempt& attempt)
    {
        api::MetricsReport report;
        // Only the checkpoints queued by now are uploaded after this report: the lines of their
        // steps are then acknowledged before they are. Otherwise a worker lost right after an
        // upload would leave steps that nobody reported and that the attempt resuming from that
        // checkpoint does not train again.
        std::size_t covered = 0;
        {
            const std::lock_guard guard(attempt.lock);
            report.metricsLines.assign(attempt.metrics.begin(), attempt.metrics.end());
            report.logLines.assign(attempt.logs.begin(), attempt.logs.end());
            report.firstLogLine = attempt.firstLog;
            covered = attempt.checkpoints.size();
        }
        report.job = attempt.assignment.job;
        report.attempt = attempt.assignment.attempt;
        report.gpuHours = attempt.gpuHours();
        auto sent = client()->worker().reportMetrics(report);
        if (!sent) {
            if (isFenced(sent.error())) {
                attempt.fence();
            } else if (!attempt.reportFailing) {
                attempt.reportFailing = true;
                say(fmt::format("job {}: the control plane did not take the metrics ({}); they "
                                "are kept and sent again",
                                attempt.assignment.job, sent.error().message()));
            }
            return false;
        }
        if (attempt.reportFailing) {
            attempt.reportFailing = false;
            say(fmt::format("job {}: the metrics kept meanwhile are sent ({} lines)",
                            attempt.assignment.job, report.metricsLines.size()));
        }
        {
            const std::lock_guard guard(attempt.lock);
            attempt.metrics.erase(attempt.metrics.begin(),
                                  attempt.metrics.begin()
                                      + static_cast<std::ptrdiff_t>(report.metricsLines.size()));
            attempt.logs.erase(attempt.logs.begin(),
                               attempt.logs.begin()
                                   + static_cast<std::ptrdiff_t>(report.logLines.size()));
            attempt.firstLog += static_cast<std::int64_t>(report.logLines.size());
        }
        if (*sent)
            attempt.stopForControlPlane();
        for (std::size_t taken = 0; taken < covered; ++taken) {
            std::pair<std::filesystem::path, std::filesystem::path> next;
            {
                const std::lock_guard guard(attempt.lock);
                if (attempt.checkpoints.empty())
                    break;
                next = attempt.checkpoints.front();
            }
            auto uploaded = client()->worker().uploadCheckpoint(
                attempt.assignment.job, attempt.assignment.attempt, next.first, next.second);
            if (!uploaded) {
                if (isFenced(uploaded.error()) && jobStopped(attempt)) {
                    // An ended job takes no more checkpoints; the attempt is still finished.
                    attempt.log(fmt::format("checkpoint {} not taken: the job was stopped",
                                            next.first.filename().string()));
                    const std::lock_guard guard(attempt.lock);
                    attempt.checkpoints.pop_front();
                    continue;
                }
                if (isFenced(uploaded.error()))
                    attempt.fence();
                else if (uploaded.error().code() == ErrorCode::Integrity
                         || uploaded.error().code() == ErrorCode::Unauthenticated
                         || uploaded.error().code() == ErrorCode::InvalidArgument) {
                    attempt.log(fmt::format("the control plane refused checkpoint {}: {}",
                                            next.first.filename().string(),
                                            uploaded.error().message()));
                    attempt.stop.store(true);
                    attempt.stopTrainer();
                    const std::lock_guard guard(attempt.lock);
                    attempt.checkpoints.pop_front();
                    continue;
                }
                return false;
            }
            attempt.log(fmt::format("checkpoint of step {} uploaded and recorded (sha256 {})",
                                    uploaded->step, uploaded->sealedSha256));
            std::error_code ec;
            std::filesystem::remove(next.first, ec);
            std::filesystem::remove(next.second, ec);
            const std::lock_guard guard(attempt.lock);
            attempt.checkpoints.pop_front();
        }
        const std::lock_guard guard(attempt.lock);
        return attempt.metrics.empty() && attempt.logs.empty() && attempt.checkpoints.empty();
    }

    void onTrainerLine(Attempt& attempt, std::string_view line, const std::filesystem::path& held)
    {
        if (!line.empty() && line.back() == '\n')
            line.remove_suffix(1);
        const Json json = Json::parse(line, nullptr, false);
        if (!json.is_object() || !json.contains("kind")) {
            attempt.log(std::string(line));
            return;
        }
        if (json["kind"] == "checkpoint" && json.contains("file") && json["file"].is_string()) {
            // Held under a second name at once: the trainer prunes old checkpoints, and this one
            // must stay until the control plane has it.
            const std::filesystem::path sealed = json["file"].get<std::string>();
            std::filesystem::path envelope = sealed;
            envelope.replace_extension(".dsse.json");
            std::error_code ec;
            std::filesystem::create_directories(held, ec);
            const auto heldSealed = held / sealed.filename();
            const auto heldEnvelope = held / envelope.filename();
            std::filesystem::create_hard_link(sealed, heldSealed, ec);
            if (!ec)
                std::filesystem::create_hard_link(envelope, heldEnvelope, ec);
            const std::lock_guard guard(attempt.lock);
            // The line first: a report that covers the checkpoint (flush) covers its line too.
            attempt.metrics.emplace_back(line);
            if (ec)
                attempt.logs.push_back(fmt::format("could not hold checkpoint {}: {}",
                                                   sealed.filename().string(), ec.message()));
            else
                attempt.checkpoints.emplace_back(heldSealed, heldEnvelope);
            return;
        }
        const std::lock_guard guard(attempt.lock);
        attempt.metrics.emplace_back(line);
    }

    void runAttempt(api::JobAssignment assignment)
    {
        auto attempt = std::make_shared<Attempt>();
        attempt->assignment = std::move(assignment);
        const std::int64_t job = attempt->assignment.job;
        {
            const std::lock_guard guard(attemptLock_);
            attempt_ = attempt;
        }
        currentAttempt_.store(attempt->assignment.attempt);
        currentJob_.store(job);
        attempt->log(fmt::format("attempt {} on worker {}{}", attempt->assignment.attempt,
                                 identity_.worker, attempt->assignment.resume ? ", resuming" : ""));
        std::jthread reporter([this, attempt](const std::stop_token& stop) {
            while (!stop.stop_requested() && !attempt->fenced.load()) {
                (void)flush(*attempt);
                const auto until = Clock::now() + kReportInterval;
                while (!stop.stop_requested() && Clock::now() < until)
                    std::this_thread::sleep_for(std::chrono::milliseconds(50));
            }
        });
        auto outcome = train(*attempt);
        reporter.request_stop();
        reporter.join();
        // Everything the trainer said, and every checkpoint, reaches the control plane before the
        // attempt ends there.
        std::chrono::milliseconds backoff(250);
        while (!attempt->fenced.load() && !flush(*attempt)) {
            if (gTerminate.load())
                break;
            pause(backoff);
            backoff = std::min<std::chrono::milliseconds>(backoff * 2, options_.maxBackoff);
        }
        if (!attempt->fenced.load() && !gTerminate.load()) {
            const bool succeeded = outcome && !attempt->stop.load();
            const std::string reason =
                outcome ? (attempt->stop.load() ? "stopped by the control plane" : "")
                        : outcome.error().message();
            auto finished = retry(*attempt, "finishing the attempt", [&] {
                return client()->worker().finishJob(job, attempt->assignment.attempt, succeeded,
                                                    attempt->gpuHours(), reason);
            });
            if (finished)
                say(fmt::format("job {}: attempt {} ended, job {}", job,
                                attempt->assignment.attempt, finished->state));
            else
                say(fmt::format("job {}: {}", job, finished.error().message()));
        } else if (attempt->fenced.load()) {
            say(fmt::format("job {}: attempt {} is no longer this worker's; dropped", job,
                            attempt->assignment.attempt));
        }
        std::error_code ec;
        std::filesystem::remove_all(options_.dir / "jobs" / std::to_string(job), ec);
        const std::lock_guard guard(attemptLock_);
        attempt_.reset();
        currentJob_.store(0);
        currentAttempt_.store(0);
    }

    // The trainer's run for this attempt: Ok when it exited 0.
    Result<void> train(Attempt& attempt)
    {
        const api::JobAssignment& a = attempt.assignment;
        auto dataset =
            retry(attempt, "fetching the dataset", [&] { return datasetFolder(attempt); });
        if (!dataset)
            return dataset.error();
        const auto folder = options_.dir / "jobs" / std::to_string(a.job);
        const auto out = folder / "out";
        const auto held = folder / "upload";
        std::error_code ec;
        std::filesystem::remove_all(folder, ec);
        std::filesystem::create_directories(out, ec);
        std::filesystem::create_directories(held, ec);
        std::filesystem::permissions(folder, std::filesystem::perms::owner_all, ec);
        const auto signer = folder / "manifests.pub.pem";
        SEALTRAIN_TRY(writePublic(signer, a.manifestsPublicKeyPem));
        if (a.resume) {
            auto fetched = retry(attempt, "fetching the checkpoint to resume from", [&] {
                return client()->worker().fetchCheckpoint(a.job, a.attempt, out);
            });
            if (!fetched)
                return fetched.error();
            attempt.log(fmt::format("resuming from {}", fetched->front().filename().string()));
        }
        // A fine-tuning job's starting model (the trainer reads it only when not resuming).
        const auto base = folder / "base";
        std::filesystem::path baseModel;
        if (a.startsFromModel) {
            std::filesystem::create_directories(base, ec);
            auto fetched = retry(attempt, "fetching the model to start from", [&] {
                return client()->worker().fetchInitModel(a.job, a.attempt, base);
            });
            if (!fetched)
                return fetched.error();
            if (fetched->size() != 1)
                return Error(ErrorCode::Integrity,
                             "The control plane sent other than one file as the model to start "
                             "from; the job is not started.");
            baseModel = fetched->front();
            if (!a.resume)
                attempt.log("starting from the job's base model");
        }
        // The job's keys, opened in memory, with this worker's signing key added.
        auto opened = crypto::openSealedBox(*identity_.box, a.sealedKeys);
        if (!opened)
            return opened.error().withContext("Cannot open the job's keys");
        auto keys = trainer::addSigningKey(opened->bytes(), identity_.signingKeyPem.bytes());
        opened->wipe();
        if (!keys)
            return keys.error().withContext("Cannot hand the trainer its keys");

        std::vector<std::string> arguments = a.trainerArguments;
        arguments.insert(arguments.end(), {"--dataset", dataset->string(), "--dataset-signer",
                                           signer.string(), "--out", out.string()});
        if (a.resume)
            arguments.insert(arguments.end(), {"--resume", "latest"});
        if (a.startsFromModel)
            arguments.insert(arguments.end(), {"--init-from", baseModel.string()});
        if (gTerminate.load())
            return Error(ErrorCode::Io, "The worker is stopping; the trainer was not started.");
        // One rank per GPU (or the job's CPU ranks) on each of its nodes. On Slurm the worker's
        // signing key signs what carries the keys to the nodes.
        std::optional<crypto::SigningKey> bundleSigner;
        if (options_.launch.launcher == Launcher::Slurm) {
            auto key = crypto::SigningKey::fromPrivatePem(
                {reinterpret_cast<const char*>(identity_.signingKeyPem.bytes().data()),
                 identity_.signingKeyPem.size()});
            if (!key)
                return key.error();
            bundleSigner.emplace(std::move(key).value());
        }
        const TrainerRun ranks{options_.trainer,
                               arguments,
                               std::max<std::int64_t>(1, a.nodes),
                               std::max<std::int64_t>(1, a.ranksPerNode),
                               folder,
                               bundleSigner ? &*bundleSigner : nullptr};
        attempt.started = Clock::now();
        auto status =
            launchTrainer(options_.launch, ranks, std::move(keys).value(), attempt.control,
                          [&](std::string_view line) { onTrainerLine(attempt, line, held); });
        if (!status)
            return status.error();
        attempt.log(fmt::format("the trainer exited with status {}", *status));
        if (*status != 0)
            return Error(ErrorCode::Internal,
                         fmt::format("The trainer stopped with exit status {}; its last lines "
                                     "are in the job's logs (sealtrainctl job logs).",
                                     *status));
        return success();
    }

    RunOptions options_;
    Identity identity_;
    std::mutex clientLock_;
    std::shared_ptr<api::ControlClient> client_;
    std::mutex beatLock_;  // held by a heartbeat in flight
    std::atomic<bool> refused_{false};
    std::string inventory_;
    std::atomic<std::int64_t> currentJob_{0};
    std::atomic<std::int64_t> currentAttempt_{0};
    std::mutex attemptLock_;
    std::shared_ptr<Attempt> attempt_;
};

}  // namespace

int run(const RunOptions& options)
{
    struct sigaction action {};
    action.sa_handler = onTerminate;
    ::sigaction(SIGTERM, &action, nullptr);
    ::sigaction(SIGINT, &action, nullptr);
    auto identity = loadIdentity(options.dir);
    if (!identity) {
        say(identity.error().message());
        return 1;
    }
    std::error_code ec;
    if (options.trainer.empty() || !std::filesystem::exists(options.trainer, ec)) {
        say(fmt::format("There is no trainer at '{}'; give the path of sealtrain-train with "
                        "--trainer.",
                        options.trainer.string()));
        return 1;
    }
    auto client = api::ControlClient::connect(identity->endpoint, &identity->tls);
    if (!client) {
        say(client.error().message());
        return 1;
    }
    Runner runner(options, std::move(identity).value(), std::move(client).value());
    return runner.run();
}

}  // namespace sealtrain::worker
