// Faults of the worker path with real processes (issue #16): sealtrain-control, sealtrain-worker
// and sealtrain-train, each a process of its own, on small CPU jobs with short timings (beats
// every 300 ms, a worker silent for 3 s loses its job).
//   - a worker SIGKILLed mid-run: its job is queued again and a second worker resumes it from
//     the newest verified checkpoint; the final parameters are bit-identical to an uninterrupted
//     run of the same spec;
//   - the control plane SIGKILLed mid-run and started again: the worker keeps training, keeps what
//     it could not send and sends it once it is answered again; every step's metrics are there
//     once and every checkpoint is in the audit log;
//   - the worker's connection cut by a proxy in this test: the same;
//   - a worker revoked while it runs a job: its calls are refused, a new handshake with its
//     certificate too, and its job finishes on another worker;
//   - a running job cancelled by its submitter: the worker stops the trainer;
//   - SIGTERM to a worker mid-run: it stops the trainer and gives the job back at once.
// The audit log and the checkpoints are read in-process once the daemon has stopped.
#include "daemon_fixture.h"
#include "sealtrain/core/jobs/scheduling/scheduler.h"
#include "sealtrain/core/keys/key_release.h"
#include "sealtrain/core/workers/workers.h"
#include "sealtrain/crypto/certificate_authority.h"
#include "sealtrain/crypto/signing.h"
#include "sealtrain/formats/checkpoint.h"
#include "sealtrain/formats/trainer_keys.h"

#include <QtTest/QtTest>
#include <fmt/format.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <future>
#include <list>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <thread>

using namespace sealtrain;
using namespace std::chrono_literals;

namespace {

// Long enough that a fault lands mid-run on a loaded 2-core machine, short enough for the suite.
constexpr int kSteps = 600;
constexpr int kCheckpointEvery = 50;
QStringList daemonTimings()
{
    return {"--heartbeat-ms", "300", "--worker-timeout", "3"};
}
// What the worker logs when a report is not taken, and when what it kept is sent.
constexpr const char* kMetricsKept = "they are kept and sent again";
constexpr const char* kMetricsSent = "the metrics kept meanwhile are sent";
// sealtrain-worker's exit status when the control plane refuses it
// (worker/include/sealtrain/worker/worker.h).
constexpr int kExitRefused = 3;

// The same spec for every job but its name: the killed and the uninterrupted run differ in
// nothing that decides the numbers.
std::string jobSpec(const std::string& name, int steps = kSteps)
{
    return fmt::format("spec_version: 1\n"
                       "name: {}\n"
                       "project: demo\n"
                       "dataset: corpus\n"
                       "model: {{layers: 2, heads: 2, width: 64, context: 64}}\n"
                       "optimizer: {{lr: 0.003, min_lr: 0.0003, warmup: 10}}\n"
                       "schedule: {{steps: {}, batch: 8}}\n"
                       "checkpoints: {{every: {}, keep: 2}}\n"
                       "resources: {{pool: cpu, device: cpu, threads: 1}}\n"
                       "limits: {{max_restarts: 2}}\n",
                       name, steps, kCheckpointEvery);
}

std::string readText(const std::filesystem::path& path)
{
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Polls `done` every 100 ms (Qt events run meanwhile) until it holds or `limit` has passed.
template <typename Predicate>
bool waitUntil(const Predicate& done, std::chrono::milliseconds limit)
{
    const auto until = std::chrono::steady_clock::now() + limit;
    while (!done()) {
        if (std::chrono::steady_clock::now() > until)
            return false;
        QTest::qWait(100);
    }
    return true;
}

// The sealtrain-train processes working in `folder` (a worker's): their command lines name it.
std::vector<pid_t> trainersIn(const std::filesystem::path& folder)
{
    std::vector<pid_t> pids;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
        const std::string name = entry.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos)
            continue;
        // argv[0] is the trainer (not the worker, whose --trainer argument names it too).
        const std::string line = readText(entry.path() / "cmdline");
        const std::string program = line.substr(0, line.find('\0'));
        if (std::filesystem::path(program).filename() == "sealtrain-train"
            && line.find(folder.string()) != std::string::npos)
            pids.push_back(static_cast<pid_t>(std::stol(name)));
    }
    return pids;
}

// Why the job's metrics are not one "step" line for each step 1..steps ("" when they are).
std::string stepsProblem(const std::vector<std::string>& lines, int steps)
{
    std::map<std::int64_t, int> seen;
    for (const std::string& line : lines) {
        const QJsonObject json = QJsonDocument::fromJson(QByteArray::fromStdString(line)).object();
        if (json.value("kind").toString() == "step")
            ++seen[static_cast<std::int64_t>(json.value("step").toInteger())];
    }
    for (int step = 1; step <= steps; ++step) {
        if (seen[step] != 1)
            return fmt::format("step {} is there {} times", step, seen[step]);
    }
    if (seen.size() != static_cast<std::size_t>(steps))
        return fmt::format("{} steps are there, not {}", seen.size(), steps);
    return {};
}

// A TCP forwarder on 127.0.0.1 between workers and the daemon: every accepted connection is
// joined to a new one to the daemon's port, and a thread copies the bytes both ways. cut()
// closes every connection and, until restore(), closes each new one as soon as it is accepted.
// stall() stops the connections open now without closing them (a link that went dead without a
// reset: nothing moves and nothing says so); new ones are forwarded. A stall holds from the moment
// stall() returns: no byte read after it is passed on (a copy in progress finishes first).
class CuttingProxy {
public:
    explicit CuttingProxy(int target)
        : target_(target)
    {
        listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t size = sizeof(address);
        if (listener_ < 0 || ::bind(listener_, reinterpret_cast<sockaddr*>(&address), size) != 0
            || ::listen(listener_, 64) != 0
            || ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &size) != 0)
            qFatal("the proxy can not listen: %s", std::strerror(errno));
        port_ = ntohs(address.sin_port);
        acceptor_ = std::thread([this] { acceptLoop(); });
    }

    CuttingProxy(const CuttingProxy&) = delete;
    CuttingProxy& operator=(const CuttingProxy&) = delete;

    ~CuttingProxy()
    {
        stopping_.store(true);
        acceptor_.join();
        cut();
        for (std::thread& thread : threads_)
            thread.join();
        ::close(listener_);
    }

    [[nodiscard]] std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
    void setTarget(int port) { target_.store(port); }
    [[nodiscard]] int refused() const { return refused_.load(); }

    void cut()
    {
        cutting_.store(true);
        const std::lock_guard guard(lock_);
        for (const auto& [client, server] : open_) {
            ::shutdown(client, SHUT_RDWR);
            ::shutdown(server, SHUT_RDWR);
        }
    }

    void restore()
    {
        cutting_.store(false);
        stallBelow_.store(0);
    }

    void stall()
    {
        const std::unique_lock copies(copying_);
        stallBelow_.store(nextConnection_.load());
    }

