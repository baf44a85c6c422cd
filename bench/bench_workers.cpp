// What one sealtrain-control sustains of a fleet of workers (issue #16; docs/operations/limits.md,
// "Workers"): N simulated workers, each enrolled with a token of its own (its own P-256 key and
// certificate from the platform CA, its own Ed25519 and X25519 keys) and calling through its own
// ControlClient, so its own TLS 1.3 connection to 127.0.0.1. The server runs in this process
// (api::ControlServer over a new data directory, heartbeat interval as --heartbeat-ms).
//   every worker   heartbeats every --heartbeat-ms with an inventory of eight GPUs, polls TakeJob
//                  every --poll-ms while idle, and "runs" a job it gets for --job-ms: one metrics
//                  line (ReportMetrics), then FinishJob as succeeded. No trainer, no data fetched.
//   a submitter    dana (engineer, reads the small dataset sam imported) submits a job and ann
//                  (approver) approves it, --jobs-per-second on average (at random moments), for
//                  --seconds; an approved job is queued at once, in the approval's transaction.
// The workers' steps run on a bounded pool (--threads), one step of a worker at a time, never
// two at once: a heartbeat never races the same worker's TakeJob.
// First --quiet-seconds with no job submitted (what beats and empty polls alone write to disk).
// Measured over the --seconds window after it: heartbeats answered/s beside the rate offered (N per
// interval); heartbeat latency; dispatch latency, from the approval's answer to the TakeJob
// answer that hands the job to a worker (and from the moment ApproveJob was sent), beside the
// poll interval (the wait for the next idle worker's poll, at most) and a dispatching TakeJob's
// own latency (the least it can be); empty polls; jobs; the load average, the CPU this process
// used and the bytes it wrote to storage; errors.
// Then it waits (at most --drain-seconds) for every approved job to finish and checks that each
// one succeeded on its first attempt. It exits 1 when any call failed or any approved job was not
// dispatched and finished that way: that, never a time, is what its CTest run asserts.
#include "control_bench.h"
#include "sealtrain/core/workers/workers.h"
#include "sealtrain/crypto/certificate_authority.h"
#include "sealtrain/crypto/sealed_box.h"
#include "sealtrain/crypto/signing.h"
#include "worker_fleet.h"

#include <fmt/format.h>

#include <pthread.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <queue>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

using namespace sealtrain;
using bench::check;
using bench::take;

