// The trainer launchers of a worker (launch.h).
#include "sealtrain/worker/launch.h"

#include "sealtrain/base/child_process.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/node/trainer_launcher.h"

#include <fmt/format.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <mutex>
#include <thread>

namespace sealtrain::worker {
namespace {

using namespace std::chrono_literals;

// A word for /bin/sh, single-quoted.
std::string shellWord(std::string_view word)
{
    std::string out = "'";
    for (const char c : word) {
        if (c == '\'')
            out += "'\\''";
        else
            out += c;
    }
    return out + "'";
}

// Writes `keys` into the FIFO at `path` once a reader opened it; gives up when `done` turns true
// first (the ranks ended before they read). The FIFO is removed afterwards.
void feedFifo(const std::filesystem::path& path, const crypto::SecretBytes& keys,
              const std::atomic<bool>& done)
{
    int fd = -1;
    while (!done.load()) {
        fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd >= 0 || errno != ENXIO)
            break;
        std::this_thread::sleep_for(50ms);
    }
    if (fd >= 0) {
        const int flags = ::fcntl(fd, F_GETFL);
        ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
        struct sigaction ignore {};
        ignore.sa_handler = SIG_IGN;
        ::sigaction(SIGPIPE, &ignore, nullptr);
        std::size_t written = 0;
        const auto bytes = keys.bytes();
        while (written < bytes.size()) {
            const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            written += static_cast<std::size_t>(n);
        }
        ::close(fd);
    }
    std::error_code ec;
    std::filesystem::remove(path, ec);
}

Result<std::filesystem::path> makeFifo(const std::filesystem::path& path)
{
    std::error_code ec;
    std::filesystem::remove(path, ec);
    if (::mkfifo(path.c_str(), 0600) != 0)
        return Error(ErrorCode::Io, fmt::format("Cannot make the keys FIFO '{}': {}; check the "
                                                "worker folder.",
                                                path.string(), std::strerror(errno)));
    return path;
}

// Starts `argv` (a name on PATH) with its standard output on a pipe and nothing else of ours
// (base/child_process.h); returns the pid and the pipe's read end.
Result<std::pair<pid_t, int>> spawnReading(const std::vector<std::string>& argv)
{
    int fds[2] = {-1, -1};
    if (::pipe2(fds, O_CLOEXEC) != 0)
        return Error(ErrorCode::Io, "Cannot make a pipe for the launcher; check the process "
                                    "limits.");
    ChildLaunch launch;
    launch.argv = argv;
    launch.searchPath = true;
    launch.descriptors = {{fds[1], STDOUT_FILENO}};
    auto started = spawnChild(launch);
    ::close(fds[1]);
    if (!started) {
        ::close(fds[0]);
        return started.error();
    }
    return std::pair{*started, fds[0]};
}

// Passes each line of `fd` to `onLine` (base/child_process.h), then closes it.
void relay(int fd, const std::function<void(std::string_view)>& onLine)
{
    relayLines(fd, onLine);
    ::close(fd);
}

Result<int> waitFor(pid_t child, const std::string& what)
{
    return waitChild(child, what, "the job's verified checkpoints are kept.");
}

// mpirun -np R on this node: rank i reads its keys from keys.<i> (a FIFO), rank 0 writes the
// metrics on standard output.
Result<int> launchMpirun(const LaunchSettings& settings, const TrainerRun& run,
                         const crypto::SecretBytes& keys, LaunchControl& control,
                         const std::function<void(std::string_view)>& onLine)
{
    const auto ranks = run.nodes * run.ranksPerNode;
    std::vector<std::filesystem::path> fifos;
    for (std::int64_t rank = 0; rank < ranks; ++rank) {
        auto fifo = makeFifo(run.folder / fmt::format("keys.{}", rank));
        if (!fifo)
            return fifo.error();
        fifos.push_back(*fifo);
    }
    std::vector<std::string> argv{settings.mpirun, "-np", std::to_string(ranks), "--bind-to",
                                  "none"};
    if (::geteuid() == 0)
        argv.emplace_back("--allow-run-as-root");  // a test as root; a service runs as its user
    argv.insert(argv.end(), {"/bin/sh", "-c",
                             fmt::format("exec \"$0\" train --keys-fd 3 --metrics-fd 1 \"$@\" "
                                         "3<{}/keys.\"$OMPI_COMM_WORLD_RANK\"",
                                         shellWord(run.folder.string())),
                             run.trainer.string()});
    argv.insert(argv.end(), run.arguments.begin(), run.arguments.end());
    auto started = spawnReading(argv);
    if (!started)
        return started.error();
    control.setPid(started->first);
    std::atomic<bool> done{false};
    std::vector<std::jthread> feeders;
    feeders.reserve(fifos.size());
    for (const auto& fifo : fifos)
        feeders.emplace_back([&, fifo] { feedFifo(fifo, keys, done); });
    relay(started->second, onLine);
    auto status = waitFor(started->first, "`mpirun`");
    control.setPid(0);
    done.store(true);
    return status;
}

// sbatch --wait of a script whose srun starts every rank with the node keys bundle on its
// standard input: on each node `sealtrain-worker open-keys` checks it, opens that node's box and
// pipes the keys to the trainer; only sealed keys cross the network (issue #27, item 19).
// Over 100 lines: the batch script is written, submitted and followed in one place so
// that every path out cancels the job and removes the script.
Result<int> launchSlurm(const LaunchSettings& settings, const TrainerRun& run,
                        const crypto::SecretBytes& keys, LaunchControl& control,
                        const std::function<void(std::string_view)>& onLine)
{
    if (run.signer == nullptr || settings.nodeKeys.empty())
        return Error(ErrorCode::InvalidArgument,
                     "A worker on Slurm needs its nodes' keys: give --node-keys DIR with a "
                     "NODE.pub from 'sealtrain-worker node-key' on each node.");
    auto bundle = node::sealNodeKeys(settings.nodeKeys, keys, *run.signer);
    if (!bundle)
        return bundle.error();
    auto sealed = crypto::SecretBytes::fromBytes(
        {reinterpret_cast<const std::uint8_t*>(bundle->data()), bundle->size()});
    if (!sealed)
        return sealed.error();
    auto fifo = makeFifo(run.folder / "keys.fifo");
    if (!fifo)
        return fifo.error();
    // sh -c SCRIPT NAME WORKER NODE_KEY SIGNER TRAINER ARGUMENTS...
    std::string command = fmt::format(
        "exec srun --mpi=pmix --input=all /bin/sh -c {} sealtrain-rank {} {} {} {}",
        shellWord(R"(w="$1" k="$2" s="$3" t="$4"; shift 4; )"
                  R"("$w" open-keys --node-key-file "$k" --signer "$s" | )"
                  R"("$t" train --keys-fd 0 --metrics-fd 1 "$@")"),
        shellWord(settings.self.string()), shellWord(settings.nodeKeyFile.string()),
        shellWord(toHex(run.signer->publicKey().raw())), shellWord(run.trainer.string()));
    for (const std::string& argument : run.arguments)
        command += " " + shellWord(argument);
    command += " <" + shellWord(fifo->string());
    std::string script = "#!/bin/sh\n";
    script += "#SBATCH --job-name=sealtrain\n";
    script += fmt::format("#SBATCH --nodes={}\n#SBATCH --ntasks-per-node={}\n", run.nodes,
                          run.ranksPerNode);
    script += fmt::format("#SBATCH --output={}/slurm-%j.out\n", run.folder.string());
    if (!settings.partition.empty())
        script += fmt::format("#SBATCH --partition={}\n", settings.partition);
    script += command + "\n";
    const auto scriptPath = run.folder / "job.sbatch";
    {
        std::ofstream out(scriptPath, std::ios::trunc);
        out << script;
        if (!out)
            return Error(ErrorCode::Io, fmt::format("Cannot write the batch script '{}'; check "
                                                    "the worker folder.",
                                                    scriptPath.string()));
    }
    ::chmod(scriptPath.c_str(), 0700);
    auto started = spawnReading({settings.sbatch, "--wait", "--parsable", scriptPath.string()});
    if (!started)
        return started.error();
    control.setPid(started->first);
    std::atomic<bool> done{false};
    std::jthread feeder([&] { feedFifo(*fifo, *sealed, done); });
    // sbatch prints the job id first, then waits for the job's end.
    std::string jobId;
    std::mutex idLock;
    std::jthread reader([&, fd = started->second] {
        relay(fd, [&](std::string_view line) {
            const std::lock_guard guard(idLock);
            if (jobId.empty()) {
                std::string id(line.substr(0, line.find_first_of(";\n")));
                jobId = id;
                control.setSlurmJob(id, settings.scancel);
            }
        });
    });
    // Rank 0's standard output lands in the job's output file: followed as it grows.
    std::string pending;
    std::uint64_t offset = 0;
    const auto follow = [&] {
        std::string id;
        {
            const std::lock_guard guard(idLock);
            id = jobId;
        }
        if (id.empty())
            return;
        std::ifstream in(run.folder / fmt::format("slurm-{}.out", id), std::ios::binary);
        if (!in)
            return;
        in.seekg(static_cast<std::streamoff>(offset));
        std::array<char, 4096> buffer{};
        while (in.read(buffer.data(), buffer.size()) || in.gcount() > 0) {
            offset += static_cast<std::uint64_t>(in.gcount());
            pending.append(buffer.data(), static_cast<std::size_t>(in.gcount()));
        }
        for (auto newline = pending.find('\n'); newline != std::string::npos;
             newline = pending.find('\n')) {
            onLine(std::string_view(pending).substr(0, newline + 1));
            pending.erase(0, newline + 1);
        }
    };
    int status = 0;
    pid_t ended = 0;
    while ((ended = ::waitpid(started->first, &status, WNOHANG)) == 0
           || (ended < 0 && errno == EINTR)) {
        follow();
        std::this_thread::sleep_for(200ms);
    }
    control.setPid(0);
    reader.join();
    follow();
    if (!pending.empty())
        onLine(pending);
    done.store(true);
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return Error(ErrorCode::Internal, "`sbatch` was killed; the job's verified checkpoints are "
                                      "kept.");
}

}  // namespace