private:
    void acceptLoop()
    {
        while (!stopping_.load()) {
            pollfd waiting{listener_, POLLIN, 0};
            if (::poll(&waiting, 1, 100) <= 0)
                continue;
            const int client = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
            if (client < 0)
                continue;
            if (cutting_.load()) {
                ::close(client);
                ++refused_;
                continue;
            }
            const int server = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
            sockaddr_in address{};
            address.sin_family = AF_INET;
            address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            address.sin_port = htons(static_cast<std::uint16_t>(target_.load()));
            if (server < 0
                || ::connect(server, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
                ::close(client);
                if (server >= 0)
                    ::close(server);
                continue;
            }
            const std::lock_guard guard(lock_);
            open_.emplace_back(client, server);
            const int index = nextConnection_++;
            threads_.emplace_back(
                [this, client, server, index] { forward(client, server, index); });
        }
    }

    // Copies bytes both ways until either side ends or the proxy cuts the connection; copies
    // nothing while the connection is stalled.
    void forward(int client, int server, int index)
    {
        std::array<char, 1 << 16> buffer{};
        std::array<pollfd, 2> ends{pollfd{client, POLLIN, 0}, pollfd{server, POLLIN, 0}};
        bool open = true;
        while (open && !stopping_.load()) {
            if (index < stallBelow_.load()) {
                if (cutting_.load())
                    break;
                std::this_thread::sleep_for(50ms);
                continue;
            }
            const int ready = ::poll(ends.data(), ends.size(), 100);
            if (ready < 0)
                break;
            // Bytes that arrived while poll waited are not passed on once stall() has returned.
            const std::shared_lock copy(copying_);
            if (index < stallBelow_.load())
                continue;
            for (std::size_t i = 0; ready > 0 && i < ends.size() && open; ++i) {
                if (ends[i].revents == 0)
                    continue;
                const ssize_t got = ::read(ends[i].fd, buffer.data(), buffer.size());
                if (got <= 0) {
                    open = false;
                    break;
                }
                const int to = ends[1 - i].fd;
                for (ssize_t sent = 0; sent < got && open;) {
                    const ssize_t wrote =
                        ::send(to, buffer.data() + sent, static_cast<std::size_t>(got - sent),
                               MSG_NOSIGNAL);
                    open = wrote > 0;
                    sent += std::max<ssize_t>(wrote, 0);
                }
            }
        }
        const std::lock_guard guard(lock_);
        open_.remove(std::pair{client, server});
        ::close(client);
        ::close(server);
    }

    std::atomic<int> target_;
    int listener_ = -1;
    int port_ = 0;
    std::atomic<bool> stopping_{false};
    std::atomic<bool> cutting_{false};
    std::atomic<int> refused_{0};
    std::atomic<int> nextConnection_{0};
    std::atomic<int> stallBelow_{0};  // connections with a lower index are stalled
    std::shared_mutex copying_;       // held shared while bytes are copied, by stall() alone
    std::mutex lock_;
    std::list<std::pair<int, int>> open_;
    std::list<std::thread> threads_;
    std::thread acceptor_;
};

// A sealtrain-worker enrolled into a folder of its own; `run` writes its log (standard error)
// to a file beside it.
class WorkerProcess {
public:
    WorkerProcess(std::string name, std::filesystem::path dir)
        : name_(std::move(name))
        , dir_(std::move(dir))
    {
    }

    WorkerProcess(const WorkerProcess&) = delete;
    WorkerProcess& operator=(const WorkerProcess&) = delete;

    ~WorkerProcess()
    {
        if (process_.state() != QProcess::NotRunning) {
            process_.kill();
            process_.waitForFinished(10000);
        }
    }

    // "" when enrolled, else what went wrong.
    std::string enroll(const std::string& address, const std::string& fingerprint,
                       const std::string& token)
    {
        QProcess enroller;
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.insert("SEALTRAIN_ENROLL_TOKEN", QString::fromStdString(token));
        enroller.setProcessEnvironment(environment);
        enroller.setProcessChannelMode(QProcess::MergedChannels);
        enroller.start(SEALTRAIN_WORKER_EXECUTABLE,
                       {"enroll", "--control", QString::fromStdString(address), "--ca-fingerprint",
                        QString::fromStdString(fingerprint), "--dir",
                        QString::fromStdString(dir_.string())});
        if (!enroller.waitForFinished(60000) || enroller.exitStatus() != QProcess::NormalExit
            || enroller.exitCode() != 0)
            return fmt::format("enrolling {} failed (exit status {}): {}", name_,
                               enroller.exitCode(), enroller.readAll().toStdString());
        return {};
    }

    void start()
    {
        process_.setStandardOutputFile(QString::fromStdString(logPath().string()),
                                       QIODevice::Append);
        process_.setStandardErrorFile(QString::fromStdString(logPath().string()),
                                      QIODevice::Append);
        process_.start(SEALTRAIN_WORKER_EXECUTABLE,
                       {"run", "--dir", QString::fromStdString(dir_.string()), "--trainer",
                        SEALTRAIN_TRAIN_EXECUTABLE});
        if (!process_.waitForStarted())
            qFatal("sealtrain-worker did not start");
    }

    // SIGKILL, when it still runs (a process id of 0 would signal this whole process group).
    void kill()
    {
        if (process_.processId() <= 0)
            return;
        ::kill(static_cast<pid_t>(process_.processId()), SIGKILL);
        process_.waitForFinished(30000);
    }