namespace {

using namespace bench::fleet;
constexpr const char* kPool = "gpu";
constexpr const char* kDataset = "bench-notes";

constexpr const char* kUsage =
    "Usage: bench_workers [--workers N] [--seconds S] [--jobs-per-second R] [--heartbeat-ms MS]\n"
    "                     [--poll-ms MS] [--job-ms MS] [--worker-timeout-s S] [--threads T]\n"
    "                     [--quiet-seconds S] [--drain-seconds S] [--dir DIR]\n"
    "  --workers N          simulated workers, each enrolled with its own certificate and TLS\n"
    "                       connection: 1 to 5000, default 200\n"
    "  --seconds S          how long jobs are submitted and the rates measured: 1 to 600, "
    "default 30\n"
    "  --jobs-per-second R  jobs submitted and approved per second: 0.1 to 200, default 5\n"
    "  --heartbeat-ms MS    each worker's heartbeat interval (also the server's): 100 to 60000, "
    "default 1000\n"
    "  --poll-ms MS         how often an idle worker calls TakeJob: 100 to 60000, default 1000\n"
    "  --job-ms MS          how long a worker holds a job it took: 0 to 60000, default 2000\n"
    "  --worker-timeout-s S after how long without a beat the server re-queues a worker's job:\n"
    "                       1 to 3600, default six heartbeat intervals (the daemon's 30 s at 5 s)\n"
    "  --threads T          threads that run the workers' calls, each waiting on one: 1 to 512, "
    "default 64\n"
    "  --quiet-seconds S    before that, how long the workers beat and poll with no job "
    "submitted: 0 to 60, default 5\n"
    "  --drain-seconds S    how long to wait afterwards for the approved jobs to finish: 1 to "
    "600, default 60\n"
    "  --dir DIR            where its data directory goes, default the system's temporary "
    "folder\n";

[[noreturn]] void usageError(const std::string& what)
{
    fmt::print(stderr, "bench_workers: {}. Run 'bench_workers --help' for usage.\n", what);
    std::exit(2);
}

double numberIn(std::string_view flag, const char* text, double low, double high)
{
    char* end = nullptr;
    const double value = std::strtod(text, &end);
    if (end == text || *end != '\0' || !(value >= low && value <= high))
        usageError(fmt::format("{} needs a number from {} to {}", flag, low, high));
    return value;
}

Options parseOptions(int argc, char** argv)
{
    Options options;
    for (int i = 1; i < argc; ++i) {
        const std::string_view flag = argv[i];
        if (flag == "--help" || flag == "-h") {
            fmt::print("{}", kUsage);
            std::exit(0);
        }
        if (i + 1 >= argc)
            usageError(fmt::format("unknown option or missing value '{}'", flag));
        const char* value = argv[++i];
        const auto whole = [&](double low, double high) {
            return static_cast<int>(numberIn(flag, value, low, high));
        };
        if (flag == "--workers")
            options.workers = whole(1, 5000);
        else if (flag == "--seconds")
            options.seconds = whole(1, 600);
        else if (flag == "--jobs-per-second")
            options.jobsPerSecond = numberIn(flag, value, 0.1, 200);
        else if (flag == "--heartbeat-ms")
            options.heartbeat = Milliseconds(whole(100, 60000));
        else if (flag == "--poll-ms")
            options.poll = Milliseconds(whole(100, 60000));
        else if (flag == "--job-ms")
            options.job = Milliseconds(whole(0, 60000));
        else if (flag == "--worker-timeout-s")
            options.workerTimeout = std::chrono::seconds(whole(1, 3600));
        else if (flag == "--threads")
            options.threads = whole(1, 512);
        else if (flag == "--quiet-seconds")
            options.quietSeconds = whole(0, 60);
        else if (flag == "--drain-seconds")
            options.drainSeconds = whole(1, 600);
        else if (flag == "--dir")
            options.base = value;
        else
            usageError(fmt::format("unknown option '{}'", flag));
    }
    return options;
}

std::string inventoryOfEightGpus()
{
    core::WorkerInventory inventory;
    inventory.gpus.assign(8, {"NVIDIA H200", std::uint64_t{150'000'000'000}});
    inventory.cpuCores = 64;
    inventory.backend = "cuda";
    return core::workerInventoryJson(inventory);
}

// A job of dana's on the small dataset, for the gpu pool, with a GPU-hour limit small enough
// that the default policy's demo budget (10 hours) holds a thousand of them at once.
std::string jobSpec(int number)
{
    return fmt::format(R"({{"spec_version": 1, "name": "bench-{}", "project": "demo", )"
                       R"("dataset": "{}", "model": {{"layers": 2, "heads": 2, "width": 32, )"
                       R"("context": 16}}, "schedule": {{"steps": 10, "batch": 2}}, )"
                       R"("resources": {{"pool": "{}", "device": "cuda", "gpus_per_node": 8}}, )"
                       R"("limits": {{"gpu_hours": 0.01}}}})",
                       number, kDataset, kPool);
}

// Enrolls `count` workers as sealtrain-worker does, on `threads` threads: the operator's token,
// the worker's own keys, Enroll without a certificate, then a client with its certificate and
// its first heartbeat.
std::vector<SimulatedWorker> enrollWorkers(bench::InProcessControl& control,
                                           api::ControlClient& operatorClient, int count,
                                           int threads, const std::string& inventoryJson)
{
    std::vector<SimulatedWorker> workers(static_cast<std::size_t>(count));
    const auto enrolment = control.anonymous();
    std::atomic<std::size_t> next = 0;
    std::vector<std::thread> enrollers;
    enrollers.reserve(static_cast<std::size_t>(std::min(threads, count)));
    for (int t = 0; t < std::min(threads, count); ++t)
        enrollers.emplace_back([&] {
            for (std::size_t i = next++; i < workers.size(); i = next++) {
                SimulatedWorker& worker = workers[i];
                worker.name = fmt::format("sim-{:04}", i);
                auto tls = take(crypto::makeKeyAndCsr("sealtrain-worker"));
                const auto signing = take(crypto::SigningKey::generate());
                const auto box = take(crypto::BoxKeyPair::generate());
                api::WorkerEnrollment request;
                request.token =
                    take(operatorClient.workers().createEnrollToken(worker.name, kPool, 3600))
                        .token;
                request.csrPem = tls.csrPem;
                request.signingPublicKeyPem = signing.publicKey().toPem();
                request.boxPublicKey.assign(box.publicKey().begin(), box.publicKey().end());
                request.inventoryJson = inventoryJson;
                const auto enrolled = take(enrolment->worker().enrollWorker(request));
                api::ClientIdentity identity{std::move(tls.privateKeyPem), enrolled.certificatePem};
                worker.client = take(api::ControlClient::connect(control.endpoint(), &identity));
                // Its first beat opens its connection (the TLS handshake), outside the window.
                (void)take(worker.client->worker().heartbeat(inventoryJson, 0, 0));
            }
        });
    for (auto& thread : enrollers)
        thread.join();
    return workers;
}

// Established TCP connections whose local end is 127.0.0.1:`port`: the server's side of each
// client's channel (gRPC's sockets are IPv6 ones, with the address mapped: ::ffff:127.0.0.1).
std::size_t establishedTo(int port)
{
    const std::string local = fmt::format("0100007F:{:04X}", port);
    std::size_t count = 0;
    for (const char* file : {"/proc/net/tcp", "/proc/net/tcp6"}) {
        std::ifstream table(file);
        std::string line;
        std::getline(table, line);  // the header
        while (std::getline(table, line)) {
            std::istringstream fields(line);
            std::string slot;
            std::string localAddress;
            std::string remoteAddress;
            std::string state;
            fields >> slot >> localAddress >> remoteAddress >> state;
            if (localAddress.size() >= local.size()
                && localAddress.compare(localAddress.size() - local.size(), local.size(), local)
                       == 0
                && state == "01")
                ++count;
        }
    }
    return count;
}

// What the measurement window saw of the machine.
struct Window {
    double seconds = 0;
    double loadBefore = 0;
    double loadAfter = 0;
    double cores = 0;           // this process's CPU seconds per second
    double workerCores = 0;     // of those, the simulated workers' threads
    double diskBytes = 0;       // what this process had written to storage (/proc/self/io)
    double quietDiskBytes = 0;  // the same in the quiet seconds before, without jobs
    std::size_t connections = 0;
};

// The bytes this process has caused to be written to storage (write_bytes of /proc/self/io):
// the database's WAL and the job files, not its sockets.
double storageBytesWritten()
{
    std::ifstream io("/proc/self/io");
    std::string name;
    double value = 0;
    while (io >> name >> value)
        if (name == "write_bytes:")
            return value;
    return 0;
}

double cpuSeconds()
{
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    const auto seconds = [](const timeval& time) {
        return static_cast<double>(time.tv_sec) + static_cast<double>(time.tv_usec) / 1e6;
    };
    return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

double loadAverage()
{
    double load[1] = {0.0};
    return getloadavg(load, 1) == 1 ? load[0] : -1.0;
}

// Submits and approves jobs at `rate` a second on average until `end`, at random moments (a
// Poisson process): jobs at a fixed period would meet the workers' fixed poll phases in step.
void submitJobs(api::ControlClient& engineer, api::ControlClient& approver, double rate,
                Clock::time_point start, Clock::time_point end, Ledger& ledger,
                std::vector<double>& latencyMs)
{
    std::mt19937_64 random(std::random_device{}());
    std::exponential_distribution<double> gap(rate);
    auto due = start;
    for (int number = 0;; ++number) {
        if (number > 0)
            due += std::chrono::duration_cast<Clock::duration>(
                std::chrono::duration<double>(gap(random)));
        if (due >= end)
            return;
        std::this_thread::sleep_until(due);
        const auto before = Clock::now();
        auto submitted = engineer.jobs().submitJob(jobSpec(number));
        if (!submitted) {
            ledger.failed(fmt::format("SubmitJob: {}", submitted.error().message()));
            continue;
        }
        if (submitted->state != "vetted") {
            ledger.failed(fmt::format("job {} is {}, not vetted", submitted->id, submitted->state));
            continue;
        }
        const auto asked = Clock::now();
        auto approved = approver.jobs().approveJob(submitted->id, submitted->specSha256);
        const auto after = Clock::now();
        if (!approved) {
            ledger.failed(fmt::format("ApproveJob: {}", approved.error().message()));
            continue;
        }
        ledger.approved(submitted->id, asked, after);
        latencyMs.push_back(millisecondsBetween(before, after));
    }
}

std::vector<double> latenciesWithin(const std::vector<SimulatedWorker>& workers,
                                    std::vector<Sample> SimulatedWorker::*samples,
                                    Clock::time_point from, Clock::time_point to)
{
    std::vector<double> within;
    for (const SimulatedWorker& worker : workers)
        for (const Sample& sample : worker.*samples)
            if (sample.answered >= from && sample.answered <= to)
                within.push_back(sample.ms);
    return within;
}

// Every approved job as the control plane has it now; returns how many did not succeed on their
// first attempt (the first few are named on stderr).
std::size_t jobsNotSucceeded(api::ControlClient& engineer, const std::vector<std::int64_t>& jobs,
                             Ledger& ledger)
{
    std::size_t notSucceeded = 0;
    for (const std::int64_t id : jobs) {
        auto job = engineer.jobs().showJob(id);
        if (!job) {
            ledger.failed(fmt::format("ShowJob {}: {}", id, job.error().message()));
        } else if (job->state != "succeeded" || job->attempt != 1 || job->restarts != 0) {
            ++notSucceeded;
            if (notSucceeded <= kErrorsShown)
                fmt::print(stderr,
                           "bench_workers: job {} is {} after attempt {} ({} restarts): {}\n", id,
                           job->state, job->attempt, job->restarts, job->reason);
        }
    }
    return notSucceeded;
}

// What a run measured, for the table.
struct Figures {
    std::string dir;
    std::chrono::seconds workerTimeout{0};
    double enrolSeconds = 0;
    Window window;
    double offered = 0;    // heartbeats/s
    double sustained = 0;  // heartbeats answered/s in the window
    std::size_t quietBeats = 0;
    bench::Percentiles beats;
    bench::Percentiles polls;
    bench::Percentiles takes;
    bench::Percentiles fromAnswer;
    bench::Percentiles fromRequest;
    bench::Percentiles submit;
    bench::Percentiles lateness;
    Ledger::Dispatches dispatches;
    std::size_t notSucceeded = 0;
    bool drained = false;
    std::size_t errors = 0;
    std::vector<std::string> shown;
};

void printFigures(const Options& options, const Figures& figures)
{
    fmt::print("bench_workers: sealtrain-control in-process on 127.0.0.1 (TLS 1.3), {} simulated "
               "workers on {} threads, {} s, {} hardware threads, worker timeout {} s, in {}\n",
               options.workers, options.threads, options.seconds,
               std::thread::hardware_concurrency(), figures.workerTimeout.count(), figures.dir);
    fmt::print("  load average (1 min) {:.2f} at the start, {:.2f} at the end; this process used "
               "{:.2f} cores, {:.2f} of them on the simulated workers' own threads (gRPC runs part "
               "of a client's work on threads of its own)\n",
               figures.window.loadBefore, figures.window.loadAfter, figures.window.cores,
               figures.window.workerCores);
    fmt::print("  enrolment: {} workers in {:.1f} s ({:.0f}/s), each with its own certificate; {} "
               "established connections to the server ({} workers + 4 users)\n",
               options.workers, figures.enrolSeconds, options.workers / figures.enrolSeconds,
               figures.window.connections, options.workers);
    fmt::print("                          measured                         beside\n");
    fmt::print("  heartbeats answered     {:>8.1f} /s                      offered {:.1f} /s "
               "({} workers every {} ms): {:.3f}x\n",
               figures.sustained, figures.offered, options.workers, options.heartbeat.count(),
               figures.sustained / figures.offered);
    fmt::print(
        "  heartbeat latency       p50 {:>6.1f} ms  p99 {:>6.1f} ms    the interval, {} ms\n",
        figures.beats.p50Ms, figures.beats.p99Ms, options.heartbeat.count());
    fmt::print("  empty TakeJob polls     {:>8.1f} /s  p50 {:>4.1f} ms  p99 {:>4.1f} ms  each idle "
               "worker every {} ms\n",
               static_cast<double>(figures.polls.count) / figures.window.seconds,
               figures.polls.p50Ms, figures.polls.p99Ms, options.poll.count());
    fmt::print("  dispatch latency        p50 {:>6.1f} ms  p99 {:>6.1f} ms    ceiling: the poll "
               "interval, {} ms\n",
               figures.fromAnswer.p50Ms, figures.fromAnswer.p99Ms, options.poll.count());
    fmt::print("  (from ApproveJob sent)  p50 {:>6.1f} ms  p99 {:>6.1f} ms    floor: a TakeJob "
               "that hands over a job, p50 {:.1f} ms, p99 {:.1f} ms\n",
               figures.fromRequest.p50Ms, figures.fromRequest.p99Ms, figures.takes.p50Ms,
               figures.takes.p99Ms);
    fmt::print("  submit + approve        p50 {:>6.1f} ms  p99 {:>6.1f} ms    {} jobs/s offered\n",
               figures.submit.p50Ms, figures.submit.p99Ms, options.jobsPerSecond);
    fmt::print(
        "  jobs                    {} approved, {} dispatched ({} before the approval's "
        "answer came, counted as 0 ms), {} finished, {} not succeeded at the first "
        "attempt{}\n",
        figures.dispatches.approved, figures.dispatches.dispatched,
        figures.dispatches.beforeApprovalAnswer, figures.dispatches.finished, figures.notSucceeded,
        figures.drained ? "" : fmt::format(" (waited {} s for the rest)", options.drainSeconds));
    fmt::print("  the simulator's lag     p50 {:>6.1f} ms  p99 {:>6.1f} ms    how late a worker's "
               "step started (near 0: it keeps up)\n",
               figures.lateness.p50Ms, figures.lateness.p99Ms);
    const auto perBeat = [](double bytes, std::size_t beats) {
        return bytes / 1024.0 / std::max(1.0, static_cast<double>(beats));
    };
    fmt::print("  written to storage      {:>8.1f} KiB/s                   {:.1f} KiB per "
               "heartbeat answered, jobs' writes included\n",
               figures.window.diskBytes / 1024.0 / figures.window.seconds,
               perBeat(figures.window.diskBytes, figures.beats.count));
    if (options.quietSeconds > 0)
        fmt::print("    with no jobs          {:>8.1f} KiB/s                   {:.1f} KiB per "
                   "heartbeat answered (the first {} s: beats and empty polls alone)\n",
                   figures.window.quietDiskBytes / 1024.0 / options.quietSeconds,
                   perBeat(figures.window.quietDiskBytes, figures.quietBeats),
                   options.quietSeconds);
    fmt::print("  errors                  {}\n", figures.errors);
    for (const std::string& shown : figures.shown)
        fmt::print("    {}\n", shown);
}

}  // namespace

int main(int argc, char** argv)
{
    const Options options = parseOptions(argc, argv);
    const auto dir = options.base / fmt::format("bench_workers-{}", ::getpid());
    bench::prepareBenchFolder(dir);

    // sam (steward) imports a small dataset and lets dana (engineer) read it; ann approves; otto
    // (operator) makes the enrolment tokens (admins can not: separation of duties).
    bench::InProcessControl control(dir, {});
    control.addUser("sam", {"steward"});
    control.addUser("dana", {"engineer"});
    control.addUser("ann", {"approver"});
    control.addUser("otto", {"operator"});
    api::ServerOptions serverOptions;
    serverOptions.heartbeatInterval = options.heartbeat;
    serverOptions.workerTimeout =
        options.workerTimeout.count() > 0
            ? options.workerTimeout
            : std::max(std::chrono::seconds(1),
                       std::chrono::ceil<std::chrono::seconds>(options.heartbeat * 6));
    control.serve(serverOptions);
    const auto steward = control.signIn("sam");
    const auto engineer = control.signIn("dana");
    const auto approver = control.signIn("ann");
    const auto operatorClient = control.signIn("otto");
    {
        const auto notes = dir / "notes.txt";
        std::ofstream(notes) << "first note\n\nsecond note\n\nthird note\n";
        api::ImportSettings settings;
        settings.name = kDataset;
        settings.format = "text-records";
        (void)take(steward->datasets().importDataset(
            settings, {{notes, "notes.txt", std::filesystem::file_size(notes)}}, {}));
        check(steward->datasets().grantRead(kDataset, "dana"));
    }

    const std::string inventoryJson = inventoryOfEightGpus();
    const auto enrolStart = Clock::now();
    std::vector<SimulatedWorker> workers =
        enrollWorkers(control, *operatorClient, options.workers, options.threads, inventoryJson);
    const double enrolSeconds = std::chrono::duration<double>(Clock::now() - enrolStart).count();

    // Each worker beats and polls first at its own point of the first interval, as nodes started
    // at different times do.
    Ledger ledger;
    Fleet fleet(options, inventoryJson, ledger);
    // The quiet seconds first (beats and empty polls alone), then the window with jobs.
    const auto begin = Clock::now();
    const auto start = begin + std::chrono::seconds(options.quietSeconds);
    const auto end = start + std::chrono::seconds(options.seconds);
    std::vector<Clock::time_point> firstDue;
    for (std::size_t i = 0; i < workers.size(); ++i) {
        SimulatedWorker& worker = workers[i];
        const auto share = static_cast<std::int64_t>(i);
        const auto count = static_cast<std::int64_t>(workers.size());
        worker.nextBeat = begin + options.heartbeat * share / count;
        worker.nextPoll = begin + options.poll * share / count;
        firstDue.push_back(worker.due());
    }
    Window window;
    window.seconds = options.seconds;
    std::vector<double> submitMs;
    bool drained = false;
    {
        const double quietDiskBefore = storageBytesWritten();
        StepPool pool(options.threads, firstDue, [&](std::size_t worker, Clock::time_point due) {
            return fleet.step(workers[worker], due);
        });
        std::this_thread::sleep_until(start);
        const double diskBefore = storageBytesWritten();
        window.quietDiskBytes = diskBefore - quietDiskBefore;
        window.loadBefore = loadAverage();
        const double cpuBefore = cpuSeconds();
        const double poolCpuBefore = pool.cpuSeconds();
        submitJobs(*engineer, *approver, options.jobsPerSecond, start, end, ledger, submitMs);
        std::this_thread::sleep_until(end);
        window.cores = (cpuSeconds() - cpuBefore) / window.seconds;
        window.workerCores = (pool.cpuSeconds() - poolCpuBefore) / window.seconds;
        window.loadAfter = loadAverage();
        window.diskBytes = storageBytesWritten() - diskBefore;
        window.connections = establishedTo(control.port());
        const auto drainEnd = Clock::now() + std::chrono::seconds(options.drainSeconds);
        drained = ledger.allFinished();
        while (!drained && Clock::now() < drainEnd) {
            std::this_thread::sleep_for(Milliseconds(100));
            drained = ledger.allFinished();
        }
    }

    Figures figures;
    figures.dir = dir.string();
    figures.workerTimeout = serverOptions.workerTimeout;
    figures.enrolSeconds = enrolSeconds;
    figures.window = window;
    figures.drained = drained;
    figures.dispatches = ledger.dispatches();
    figures.notSucceeded = jobsNotSucceeded(*engineer, figures.dispatches.approvedJobs, ledger);
    figures.beats =
        bench::percentiles(latenciesWithin(workers, &SimulatedWorker::beats, start, end));
    figures.polls =
        bench::percentiles(latenciesWithin(workers, &SimulatedWorker::polls, start, end));
    // Every dispatching TakeJob, the drain's too: the least a dispatch can take.
    figures.takes = bench::percentiles(
        latenciesWithin(workers, &SimulatedWorker::takes, start, Clock::time_point::max()));
    std::vector<double> late;
    for (const SimulatedWorker& worker : workers)
        late.insert(late.end(), worker.lateMs.begin(), worker.lateMs.end());
    figures.lateness = bench::percentiles(std::move(late));
    figures.fromAnswer = bench::percentiles(figures.dispatches.fromAnswerMs);
    figures.fromRequest = bench::percentiles(figures.dispatches.fromRequestMs);
    figures.submit = bench::percentiles(std::move(submitMs));
    figures.offered = options.workers * 1000.0 / static_cast<double>(options.heartbeat.count());
    figures.sustained = static_cast<double>(figures.beats.count) / window.seconds;
    figures.quietBeats = latenciesWithin(workers, &SimulatedWorker::beats, begin, start).size();
    figures.errors = ledger.errors();
    figures.shown = ledger.shown();
    printFigures(options, figures);

    workers.clear();
    const Ledger::Dispatches& jobs = figures.dispatches;
    const bool ok = figures.errors == 0 && jobs.approved > 0 && jobs.dispatched == jobs.approved
                    && jobs.finished == jobs.approved && figures.notSucceeded == 0;
    if (!ok)
        fmt::print(stderr, "bench_workers: FAILED: every call must succeed and every approved "
                           "job must be dispatched once and succeed.\n");
    return ok ? 0 : 1;
}
