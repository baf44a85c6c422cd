// The trainer's process: two pipes (keys in, output back), posix_spawn with exactly those
// descriptors inherited, the keys written with an EINTR-safe loop, the output relayed by line.
#include "sealtrain/core/trainer_launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <span>

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
    const bool metrics = launch.subcommand == "train";
    std::vector<std::string> argvText{launch.executable, launch.subcommand, "--keys-fd",
                                      std::to_string(keysRead.fd)};
    if (metrics) {
        argvText.emplace_back("--metrics-fd");
        argvText.push_back(std::to_string(outputWrite.fd));
    }
    argvText.insert(argvText.end(), launch.arguments.begin(), launch.arguments.end());
    std::vector<char*> argv;
    argv.reserve(argvText.size() + 1);
    for (auto& argument : argvText)
        argv.push_back(argument.data());
    argv.push_back(nullptr);

    // The child keeps exactly these ends: dup2 onto itself clears close-on-exec.
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, keysRead.fd, keysRead.fd);
    posix_spawn_file_actions_adddup2(&actions, outputWrite.fd,
                                     metrics ? outputWrite.fd : STDOUT_FILENO);
    pid_t child = 0;
    const int spawned =
        ::posix_spawn(&child, argvText[0].c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0)
        return Error(ErrorCode::Io, "Cannot start '" + argvText[0] + "': " + std::strerror(spawned)
                                        + "; check the path.");
    keysRead.reset();
    outputWrite.reset();
    if (launch.onStarted)
        launch.onStarted(static_cast<int>(child));

    const auto handed = handOver(keysWrite, keys);
    relayLines(outputRead.fd, onOutput);
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
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