    // SIGTERM: true when it exited 0.
    [[nodiscard]] bool stop()
    {
        if (process_.processId() <= 0)
            return process_.exitStatus() == QProcess::NormalExit && process_.exitCode() == 0;
        ::kill(static_cast<pid_t>(process_.processId()), SIGTERM);
        return process_.waitForFinished(60000) && process_.exitStatus() == QProcess::NormalExit
               && process_.exitCode() == 0;
    }

    [[nodiscard]] bool running() const { return process_.state() != QProcess::NotRunning; }
    [[nodiscard]] int exitCode() const { return process_.exitCode(); }
    [[nodiscard]] std::string log() const { return readText(logPath()); }
    [[nodiscard]] bool logHas(const std::string& text) const
    {
        return log().find(text) != std::string::npos;
    }
    [[nodiscard]] const std::string& name() const { return name_; }
    [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }
    // Checkpoints the worker holds for the control plane, not yet acknowledged.
    [[nodiscard]] std::size_t heldCheckpoints(std::int64_t job) const
    {
        std::size_t held = 0;
        std::error_code ec;
        for (const auto& entry : std::filesystem::directory_iterator(
                 dir_ / "jobs" / std::to_string(job) / "upload", ec))
            held += entry.path().extension() == ".sealed" ? 1U : 0U;
        return held;
    }

private:
    [[nodiscard]] std::filesystem::path logPath() const
    {
        return dir_.parent_path() / (name_ + ".log");
    }

    std::string name_;
    std::filesystem::path dir_;
    QProcess process_;
};

// The entries of one action about job `job`.
std::vector<const audit::Entry*> entriesOf(const std::vector<audit::Entry>& entries,
                                           const std::string& action, std::int64_t job)
{
    std::vector<const audit::Entry*> found;
    for (const audit::Entry& entry : entries)
        if (entry.action == action && entry.target.kind == "job"
            && entry.target.id == std::to_string(job))
            found.push_back(&entry);
    return found;
}

// Whether every checkpoint step of a finished job (each kCheckpointEvery-th and the last) has a
// job.checkpoint entry that recorded it; "" when so, else the first missing step.
std::string missingCheckpointEntry(const std::vector<audit::Entry>& entries, std::int64_t job,
                                   int steps)
{
    std::set<std::string> recorded;
    for (const audit::Entry* entry : entriesOf(entries, "job.checkpoint", job))
        if (entry->outcome == audit::Outcome::Ok)
            recorded.insert(testing::detailOf(*entry, "step"));
    for (int step = kCheckpointEvery; step <= steps; step += kCheckpointEvery)
        if (recorded.count(std::to_string(step)) == 0)
            return fmt::format("job {}: no job.checkpoint entry for step {}", job, step);
    if (recorded.count(std::to_string(steps)) == 0)
        return fmt::format("job {}: no job.checkpoint entry for its last step", job);
    return {};
}

}  // namespace

class TestWorkerFaults : public QObject {
    Q_OBJECT

    QTemporaryDir tmp_;
    std::filesystem::path root_;
    testing::DaemonFixture daemon_;
    std::unique_ptr<CuttingProxy> proxy_;
    std::string fingerprint_;
    std::unique_ptr<api::ControlClient> dana_;  // the submitter
    std::unique_ptr<api::ControlClient> ann_;   // the approver
    std::unique_ptr<api::ControlClient> otto_;  // the operator: enrolment tokens, revocation
    std::int64_t killedJob_ = 0;
    std::int64_t referenceJob_ = 0;
    std::int64_t restartedJob_ = 0;
    std::int64_t cutJob_ = 0;
    std::int64_t stalledJob_ = 0;
    std::int64_t revokedJob_ = 0;
    std::int64_t cancelledJob_ = 0;
    std::int64_t stoppedJob_ = 0;
    std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();

    bool daemonKilled_ = false;

    void connectClients()
    {
        dana_ = daemon_.as("dana");
        ann_ = daemon_.as("ann");
        otto_ = daemon_.as("otto");
    }

    // Starts the daemon again after a SIGKILL: a new TCP port for the proxy, and new sessions
    // (they end with the process).
    void restartDaemon()
    {
        daemon_.start(daemonTimings());
        daemonKilled_ = false;
        proxy_->setTarget(daemon_.tcpPort());
        for (const char* user : {"dana", "ann", "otto"})
            daemon_.forget(user);
        connectClients();
    }

    void say(const std::string& what) const
    {
        const auto seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
        qInfo("[%6.1f s] %s", seconds, what.c_str());
    }

    // A worker enrolled with a fresh token from the operator, talking to `address`.
    std::unique_ptr<WorkerProcess> enrolled(const std::string& name, const std::string& address)
    {
        auto token = otto_->workers().createEnrollToken(name, "cpu", 600);
        if (!token)
            qFatal("enrolment token: %s", token.error().message().c_str());
        auto worker = std::make_unique<WorkerProcess>(name, root_ / "workers" / name);
        if (const std::string failed = worker->enroll(address, fingerprint_, token->token);
            !failed.empty())
            qFatal("%s", failed.c_str());
        return worker;
    }

    // dana submits, ann approves that exact spec: the job is queued.
    std::int64_t submitApproved(const std::string& name, int steps = kSteps)
    {
        auto job = dana_->jobs().submitJob(jobSpec(name, steps));
        if (!job)
            qFatal("submit: %s", job.error().message().c_str());
        auto approved = ann_->jobs().approveJob(job->id, job->specSha256);
        if (!approved)
            qFatal("approve: %s", approved.error().message().c_str());
        return job->id;
    }

    [[nodiscard]] std::optional<api::JobSummary> show(std::int64_t job) const
    {
        auto shown = dana_->jobs().showJob(job);
        if (!shown)
            return std::nullopt;
        return std::move(shown).value();
    }

    [[nodiscard]] bool hasState(std::int64_t job, const std::string& state) const
    {
        const auto shown = show(job);
        return shown && shown->state == state;
    }