void LaunchControl::stop()
{
    stopped_.store(true);
    std::vector<std::string> scancel;
    {
        const std::lock_guard guard(lock_);
        if (!slurmJob_.empty())
            scancel = {scancel_, slurmJob_};
    }
    if (!scancel.empty()) {
        if (auto started = spawnReading(scancel)) {
            relay(started->second, [](std::string_view) {});
            (void)waitFor(started->first, "`scancel`");
        }
        return;
    }
    if (const int pid = pid_.load(); pid > 0)
        ::kill(pid, SIGTERM);
}

void LaunchControl::setPid(int pid)
{
    pid_.store(pid);
    if (pid > 0 && stopped_.load())
        ::kill(pid, SIGTERM);
}

void LaunchControl::setSlurmJob(std::string id, std::string scancel)
{
    {
        const std::lock_guard guard(lock_);
        slurmJob_ = std::move(id);
        scancel_ = std::move(scancel);
    }
    if (stopped_.load())
        stop();
}

Result<int> launchTrainer(const LaunchSettings& settings, const TrainerRun& run,
                          crypto::SecretBytes keys, LaunchControl& control,
                          const std::function<void(std::string_view)>& onLine)
{
    if (run.nodes < 1 || run.ranksPerNode < 1)
        return Error(ErrorCode::InvalidArgument,
                     "A job needs at least one node and one rank per node; fix its spec.");
    if (settings.launcher == Launcher::Slurm) {
        auto status = launchSlurm(settings, run, keys, control, onLine);
        keys.wipe();
        return status;
    }
    if (run.nodes > 1)
        return Error(ErrorCode::Unsupported,
                     fmt::format("A job on {} nodes needs a cluster: run this worker with "
                                 "--launcher slurm on the cluster's submit host.",
                                 run.nodes));
    if (run.ranksPerNode > 1) {
        auto status = launchMpirun(settings, run, keys, control, onLine);
        keys.wipe();
        return status;
    }
    node::TrainerLaunch launch{run.trainer.string(), "train", run.arguments, {}, {}, {}};
    launch.onStarted = [&control](int pid) { control.setPid(pid); };
    auto status = node::runTrainer(launch, std::move(keys), onLine);
    control.setPid(0);
    return status;
}

}  // namespace sealtrain::worker
