// Starting and stopping the workstation's sealtrain-control (local_control.h).
#include "sealtrain/api/local_control.h"

#include "secret_pipe.h"

#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <span>
#include <system_error>
#include <thread>
#include <utility>

namespace sealtrain::api {
namespace {

using namespace std::chrono_literals;
constexpr auto kPoll = 100ms;

// The run folder, made 0700 when missing; refused when it is not this user's alone.
Result<void> privateRunFolder(const std::filesystem::path& folder)
{
    std::error_code ec;
    if (std::filesystem::create_directories(folder, ec))
        std::filesystem::permissions(folder, std::filesystem::perms::owner_all, ec);
    struct stat info {};
    if (ec || ::stat(folder.c_str(), &info) != 0 || !S_ISDIR(info.st_mode))
        return Error(ErrorCode::Io, "Cannot make the folder '" + folder.string()
                                        + "' for the control plane's socket; check its parent.");
    if (info.st_uid != ::geteuid() || (info.st_mode & (S_IRWXG | S_IRWXO)) != 0)
        return Error(ErrorCode::PermissionDenied,
                     "The folder '" + folder.string()
                         + "' for the control plane's socket is not yours alone; use a folder "
                           "with mode 0700 that you own.");
    return success();
}

// Whether `pid` has ended (reaped here), without waiting; its status in `status`.
bool ended(pid_t pid, int& status)
{
    pid_t got = 0;
    while ((got = ::waitpid(pid, &status, WNOHANG)) < 0 && errno == EINTR) {
    }
    return got == pid || got < 0;
}

}  // namespace

LocalControlPlane::LocalControlPlane(pid_t pid, std::string endpoint)
    : pid_(pid)
    , endpoint_(std::move(endpoint))
{
}

LocalControlPlane::LocalControlPlane(LocalControlPlane&& other) noexcept
    : pid_(std::exchange(other.pid_, 0))
    , endpoint_(std::move(other.endpoint_))
{
}

LocalControlPlane::~LocalControlPlane()
{
    (void)stop();
}

// Over 100 lines: the daemon's start in its order (run folder, socket, child, passphrase on
// a pipe, readiness, fingerprint), each step's failure stopping the child it started.
Result<LocalControlPlane> LocalControlPlane::start(const LocalControlOptions& options,
                                                   crypto::SecretBytes passphrase)
{
    SEALTRAIN_TRY(privateRunFolder(options.runFolder));
    const auto socket = options.runFolder / "control.sock";
    const auto ready = options.runFolder / "ready.json";
    std::error_code ignored;
    std::filesystem::remove(ready, ignored);  // a previous run's, which a crash left behind

    int fds[2] = {-1, -1};
    if (::pipe2(fds, O_CLOEXEC) != 0)
        return Error(ErrorCode::Io, "Cannot make a pipe for the passphrase; check the process "
                                    "limits.");
    ChildLaunch launch;
    launch.argv = {options.executable.string(),
                   "--data-dir",
                   options.dataDir.string(),
                   "--listen",
                   "unix:" + socket.string(),
                   "--ready-file",
                   ready.string()};
    launch.argv.insert(launch.argv.end(), options.extraArguments.begin(),
                       options.extraArguments.end());
    launch.standardInput = fds[0];
    launch.newSession = options.ownSession;
    int log = -1;
    if (!options.logFile.empty()) {
        log = ::open(options.logFile.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        if (log < 0) {
            ::close(fds[0]);
            ::close(fds[1]);
            return Error(ErrorCode::Io, "Cannot open the control plane's log '"
                                            + options.logFile.string()
                                            + "': " + std::strerror(errno) + "; check its folder.");
        }
        // Its standard output too: a daemon left running must not hold the starter's (a pipe
        // that whoever reads it waits on until the daemon ends).
        launch.standardError = log;
        launch.descriptors.emplace_back(log, STDOUT_FILENO);
    }
    auto started = spawnChild(launch);
    ::close(fds[0]);
    if (log >= 0)
        ::close(log);
    if (!started) {
        ::close(fds[1]);
        return started.error();
    }
    // A daemon that stopped before reading the passphrase makes this fail; the wait below says why.
    auto handed = handSecretLines(fds[1], {std::cref(passphrase)});
    passphrase.wipe();
    if (!handed) {
        ::kill(*started, SIGKILL);
        int status = 0;
        while (::waitpid(*started, &status, 0) < 0 && errno == EINTR) {
        }
        return handed.error();
    }

    LocalControlPlane plane(*started, "unix:" + socket.string());
    const auto deadline = std::chrono::steady_clock::now() + options.readyTimeout;
    for (;;) {
        int status = 0;
        if (ended(plane.pid_, status)) {
            plane.pid_ = 0;
            const std::string where = options.logFile.empty()
                                          ? std::string("its message above")
                                          : "its message in '" + options.logFile.string() + "'";
            return Error(
                ErrorCode::Io,
                "The control plane (sealtrain-control) stopped before it served (exit status "
                    + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + "); " + where
                    + " says why, such as a wrong passphrase or a data directory another "
                      "control plane has open.");
        }
        if (std::filesystem::exists(ready, ignored))
            return plane;
        if (std::chrono::steady_clock::now() > deadline) {
            (void)plane.stop(5s);
            return Error(ErrorCode::Io,
                         "The control plane (sealtrain-control) did not start serving in time and "
                         "was stopped; see its messages above.");
        }
        std::this_thread::sleep_for(kPoll);
    }
}

Result<void> LocalControlPlane::stop(std::chrono::milliseconds grace)
{
    if (pid_ <= 0)
        return success();
    const pid_t pid = std::exchange(pid_, 0);
    ::kill(pid, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + grace;
    int status = 0;
    while (!ended(pid, status)) {
        if (std::chrono::steady_clock::now() > deadline) {
            ::kill(pid, SIGKILL);
            while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
            return Error(ErrorCode::Internal,
                         "The control plane (sealtrain-control) did not stop within the grace "
                         "period and was killed; its last calls may not "
                         "have finished.");
        }
        std::this_thread::sleep_for(kPoll);
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return Error(ErrorCode::Internal,
                     "The control plane (sealtrain-control) did not stop cleanly; its messages "
                     "above say why.");
    return success();
}

pid_t LocalControlPlane::release() noexcept
{
    return std::exchange(pid_, 0);
}

std::optional<pid_t> LocalControlPlane::runningIn(const std::filesystem::path& runFolder)
{
    auto text = readWholeFile(runFolder / "ready.json", 4096);
    if (!text)
        return std::nullopt;
    const auto ready = nlohmann::json::parse(*text, nullptr, false);
    if (ready.is_discarded() || !ready.is_object() || !ready.contains("pid")
        || !ready["pid"].is_number_integer())
        return std::nullopt;
    const auto pid = ready["pid"].get<std::int64_t>();
    if (pid <= 1 || pid > std::numeric_limits<pid_t>::max())
        return std::nullopt;
    // The ready file outlives a daemon that was killed, and its pid may since be another
    // program's: only a live sealtrain-control of this user's counts.
    const std::filesystem::path process = "/proc/" + std::to_string(pid);
    struct stat info {};
    if (::stat(process.c_str(), &info) != 0 || info.st_uid != ::geteuid())
        return std::nullopt;
    std::error_code ec;
    const auto executable = std::filesystem::read_symlink(process / "exe", ec);
    if (ec || executable.filename().string().rfind("sealtrain-control", 0) != 0)
        return std::nullopt;
    auto status = readWholeFile(process / "status", 1U << 16U);
    if (!status || status->find("\nState:\tZ") != std::string::npos)
        return std::nullopt;  // ended, not yet reaped
    return static_cast<pid_t>(pid);
}

Result<bool> LocalControlPlane::stopRunning(const std::filesystem::path& runFolder,
                                            std::chrono::milliseconds grace)
{
    const auto pid = runningIn(runFolder);
    if (!pid)
        return false;
    ::kill(*pid, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + grace;
    // The process itself is watched, not its ready file: the daemon removes that file before
    // its last work (the final signed head; under the sanitizers, the leak check), and a caller
    // told "stopped" must not find it still running.
    const auto gone = [&] {
        int status = 0;
        const pid_t reaped = ::waitpid(*pid, &status, WNOHANG);
        if (reaped == *pid)
            return true;  // our own child (started by this process and released), reaped here
        if (reaped == 0)
            return false;  // our child, still running
        if (::kill(*pid, 0) != 0 && errno == ESRCH)
            return true;
        auto state = readWholeFile("/proc/" + std::to_string(*pid) + "/status", 1U << 16U);
        return !state
               || state->find("\nState:\tZ") != std::string::npos;  // ended, not ours to reap
    };
    while (!gone()) {
        if (std::chrono::steady_clock::now() > deadline) {
            ::kill(*pid, SIGKILL);
            return Error(ErrorCode::Internal,
                         "The control plane (sealtrain-control) did not stop within the grace "
                         "period and was killed; its last calls may not have finished.");
        }
        std::this_thread::sleep_for(kPoll);
    }
    std::error_code ignored;
    std::filesystem::remove(runFolder / "ready.json", ignored);
    return true;
}

}  // namespace sealtrain::api