    [[nodiscard]] bool runsOn(std::int64_t job, const std::string& worker) const
    {
        const auto shown = show(job);
        return shown && shown->state == "running" && shown->worker == worker;
    }

    [[nodiscard]] bool ended(std::int64_t job) const
    {
        const auto shown = show(job);
        return shown
               && (shown->state == "succeeded" || shown->state == "failed"
                   || shown->state == "cancelled");
    }

    // The newest step the control plane has metrics of (0 when none or unreachable).
    [[nodiscard]] std::int64_t lastStep(std::int64_t job) const
    {
        auto metrics = dana_->jobs().jobMetrics(job, false, 0);
        std::int64_t last = 0;
        for (const std::string& line : metrics ? *metrics : std::vector<std::string>{}) {
            const QJsonObject json =
                QJsonDocument::fromJson(QByteArray::fromStdString(line)).object();
            if (json.value("kind").toString() == "step")
                last = std::max(last, static_cast<std::int64_t>(json.value("step").toInteger()));
        }
        return last;
    }

    // "" when the job's metrics hold every step once.
    [[nodiscard]] std::string metricsProblem(std::int64_t job, int steps = kSteps) const
    {
        auto metrics = dana_->jobs().jobMetrics(job, false, 0);
        if (!metrics)
            return metrics.error().message();
        return stepsProblem(*metrics, steps);
    }

    // Starts `worker`, submits and approves a job of `steps` steps (`job`) that it takes, and
    // waits until its trainer runs. "" when so, else what went wrong.
    std::string startTraining(WorkerProcess& worker, const std::string& name, int steps,
                              std::int64_t& job)
    {
        worker.start();
        job = submitApproved(name, steps);
        if (!waitUntil(
                [&] { return runsOn(job, worker.name()) && !trainersIn(worker.dir()).empty(); },
                30s))
            return "the job never ran on " + worker.name() + ":\n" + worker.log();
        return {};
    }

    // startTraining, then waits until the job's first checkpoint is recorded while its trainer
    // still runs: the moment for a fault.
    std::string runPastFirstCheckpoint(WorkerProcess& worker, const std::string& name,
                                       std::int64_t& job)
    {
        if (std::string failed = startTraining(worker, name, kSteps, job); !failed.empty())
            return failed;
        if (!waitUntil([&] { return worker.logHas("uploaded and recorded"); }, 60s))
            return "no checkpoint was recorded:\n" + worker.log();
        if (trainersIn(worker.dir()).empty())
            return "the trainer ended before the fault; make the jobs longer";
        say(fmt::format("first checkpoint of job {} recorded; its metrics reach step {}", job,
                        lastStep(job)));
        return {};
    }

    // Whether, while nobody answers, training goes on: the worker keeps the metrics nobody
    // takes, and holds a checkpoint made meanwhile that it can not send.
    bool keepsWhatNobodyTakes(const WorkerProcess& worker, std::int64_t job)
    {
        const bool kept = waitUntil(
            [&] { return worker.logHas(kMetricsKept) && worker.heldCheckpoints(job) > 0; }, 30s);
        say(kept ? "the worker keeps metrics and a checkpoint" : "the worker keeps nothing");
        return kept;
    }

    // "" when the job succeeded in its first attempt (never given up) with every step's metrics
    // once, and `worker` sent what it kept while nobody answered; else what is wrong.
    std::string endedWithoutLoss(const WorkerProcess& worker, std::int64_t job)
    {
        if (!waitUntil([&] { return ended(job); }, 90s))
            return "the job did not end:\n" + worker.log();
        say(fmt::format("job {} ended", job));
        const auto shown = show(job);
        if (!shown || shown->state != "succeeded" || shown->restarts != 0 || shown->attempt != 1)
            return fmt::format("the job is {} after {} restarts (attempt {}):\n{}",
                               shown ? shown->state : "unknown", shown ? shown->restarts : -1,
                               shown ? shown->attempt : -1, worker.log());
        if (!worker.logHas("the control plane answers again") || !worker.logHas(kMetricsSent))
            return "the worker did not say that it sent what it kept:\n" + worker.log();
        return metricsProblem(job);
    }

    // Issue #30: the killed job's run, through the Runs service, has every step once after the
    // restart, marked with the attempt that recorded it; attempt 1 on the killed worker was lost,
    // attempt 2 resumed on the second from the newest checkpoint the first one recorded.
    void verifyRunMarksTheRestart()
    {
        auto run = dana_->runs().showRun(killedJob_);
        QVERIFY2(run, run ? "" : run.error().message().c_str());
        QCOMPARE(run->attempts.size(), std::size_t{2});
        const api::RunAttemptView& lost = run->attempts[0];
        const api::RunAttemptView& resumed = run->attempts[1];
        QCOMPARE(lost.worker, std::string("node-killed"));
        QCOMPARE(lost.outcome, std::string("lost"));
        QVERIFY2(lost.reason.find("no heartbeat") != std::string::npos, lost.reason.c_str());
        QCOMPARE(resumed.worker, std::string("node-second"));
        QCOMPARE(resumed.outcome, std::string("succeeded"));
        std::int64_t newestOfFirst = 0;
        for (const api::JobCheckpointView& checkpoint : run->checkpoints)
            if (checkpoint.attempt == 1)
                newestOfFirst = std::max(newestOfFirst, checkpoint.step);
        QVERIFY(newestOfFirst > 0);
        QCOMPARE(resumed.resumedFromStep, newestOfFirst);
        QCOMPARE(run->summary.stepsDone, std::int64_t{kSteps});
        QCOMPARE(run->summary.stepsPlanned, std::int64_t{kSteps});

        auto history = dana_->runs().runMetrics(killedJob_);
        QVERIFY2(history, history ? "" : history.error().message().c_str());
        QCOMPARE(history->size(), std::size_t{kSteps});
        for (std::size_t i = 0; i < history->size(); ++i) {
            const api::RunPointView& point = (*history)[i];
            QCOMPARE(point.step, static_cast<std::int64_t>(i) + 1);
            // Steps up to where the first attempt's reports stopped are its; the rest the second's.
            QCOMPARE(point.attempt, std::int64_t{point.step <= lost.lastStep ? 1 : 2});
        }
        QVERIFY(lost.lastStep >= newestOfFirst);
        QCOMPARE(resumed.firstStep, lost.lastStep + 1);
    }

