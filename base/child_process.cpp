// posix_spawn with only the descriptors given, a clean signal state, and the output relayed by
// line (child_process.h).
#include "sealtrain/base/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

extern char** environ;

namespace sealtrain {
namespace {

// The spawn's attributes and file actions, destroyed with it.
struct SpawnState {
    posix_spawn_file_actions_t actions{};
    posix_spawnattr_t attributes{};
    std::vector<int> moved;  // our copies of descriptors that sat where the child's go

    SpawnState()
    {
        posix_spawn_file_actions_init(&actions);
        posix_spawnattr_init(&attributes);
    }
    SpawnState(const SpawnState&) = delete;
    SpawnState& operator=(const SpawnState&) = delete;
    ~SpawnState()
    {
        posix_spawnattr_destroy(&attributes);
        posix_spawn_file_actions_destroy(&actions);
        for (const int fd : moved)
            ::close(fd);
    }
};

}  // namespace

Result<pid_t> spawnChild(const ChildLaunch& launch)
{
    if (launch.argv.empty())
        return Error(ErrorCode::InvalidArgument, "A child process needs a program to run.");
    const std::string& program = launch.argv.front();
    int highest = STDERR_FILENO;
    for (const auto& [ours, theirs] : launch.descriptors) {
        if (theirs == STDIN_FILENO || theirs == STDERR_FILENO || theirs < 0)
            return Error(ErrorCode::InvalidArgument,
                         "A child's descriptors are its standard output or from 3 up.");
        highest = std::max(highest, theirs);
    }
    SpawnState spawn;
    // A descriptor of ours that sits at or below the child's highest number is copied above it
    // first, so that moving one into place never overwrites another's source.
    const auto source = [&](int fd) -> Result<int> {
        if (fd > highest)
            return fd;
        const int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, highest + 1);
        if (copy < 0)
            return Error(ErrorCode::Io, "Cannot set up the descriptors of '" + program + "': "
                                            + std::strerror(errno) + "; check the process limits.");
        spawn.moved.push_back(copy);
        return copy;
    };
    if (launch.standardInput >= 0) {
        auto input = source(launch.standardInput);
        if (!input)
            return input.error();
        posix_spawn_file_actions_adddup2(&spawn.actions, *input, STDIN_FILENO);
    } else {
        posix_spawn_file_actions_addopen(&spawn.actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    }
    if (launch.standardError >= 0) {
        auto error = source(launch.standardError);
        if (!error)
            return error.error();
        posix_spawn_file_actions_adddup2(&spawn.actions, *error, STDERR_FILENO);
    }
    for (const auto& [ours, theirs] : launch.descriptors) {
        auto from = source(ours);
        if (!from)
            return from.error();
        posix_spawn_file_actions_adddup2(&spawn.actions, *from, theirs);
    }
    posix_spawn_file_actions_addclosefrom_np(&spawn.actions, highest + 1);

    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&spawn.attributes, &none);
    sigset_t defaults;
    sigemptyset(&defaults);
    for (const int signal : {SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGCHLD})
        sigaddset(&defaults, signal);
    posix_spawnattr_setsigdefault(&spawn.attributes, &defaults);
    int flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
    if (launch.newSession)
        flags |= POSIX_SPAWN_SETSID;
    posix_spawnattr_setflags(&spawn.attributes, static_cast<short>(flags));

    std::vector<std::string> text = launch.argv;
    std::vector<char*> argv;
    argv.reserve(text.size() + 1);
    for (std::string& word : text)
        argv.push_back(word.data());
    argv.push_back(nullptr);
    pid_t child = 0;
    const int spawned = launch.searchPath ? ::posix_spawnp(&child, text[0].c_str(), &spawn.actions,
                                                           &spawn.attributes, argv.data(), environ)
                                          : ::posix_spawn(&child, text[0].c_str(), &spawn.actions,
                                                          &spawn.attributes, argv.data(), environ);
    if (spawned != 0)
        return Error(ErrorCode::Io,
                     "Cannot start '" + program + "': " + std::strerror(spawned)
                         + (launch.searchPath ? "; check that it is installed and on the PATH."
                                              : "; check the path."));
    return child;
}

void relayLines(int fd, const std::function<void(std::string_view)>& onLine)
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
            onLine(std::string_view(pending).substr(0, newline + 1));
            pending.erase(0, newline + 1);
        }
    }
    if (!pending.empty())
        onLine(pending);
}

Result<int> waitChild(pid_t child, std::string_view what, std::string_view advice)
{
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return Error(ErrorCode::Internal, std::string(what) + " was killed by signal "
                                          + std::to_string(WTERMSIG(status)) + "; "
                                          + std::string(advice));
}

}  // namespace sealtrain
