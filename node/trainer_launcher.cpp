// The trainer's process: two pipes (keys in, output back) and a third for a prompt, started with
// exactly those descriptors (base/child_process.h), the keys written with an EINTR-safe loop, the
// output relayed by line.
#include "sealtrain/node/trainer_launcher.h"

#include "sealtrain/base/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <optional>
#include <span>
#include <thread>

namespace sealtrain::node {
namespace {

// Closes a descriptor when it goes out of scope.
struct Descriptor {
    int fd = -1;
    Descriptor() = default;
    Descriptor(const Descriptor&) = delete;
    Descriptor& operator=(const Descriptor&) = delete;
    ~Descriptor() { reset(); }
    void reset()
    {
        if (fd >= 0)
            ::close(fd);
        fd = -1;
    }
};

Result<void> makePipe(Descriptor& readEnd, Descriptor& writeEnd)
{
    int fds[2] = {-1, -1};
    if (::pipe2(fds, O_CLOEXEC) != 0)
        return Error(ErrorCode::Io, std::string("Cannot create a pipe for the trainer: ")
                                        + std::strerror(errno) + "; check the process limits.");
    readEnd.fd = fds[0];
    writeEnd.fd = fds[1];
    return success();
}

Result<void> writeAll(int fd, std::span<const std::uint8_t> bytes)
{
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t wrote = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (wrote < 0 && errno == EINTR)
            continue;
        if (wrote <= 0)
            return Error(ErrorCode::Io, "The trainer stopped before it read its keys; see its "
                                        "message above.");
        done += static_cast<std::size_t>(wrote);
    }
    return success();
}

// Writes the keys with SIGPIPE ignored (a trainer that exits before reading must not kill the
// launcher), then wipes them and closes the pipe so that the trainer sees their end.
Result<void> handOver(Descriptor& keysWrite, crypto::SecretBytes& keys)
{
    struct sigaction ignore {};
    struct sigaction previous {};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &ignore, &previous);
    auto handed = writeAll(keysWrite.fd, keys.bytes());
    keys.wipe();
    keysWrite.reset();
    ::sigaction(SIGPIPE, &previous, nullptr);
    return handed;
}

// Writes the trainer's standard input on its own thread (the trainer may read it before or after
// its keys), then closes it. SIGPIPE is blocked on that thread, so a trainer that stops reading
// ends the write with EPIPE and the pending signal dies with the thread.
std::thread writeInput(Descriptor& inputWrite, const std::optional<std::string>& input)
{
    if (!input)
        return {};
    return std::thread([&inputWrite, &input] {
        sigset_t pipe;
        sigemptyset(&pipe);
        sigaddset(&pipe, SIGPIPE);
        pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
        (void)writeAll(inputWrite.fd,
                       {reinterpret_cast<const std::uint8_t*>(input->data()), input->size()});
        inputWrite.reset();
    });
}

}  // namespace

Result<int> runTrainer(const TrainerLaunch& launch, crypto::SecretBytes keys,
                       const std::function<void(std::string_view)>& onOutput)
{
    Descriptor keysRead;
    Descriptor keysWrite;
    Descriptor outputRead;
    Descriptor outputWrite;
    SEALTRAIN_TRY(makePipe(keysRead, keysWrite));
    SEALTRAIN_TRY(makePipe(outputRead, outputWrite));
    Descriptor inputRead;
    Descriptor inputWrite;
    if (launch.input)
        SEALTRAIN_TRY(makePipe(inputRead, inputWrite));
    const bool metrics = launch.subcommand == "train";
    // In the child the keys are on descriptor 3 and the metrics on 4; nothing else above 2.
    constexpr int kChildKeys = 3;
    constexpr int kChildMetrics = 4;
    ChildLaunch child;
    child.argv = {launch.executable, launch.subcommand, "--keys-fd", std::to_string(kChildKeys)};
    if (metrics) {
        child.argv.emplace_back("--metrics-fd");
        child.argv.push_back(std::to_string(kChildMetrics));
    }
    child.argv.insert(child.argv.end(), launch.arguments.begin(), launch.arguments.end());
    // The child gets exactly its keys, its output end and, for a prompt, its standard input
    // (base/child_process.h: nothing else, /dev/null otherwise, a clean signal state): the
    // daemon's standard input was its passphrase file, it blocks SIGTERM for its sigwait and
    // gRPC ignores SIGPIPE, and none of it may reach a trainer or a sampler.
    child.standardInput = launch.input ? inputRead.fd : -1;
    child.descriptors = {{keysRead.fd, kChildKeys},
                         {outputWrite.fd, metrics ? kChildMetrics : STDOUT_FILENO}};
    auto started = spawnChild(child);
    if (!started)
        return started.error();
    const pid_t pid = *started;
    keysRead.reset();
    outputWrite.reset();
    inputRead.reset();
    if (launch.onStarted)
        launch.onStarted(static_cast<int>(pid));

    // The watcher may kill the child only while it is not yet reaped: `done` is set, under the
    // lock, before waitpid, so a reused process id is never signalled.
    std::mutex lock;
    std::condition_variable changed;
    bool done = false;
    std::optional<std::string> stopped;
    std::thread watcher;
    if (launch.stopReason) {
        watcher = std::thread([&] {
            std::unique_lock held(lock);
            while (!done && !stopped) {
                if (changed.wait_for(held, std::chrono::milliseconds(100), [&] { return done; }))
                    break;
                stopped = launch.stopReason();
                if (stopped)
                    ::kill(pid, SIGKILL);
            }
        });
    }
    std::thread inputWriter = writeInput(inputWrite, launch.input);
    const auto handed = handOver(keysWrite, keys);
    relayLines(outputRead.fd, onOutput);
    if (inputWriter.joinable())
        inputWriter.join();
    if (watcher.joinable()) {
        {
            const std::lock_guard held(lock);
            done = true;
        }
        changed.notify_all();
        watcher.join();
    }
    auto status = waitChild(pid, "The trainer",
                            "its checkpoints so far are intact, so resume with --resume latest.");
    if (stopped)
        return Error(ErrorCode::ResourceExhausted, *stopped);
    if (!handed && !(status && *status != 0))
        return handed.error();
    return status;
}

}  // namespace sealtrain::node