    // A heartbeat on a new connection that presents `worker`'s certificate.
    [[nodiscard]] Result<api::HeartbeatAnswer> beatWithCertificateOf(const WorkerProcess& worker,
                                                                     const std::string& inventory)
    {
        api::ClientIdentity identity;
        identity.certificatePem = readText(worker.dir() / "tls.crt");
        identity.privateKeyPem = testing::secret(readText(worker.dir() / "tls.key"));
        auto client = api::ControlClient::connect(daemon_.endpoint(), &identity);
        if (!client)
            return client.error();
        return (*client)->worker().heartbeat(inventory, 0, 0);
    }

private slots:
    void initTestCase()
    {
        QVERIFY(tmp_.isValid());
        root_ = tmp_.path().toStdString();
        daemon_.create(
            root_, "alice",
            {{"sam", "steward"}, {"dana", "engineer"}, {"ann", "approver"}, {"otto", "operator"}});
        daemon_.start(daemonTimings());
        fingerprint_ = crypto::certificateFingerprint(daemon_.caPem()).value();
        proxy_ = std::make_unique<CuttingProxy>(daemon_.tcpPort());

        // A small text corpus, byte-level, that dana may read.
        std::string text;
        for (int i = 0; i < 400; ++i)
            text += fmt::format("Record {} of the corpus: the quick brown fox jumps over the lazy "
                                "dog {} times, and the worker keeps training.\n",
                                i, i % 17);
        const auto corpus = root_ / "corpus.txt";
        std::ofstream(corpus) << text;
        api::ImportSettings settings;
        settings.name = "corpus";
        settings.classification = "internal";
        auto sam = daemon_.as("sam");
        auto imported =
            sam->datasets().importDataset(settings, {{corpus, "corpus.txt", text.size()}}, {});
        QVERIFY2(imported, imported ? "" : imported.error().message().c_str());
        QVERIFY(sam->datasets().grantRead("corpus", "dana"));
        connectClients();
        say("set up");
    }

    // A worker SIGKILLed after its first checkpoint was recorded: after the timeout its job is
    // queued again (restarts 1), a second worker resumes it from the newest verified checkpoint
    // and finishes it. The reference run of the same spec, uninterrupted, is compared with it in
    // finalState().
    void killedWorkerJobResumesOnAnother()
    {
        auto killed = enrolled("node-killed", proxy_->address());
        auto second = enrolled("node-second", proxy_->address());
        killedJob_ = submitApproved("faults-killed");
        referenceJob_ = submitApproved("faults-reference");
        killed->start();
        QVERIFY2(waitUntil([&] { return runsOn(killedJob_, "node-killed"); }, 30s),
                 killed->log().c_str());
        second->start();  // takes the reference job meanwhile
        QVERIFY2(waitUntil([&] { return runsOn(referenceJob_, "node-second"); }, 30s),
                 second->log().c_str());
        QVERIFY2(waitUntil([&] { return killed->logHas("uploaded and recorded"); }, 60s),
                 killed->log().c_str());
        say(fmt::format("first checkpoint of job {} recorded; its metrics reach step {}",
                        killedJob_, lastStep(killedJob_)));
        QVERIFY2(!trainersIn(killed->dir()).empty(), "the trainer ended before the fault");
        killed->kill();
        say("worker killed");
        // Queued again once the worker was silent for the timeout (3 s; the reaper looks every
        // second).
        QVERIFY2(waitUntil(
                     [&] {
                         const auto job = show(killedJob_);
                         return job && job->restarts == 1;
                     },
                     15s),
                 "the silent worker's job was not queued again");
        say("job queued again");
        QVERIFY(waitUntil([&] { return ended(killedJob_) && ended(referenceJob_); }, 120s));
        say("both jobs ended");
        const auto resumed = show(killedJob_);
        QVERIFY(resumed);
        QCOMPARE(resumed->state, std::string("succeeded"));
        QCOMPARE(resumed->restarts, std::int64_t{1});
        QCOMPARE(resumed->attempt, std::int64_t{2});
        QCOMPARE(resumed->worker, std::string("node-second"));
        QVERIFY2(second->logHas(fmt::format("job {}: resuming from checkpoint-", killedJob_)),
                 second->log().c_str());
        const auto reference = show(referenceJob_);
        QCOMPARE(reference->state, std::string("succeeded"));
        QCOMPARE(reference->restarts, std::int64_t{0});
        const std::string killedSteps = metricsProblem(killedJob_);
        QVERIFY2(killedSteps.empty(), killedSteps.c_str());
        const std::string referenceSteps = metricsProblem(referenceJob_);
        QVERIFY2(referenceSteps.empty(), referenceSteps.c_str());
        QVERIFY(second->stop());
        verifyRunMarksTheRestart();
    }

    // The control plane SIGKILLed after the first checkpoint was recorded, and started again once
    // the worker has made a checkpoint nobody could take: the worker keeps everything and sends
    // it when it is answered again; the attempt is never given up.
    void controlPlaneRestartLosesNothing()
    {
        auto worker = enrolled("node-restart", daemon_.unixAddress());
        const std::string running =
            runPastFirstCheckpoint(*worker, "faults-restart", restartedJob_);
        QVERIFY2(running.empty(), running.c_str());
        daemon_.kill();
        daemonKilled_ = true;
        say("control plane killed");
        QVERIFY2(keepsWhatNobodyTakes(*worker, restartedJob_), worker->log().c_str());
        restartDaemon();
        say("control plane started again");
        const std::string lost = endedWithoutLoss(*worker, restartedJob_);
        QVERIFY2(lost.empty(), lost.c_str());
        QVERIFY(worker->stop());
    }

