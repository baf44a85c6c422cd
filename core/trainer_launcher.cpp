// The trainer's process: two pipes (keys in, output back) and a third for a prompt, posix_spawn
// with exactly those descriptors inherited, the keys written with an EINTR-safe loop, the output
// relayed by line.
#include "sealtrain/core/trainer_launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <optional>
#include <span>
#include <thread>

extern char** environ;

namespace sealtrain::core {
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

// Reads `fd` to its end, passing on each complete line, then what is left.
void relayLines(int fd, const std::function<void(std::string_view)>& onOutput)
{
    std::string pending;
    std::array<char, 4096> buffer{};
    for (;;) {
        const ssize_t got = ::read(fd, buffer.data(), buffer.size());
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        pending.append(buffer.data(), static_cast<std::size_t>(got));
        for (auto newline = pending.find('\n'); newline != std::string::npos;
             newline = pending.find('\n')) {
            onOutput(std::string_view(pending).substr(0, newline + 1));
            pending.erase(0, newline + 1);
        }
    }
    if (!pending.empty())
        onOutput(pending);
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
    std::vector<std::string> argvText{launch.executable, launch.subcommand, "--keys-fd",
                                      std::to_string(kChildKeys)};
    if (metrics) {
        argvText.emplace_back("--metrics-fd");
        argvText.push_back(std::to_string(kChildMetrics));
    }
    argvText.insert(argvText.end(), launch.arguments.begin(), launch.arguments.end());
    std::vector<char*> argv;
    argv.reserve(argvText.size() + 1);
    for (auto& argument : argvText)
        argv.push_back(argument.data());
    argv.push_back(nullptr);

    // The child gets exactly its two ends and closes every other descriptor the launcher holds
    // without close-on-exec (a daemon's sockets, a library's files); it reads /dev/null on
    // standard input whatever the launcher's is (the daemon's was its passphrase file); and it
    // starts with an empty signal mask and default handlers: the daemon blocks SIGTERM for its
    // sigwait and gRPC ignores SIGPIPE, and neither may reach a trainer or a sampler that must
    // stop when told. The output end is moved off descriptor 3 first, so that the first dup2
    // can not overwrite the second's source.
    if (outputWrite.fd == kChildKeys) {
        const int moved = ::fcntl(outputWrite.fd, F_DUPFD_CLOEXEC, kChildMetrics + 1);
        if (moved < 0)
            return Error(ErrorCode::Io, "Cannot set up the trainer's descriptors; check the "
                                        "process limits.");
        outputWrite.reset();
        outputWrite.fd = moved;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    if (launch.input)
        posix_spawn_file_actions_adddup2(&actions, inputRead.fd, STDIN_FILENO);
    else
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, keysRead.fd, kChildKeys);
    posix_spawn_file_actions_adddup2(&actions, outputWrite.fd,
                                     metrics ? kChildMetrics : STDOUT_FILENO);
    posix_spawn_file_actions_addclosefrom_np(&actions,
                                             metrics ? kChildMetrics + 1 : kChildKeys + 1);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&attributes, &none);
    sigset_t defaults;
    sigemptyset(&defaults);
    for (const int signal : {SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGCHLD})
        sigaddset(&defaults, signal);
    posix_spawnattr_setsigdefault(&attributes, &defaults);
    posix_spawnattr_setflags(&attributes,
                             static_cast<short>(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF));
    pid_t child = 0;
    const int spawned =
        ::posix_spawn(&child, argvText[0].c_str(), &actions, &attributes, argv.data(), environ);
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0)
        return Error(ErrorCode::Io, "Cannot start '" + argvText[0] + "': " + std::strerror(spawned)
                                        + "; check the path.");
    keysRead.reset();
    outputWrite.reset();
    inputRead.reset();
    if (launch.onStarted)
        launch.onStarted(static_cast<int>(child));

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
                    ::kill(child, SIGKILL);
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
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    if (stopped)
        return Error(ErrorCode::ResourceExhausted, *stopped);
    if (!handed && !(WIFEXITED(status) && WEXITSTATUS(status) != 0))
        return handed.error();
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return Error(ErrorCode::Internal, "The trainer was killed by signal "
                                          + std::to_string(WTERMSIG(status))
                                          + "; its checkpoints so far are intact, so resume "
                                            "with --resume latest.");
}

}  // namespace sealtrain::core
