// The control plane of this workstation (issue #28, item 3): the client library starts
// sealtrain-control on a local data directory for a client that has one (the CLI, the GUI), so
// that the client itself never opens the data directory or holds a platform key. The passphrase
// goes to the daemon on a pipe (never in argv, the environment or a file) and is wiped; the daemon
// listens on a Unix socket in a private folder (mode 0700, this user's) that no other user can
// reach; stop() asks it to finish (SIGTERM: it completes the calls in flight and signs a final
// audit head). docs/operations/control-daemon.md, "A workstation".
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/crypto/secret_bytes.h"

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace sealtrain::api {

struct LocalControlOptions {
    std::filesystem::path executable;  // sealtrain-control
    std::filesystem::path dataDir;
    // The daemon's socket and ready file go here: made with mode 0700 when missing, refused when
    // another user owns it or others may enter it.
    std::filesystem::path runFolder;
    std::chrono::milliseconds readyTimeout{std::chrono::seconds(60)};
    std::vector<std::string> extraArguments;  // more sealtrain-control options
    // Where the daemon writes its messages, standard output and error (appended, mode 0600);
    // empty: ours.
    std::filesystem::path logFile;
    // The daemon leads a session of its own, so that it outlives the terminal that started it
    // (for a daemon left running: release()).
    bool ownSession = false;
};

class LocalControlPlane final {
public:
    // Starts the daemon and returns once it serves. Io, in one sentence, when it stopped before
    // it served (its own message, such as a wrong passphrase or a data directory in use, is on
    // standard error) or did not become ready in time; PermissionDenied for a run folder others
    // may enter. Either way no daemon is left running.
    [[nodiscard]] static Result<LocalControlPlane> start(const LocalControlOptions& options,
                                                         crypto::SecretBytes passphrase);

    LocalControlPlane(LocalControlPlane&& other) noexcept;
    LocalControlPlane& operator=(LocalControlPlane&&) = delete;
    LocalControlPlane(const LocalControlPlane&) = delete;
    LocalControlPlane& operator=(const LocalControlPlane&) = delete;
    // Stops a daemon still running (as stop() does).
    ~LocalControlPlane();

    // "unix:/…/control.sock": what a ControlClient connects to.
    [[nodiscard]] const std::string& endpoint() const noexcept { return endpoint_; }
    [[nodiscard]] pid_t pid() const noexcept { return pid_; }

    // SIGTERM, then waits up to `grace` (SIGKILL after it). Internal, saying how, when the daemon
    // did not end cleanly; success once it has stopped (also when stopped before).
    [[nodiscard]] Result<void> stop(std::chrono::milliseconds grace = std::chrono::seconds(30));

    // Leaves the daemon running when this object goes (`sealtrainctl start`); returns its pid.
    // stopRunning stops it later, from any process of this user's.
    pid_t release() noexcept;

    // The pid of the sealtrain-control serving in `runFolder` (its ready file names it, and that
    // process is alive, this user's, and runs sealtrain-control); nullopt otherwise.
    [[nodiscard]] static std::optional<pid_t> runningIn(const std::filesystem::path& runFolder);
    // Asks the daemon serving in `runFolder` to finish (SIGTERM) and waits up to `grace` for it
    // to end; false when none was running there. Internal when it did not end in time.
    [[nodiscard]] static Result<bool>
    stopRunning(const std::filesystem::path& runFolder,
                std::chrono::milliseconds grace = std::chrono::seconds(30));

private:
    LocalControlPlane(pid_t pid, std::string endpoint);
    pid_t pid_ = 0;
    std::string endpoint_;
};

}  // namespace sealtrain::api