    // The proxy drops the worker's connections after its first checkpoint and refuses new ones
    // until the worker holds a checkpoint it could not send; then lets them through again.
    void cutConnectionLosesNothing()
    {
        auto worker = enrolled("node-cut", proxy_->address());
        const std::string running = runPastFirstCheckpoint(*worker, "faults-cut", cutJob_);
        QVERIFY2(running.empty(), running.c_str());
        proxy_->cut();
        say("connection cut");
        // The worker tries to connect again and is refused.
        QVERIFY2(waitUntil([&] { return proxy_->refused() > 0; }, 30s), worker->log().c_str());
        QVERIFY2(keepsWhatNobodyTakes(*worker, cutJob_), worker->log().c_str());
        proxy_->restore();
        say("connection restored");
        const std::string lost = endedWithoutLoss(*worker, cutJob_);
        QVERIFY2(lost.empty(), lost.c_str());
        QVERIFY(worker->stop());
    }

    // The proxy stalls the worker's connection after its first checkpoint: nothing moves and no
    // reset says so. The beat stuck on it fails within two intervals and the next goes over a
    // new connection, before the control plane would give the job away; the calls that were on
    // the stalled connection fail by keepalive and are made again. The job ends in its first
    // attempt with every step's metrics once.
    void stalledConnectionLosesNothing()
    {
        auto worker = enrolled("node-stalled", proxy_->address());
        const std::string running = runPastFirstCheckpoint(*worker, "faults-stalled", stalledJob_);
        QVERIFY2(running.empty(), running.c_str());
        proxy_->stall();
        say("connection stalled");
        QVERIFY2(waitUntil([&] { return worker->logHas("heartbeat failed"); }, 15s),
                 worker->log().c_str());
        QVERIFY2(waitUntil([&] { return ended(stalledJob_); }, 120s), worker->log().c_str());
        say(fmt::format("job {} ended", stalledJob_));
        const auto job = show(stalledJob_);
        QVERIFY(job);
        QCOMPARE(job->state, std::string("succeeded"));
        QCOMPARE(job->restarts, std::int64_t{0});
        QCOMPARE(job->attempt, std::int64_t{1});
        QVERIFY2(worker->logHas("the control plane answers again"), worker->log().c_str());
        const std::string steps = metricsProblem(stalledJob_);
        QVERIFY2(steps.empty(), steps.c_str());
        QVERIFY(worker->stop());
    }

    // A client's call on a connection that stalled fails within seconds by keepalive, not at
    // its deadline (six hours for an upload), and the import it carried is not half-done.
    void stalledCallFailsByKeepalive()
    {
        daemon_.forget("sam");  // the session of initTestCase ended with the killed daemon
        // Pinging, as a worker's channel does (a one-shot command's does not).
        auto sam = api::ControlClient::connect(
            {proxy_->address(), "localhost", daemon_.caPem(), true}, &daemon_.session("sam"));
        QVERIFY2(sam, sam ? "" : sam.error().message().c_str());
        auto listed = (*sam)->datasets().listDatasets();  // the connection is open
        QVERIFY2(listed, listed ? "" : listed.error().message().c_str());
        proxy_->stall();
        say("connection stalled");
        const auto file = root_ / "stalled.txt";
        const std::string record = "a record imported over a stalled connection\n";
        std::ofstream(file) << record;
        api::ImportSettings settings;
        settings.name = "stalled";
        settings.classification = "internal";
        auto call = std::async(std::launch::async, [&] {
            return (*sam)->datasets().importDataset(settings,
                                                    {{file, "stalled.txt", record.size()}}, {});
        });
        const bool failedInTime = call.wait_for(60s) == std::future_status::ready;
        if (!failedInTime)
            proxy_->cut();  // ends the call, so that the test ends
        const auto imported = call.get();
        QVERIFY2(failedInTime, "the call on the stalled connection did not fail within 60 s");
        QVERIFY(!imported);
        QVERIFY2(imported.error().code() == ErrorCode::Io, imported.error().message().c_str());
        say("the stalled call failed: " + imported.error().message());
        proxy_->restore();
        auto datasets =
            daemon_.as("sam")->datasets().listDatasets();  // the steward sees every dataset
        QVERIFY2(datasets, datasets ? "" : datasets.error().message().c_str());
        for (const api::DatasetSummary& dataset : *datasets)
            QVERIFY(dataset.name != "stalled");
    }

    // A connection that was cut and is reachable again is not a refused certificate. The cut
    // leaves the client's channel waiting before it connects again (gRPC's backoff), and a call
    // made meanwhile fails at the transport. Whether the control plane refuses this client's
    // certificate is asked over new connections: the old one's wait would read as a refused
    // handshake and send a user whose session is fine to sign in again.
    // With and without pings: a one-shot command's channel has the same arguments as the probe's
    // new channel, which must still get a connection of its own.
    void reconnectingIsNotARefusedCertificate_data()
    {
        QTest::addColumn<bool>("pings");
        QTest::newRow("pinging") << true;
        QTest::newRow("one-shot") << false;
    }

    void reconnectingIsNotARefusedCertificate()
    {
        QFETCH(const bool, pings);
        daemon_.forget("sam");
        auto sam = api::ControlClient::connect(
            {proxy_->address(), "localhost", daemon_.caPem(), pings}, &daemon_.session("sam"));
        QVERIFY2(sam, sam ? "" : sam.error().message().c_str());
        auto listed = (*sam)->datasets().listDatasets();
        QVERIFY2(listed, listed ? "" : listed.error().message().c_str());
        proxy_->cut();
        // The first call fails on the connection being closed, the next ones on connecting
        // again: the channel then waits (gRPC's backoff, about a second) before it tries again.
        for (int call = 0; call < 3; ++call) {
            auto whileCut = (*sam)->datasets().listDatasets();
            QVERIFY(!whileCut);
            QVERIFY2(whileCut.error().code() == ErrorCode::Io, whileCut.error().message().c_str());
        }
        proxy_->restore();
        say("connection cut and restored");
        // At once, while the channel still waits: a transport failure, never "sign in again".
        auto atOnce = (*sam)->datasets().listDatasets();
        QVERIFY2(atOnce || atOnce.error().code() == ErrorCode::Io,
                 atOnce ? "" : atOnce.error().message().c_str());
        // And the session was fine all along: the channel connects again by itself.
        QVERIFY2(waitUntil([&] { return bool((*sam)->datasets().listDatasets()); }, 30s),
                 "the client did not reach the control plane again within 30 s");
    }

    // The operator revokes the worker running a job: the job is queued again at once, the
    // worker's calls on its open connection are refused, a new handshake with its certificate is
    // refused, and another worker finishes the job.
    void revokedWorkerLosesItsJob()
    {
        auto revoked = enrolled("node-revoked", proxy_->address());
        auto other = enrolled("node-other", proxy_->address());
        const std::string running = runPastFirstCheckpoint(*revoked, "faults-revoked", revokedJob_);
        QVERIFY2(running.empty(), running.c_str());
        auto done = otto_->workers().revokeWorker("node-revoked", "the node was compromised");
        QVERIFY2(done, done ? "" : done.error().message().c_str());
        QCOMPARE(done->state, std::string("revoked"));
        say("worker revoked");
        const auto requeued = show(revokedJob_);
        QVERIFY(requeued);
        QCOMPARE(requeued->state, std::string("queued"));
        QCOMPARE(requeued->restarts, std::int64_t{1});

        // On its open connection its calls are refused as a revoked worker's: it stops its
        // trainer and exits with the status that tells systemd not to restart it.
        QVERIFY2(waitUntil([&] { return !revoked->running(); }, 15s), revoked->log().c_str());
        QCOMPARE(revoked->exitCode(), kExitRefused);
        QVERIFY2(revoked->logHas("was revoked"), revoked->log().c_str());
        QVERIFY(trainersIn(revoked->dir()).empty());
        // A new connection with its certificate: refused at the handshake (the transport fails,
        // no handler answers; the client library tells it from an unreachable control plane),
        // where the other worker's certificate is answered.
        const std::string inventory = core::workerInventoryJson({});
        auto refusedBeat = beatWithCertificateOf(*revoked, inventory);
        QVERIFY(!refusedBeat);
        QVERIFY2(refusedBeat.error().code() == ErrorCode::Unauthenticated
                     && refusedBeat.error().message().find("refused this client's certificate")
                            != std::string::npos,
                 refusedBeat.error().message().c_str());
        auto acceptedBeat = beatWithCertificateOf(*other, inventory);
        QVERIFY2(acceptedBeat, acceptedBeat ? "" : acceptedBeat.error().message().c_str());

        other->start();
        QVERIFY(waitUntil([&] { return ended(revokedJob_); }, 90s));
        const auto job = show(revokedJob_);
        QCOMPARE(job->state, std::string("succeeded"));
        QCOMPARE(job->worker, std::string("node-other"));
        QCOMPARE(job->restarts, std::int64_t{1});
        const std::string steps = metricsProblem(revokedJob_);
        QVERIFY2(steps.empty(), steps.c_str());
        QVERIFY(other->stop());

        // Started again (systemd would, without RestartPreventExitStatus): every handshake is
        // refused while the control plane answers without a certificate; it tells that from a
        // control plane that is away and exits again, refused, within a few beats.
        revoked->start();
        QVERIFY2(waitUntil([&] { return !revoked->running(); }, 45s), revoked->log().c_str());
        QCOMPARE(revoked->exitCode(), kExitRefused);
        QVERIFY2(revoked->logHas("refuses this worker's certificate at the handshake"),
                 revoked->log().c_str());
        say("the revoked worker, started again, exited refused");
    }

    // dana cancels her running job: the worker stops the trainer, and the job stays cancelled.
    void cancelStopsTheTrainer()
    {
        auto worker = enrolled("node-cancel", proxy_->address());
        const std::string started =
            startTraining(*worker, "faults-cancel", 100 * kSteps, cancelledJob_);
        QVERIFY2(started.empty(), started.c_str());
        auto cancelled = dana_->jobs().cancelJob(cancelledJob_, "no longer needed");
        QVERIFY2(cancelled, cancelled ? "" : cancelled.error().message().c_str());
        QCOMPARE(cancelled->state, std::string("cancelled"));
        say("job cancelled");
        QVERIFY2(waitUntil([&] { return trainersIn(worker->dir()).empty(); }, 15s),
                 worker->log().c_str());
        say("trainer gone");
        QVERIFY2(waitUntil([&] { return worker->logHas("ended, job cancelled"); }, 15s),
                 worker->log().c_str());
        QVERIFY(hasState(cancelledJob_, "cancelled"));
        QVERIFY(worker->stop());
    }

    // SIGTERM to a worker mid-run (systemctl stop): it stops the trainer, exits 0, and its last
    // beat gives the job back at once, not after the worker timeout.
    void stoppedWorkerGivesItsJobBack()
    {
        auto worker = enrolled("node-stopped", proxy_->address());
        const std::string started =
            startTraining(*worker, "faults-stopped", 100 * kSteps, stoppedJob_);
        QVERIFY2(started.empty(), started.c_str());
        QVERIFY2(worker->stop(), worker->log().c_str());
        say("worker stopped");
        QVERIFY(trainersIn(worker->dir()).empty());
        const auto job = show(stoppedJob_);
        QVERIFY(job);
        QCOMPARE(job->state, std::string("queued"));
        QCOMPARE(job->restarts, std::int64_t{1});
        QVERIFY(dana_->jobs().cancelJob(stoppedJob_, "the test is over"));
    }

    // After a case that failed mid-fault, the next one starts with the connections let through
    // and the daemon running.
    void cleanup()
    {
        proxy_->restore();
        if (daemonKilled_)
            restartDaemon();
    }

    // A case run alone leaves the daemon running.
    void cleanupTestCase() { daemon_.kill(); }

    // With the daemon stopped: the audit log holds what each case says, and the resumed job's
    // final parameters and optimizer moments are the uninterrupted run's, bit for bit.
    void finalState()
    {
        auto workers = otto_->workers().listWorkers();
        QVERIFY2(workers, workers ? "" : workers.error().message().c_str());
        std::vector<crypto::PublicKey> signers;
        for (const api::WorkerSummary& worker : *workers)
            signers.push_back(crypto::PublicKey::fromPem(worker.signingPublicKeyPem).value());
        dana_.reset();
        ann_.reset();
        otto_.reset();
        QVERIFY(daemon_.stop());
        say("control plane stopped");

        auto entries = daemon_.auditEntries();
        QVERIFY2(entries, entries ? "" : entries.error().message().c_str());
        for (const std::int64_t job :
             {killedJob_, referenceJob_, restartedJob_, cutJob_, stalledJob_, revokedJob_}) {
            const std::string missing = missingCheckpointEntry(*entries, job, kSteps);
            QVERIFY2(missing.empty(), missing.c_str());
        }
        // Queued again once each: the killed worker's job for its silence, the revoked one's.
        const auto killedRequeue = entriesOf(*entries, "job.requeue", killedJob_);
        QCOMPARE(killedRequeue.size(), std::size_t{1});
        QVERIFY(testing::detailOf(*killedRequeue.front(), "reason").find("no heartbeat")
                != std::string::npos);
        for (const std::int64_t job :
             {referenceJob_, restartedJob_, cutJob_, stalledJob_, cancelledJob_})
            QVERIFY(entriesOf(*entries, "job.requeue", job).empty());
        const auto stoppedRequeue = entriesOf(*entries, "job.requeue", stoppedJob_);
        QCOMPARE(stoppedRequeue.size(), std::size_t{1});
        QCOMPARE(testing::detailOf(*stoppedRequeue.front(), "reason"),
                 std::string("the worker no longer runs it"));
        const auto revokedRequeue = entriesOf(*entries, "job.requeue", revokedJob_);
        QCOMPARE(revokedRequeue.size(), std::size_t{1});
        QCOMPARE(testing::detailOf(*revokedRequeue.front(), "reason"),
                 std::string("worker node-revoked was revoked"));
        const auto revocation =
            std::find_if(entries->begin(), entries->end(), [](const audit::Entry& entry) {
                return entry.action == "worker.revoke" && entry.target.id == "node-revoked"
                       && entry.outcome == audit::Outcome::Ok;
            });
        QVERIFY(revocation != entries->end());
        QCOMPARE(revocation->actor.id, std::string("otto"));
        const bool refusedCall =
            std::any_of(entries->begin(), entries->end(), [](const audit::Entry& entry) {
                return entry.action == "worker.connect" && entry.target.id == "node-revoked"
                       && entry.outcome == audit::Outcome::Denied;
            });
        QVERIFY(refusedCall);
        // The cancellation by dana, and the attempt's end, recorded.
        const auto cancel = entriesOf(*entries, "job.cancel", cancelledJob_);
        QCOMPARE(cancel.size(), std::size_t{1});
        QCOMPARE(cancel.front()->actor.id, std::string("dana"));
        const auto finish = entriesOf(*entries, "job.finish", cancelledJob_);
        QCOMPARE(finish.size(), std::size_t{1});
        QCOMPARE(testing::detailOf(*finish.front(), "state"), std::string("cancelled"));

        // The last checkpoints of the resumed job and of the uninterrupted one.
        auto platform = core::DataDirectory::open(daemon_.dataDir(), testing::daemonUnlock());
        QVERIFY2(platform, platform ? "" : platform.error().message().c_str());
        // Read back as a sampler would get them: the recorded checkpoint, verified by core's
        // key release against its worker's key and the audit log's digest, opened with the keys
        // the release hands a sampler (the job's own KEK).
        const auto finalCheckpoint = [&](std::int64_t job) -> Result<trainer::LoadedCheckpoint> {
            auto& plane = (*platform)->controlPlane();
            auto recorded = plane.scheduler().checkpoints(job);
            if (!recorded)
                return recorded.error();
            const auto last =
                std::find_if(recorded->begin(), recorded->end(),
                             [](const core::JobCheckpoint& c) { return c.step == kSteps; });
            if (last == recorded->end())
                return Error(ErrorCode::NotFound, "No checkpoint is recorded at the last step.");
            auto worker = plane.workers().byName(last->worker);
            if (!worker)
                return worker.error();
            const core::KeyRelease release((*platform)->keyVault());
            const core::ReturnedCheckpoints returned((*platform)->keyVault());
            auto verified = returned.jobCheckpoint(*last, worker->signingKeyPem);
            if (!verified)
                return verified.error();
            auto keys = release.forSampler(*verified);
            if (!keys)
                return keys.error();
            auto opened = trainer::parseTrainerKeys(keys->bytes());
            if (!opened)
                return opened.error();
            return trainer::loadCheckpoint(
                trainer::checkpointFiles(
                    daemon_.dataDir() / "jobs" / std::to_string(job) / "checkpoints", kSteps),
                signers, opened->resolver());
        };
        auto resumed = finalCheckpoint(killedJob_);
        QVERIFY2(resumed, resumed ? "" : resumed.error().message().c_str());
        auto reference = finalCheckpoint(referenceJob_);
        QVERIFY2(reference, reference ? "" : reference.error().message().c_str());
        const trainer::DecodedCheckpoint& a = resumed->checkpoint;
        const trainer::DecodedCheckpoint& b = reference->checkpoint;
        QCOMPARE(a.state.jobId, std::to_string(killedJob_));
        QCOMPARE(b.state.jobId, std::to_string(referenceJob_));
        QCOMPARE(a.state.step, std::uint64_t{kSteps});
        QCOMPARE(a.state.step, b.state.step);
        QCOMPARE(a.state.optimizerStep, b.state.optimizerStep);
        QCOMPARE(a.state.config.toJson(), b.state.config.toJson());
        const auto sameBits = [](const std::vector<float>& x, const std::vector<float>& y) {
            return !x.empty() && x.size() == y.size()
                   && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
        };
        QVERIFY2(sameBits(a.parameters, b.parameters),
                 "the resumed job's parameters differ from the uninterrupted run's");
        QVERIFY2(sameBits(a.firstMoment, b.firstMoment),
                 "the resumed job's first moments differ from the uninterrupted run's");
        QVERIFY2(sameBits(a.secondMoment, b.secondMoment),
                 "the resumed job's second moments differ from the uninterrupted run's");
        say("final parameters compared");
    }
};

QTEST_GUILESS_MAIN(TestWorkerFaults)
#include "test_worker_faults.moc"
