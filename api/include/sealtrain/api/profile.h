// A client's profile (issue #28, item 3): everything a client of sealtrain-control keeps between
// runs, in one folder of this user's, so that the CLI and the GUI keep it the same way. It holds
// the endpoint and the pinned platform CA, each signed-in user's private key and the certificate
// the control plane issued for their session, and, on a workstation, where the local data
// directory is and where its control plane listens. It holds no platform key: a client never
// opens the data directory (docs/architecture.md). The folder's files are described in
// docs/formats/client-profile.md.
//
// Sign-in, completing a reset, choosing whose session a command uses, sign-out, and starting and
// stopping the workstation's control plane (LocalControlPlane) are here; the commands that use a
// session are ControlClient's.
#pragma once

#include "sealtrain/api/client.h"
#include "sealtrain/api/local_control.h"
#include "sealtrain/base/result.h"
#include "sealtrain/crypto/secret_bytes.h"

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sealtrain::api {

// The environment variables a profile reads.
inline constexpr const char* kProfileEnvironment = "SEALTRAIN_CLIENT_DIR";
inline constexpr const char* kUserEnvironment = "SEALTRAIN_USER";

// A data directory on this machine whose control plane this profile starts and stops.
struct Workstation {
    std::filesystem::path dataDir;
    // The control plane's socket and ready file (mode 0700).
    std::filesystem::path runFolder;
};

// A signed-in user's stored session, as the profile knows it.
struct StoredSession {
    std::string user;
    // When its certificate stops being accepted; 0 once it has (or when it does not verify
    // against the pinned CA).
    std::int64_t expiresUnix = 0;
};

class Profile final {
public:
    // $SEALTRAIN_CLIENT_DIR, else $XDG_CONFIG_HOME/sealtrain/client, else
    // ~/.config/sealtrain/client.
    [[nodiscard]] static std::filesystem::path defaultFolder();

    explicit Profile(std::filesystem::path folder);

    [[nodiscard]] const std::filesystem::path& folder() const noexcept { return folder_; }

    // Fetches the CA of the control plane at `address` (host:port or unix:/path), keeps it only
    // when its fingerprint is `fingerprint`, and remembers both; the users signed in to another
    // endpoint before are forgotten (their certificates would not be accepted there).
    [[nodiscard]] Result<void> connect(const std::string& address, const std::string& serverName,
                                       const std::string& fingerprint) const;
    // The endpoint `connect` or `useWorkstation` stored; NotFound, saying what to run, when none.
    [[nodiscard]] Result<Endpoint> endpoint() const;

    // Makes this profile the client of the data directory `workstation.dataDir`: its control
    // plane listens on a socket in `workstation.runFolder` and its CA (read from the data
    // directory, which keeps it in the clear) is pinned. Users signed in before are forgotten.
    [[nodiscard]] Result<void> useWorkstation(const Workstation& workstation) const;
    // The workstation this profile names, if any.
    [[nodiscard]] Result<std::optional<Workstation>> workstation() const;
    // The process id of the workstation's control plane when it is running (its ready file names
    // a live sealtrain-control of this user's); nullopt when it is not.
    [[nodiscard]] std::optional<pid_t> workstationPid() const;
    // Starts the workstation's control plane with `passphrase` and leaves it running after this
    // process ends; its messages go to control.log in the run folder. AlreadyExists when it is
    // running; NotFound when this profile names no workstation.
    [[nodiscard]] Result<pid_t>
    startWorkstation(const std::filesystem::path& executable, crypto::SecretBytes passphrase,
                     const std::vector<std::string>& extraArguments = {}) const;
    // Asks the workstation's control plane to finish (SIGTERM) and waits up to `grace` for it
    // to end. Returns false when it was not running.
    [[nodiscard]] Result<bool>
    stopWorkstation(std::chrono::milliseconds grace = std::chrono::seconds(30)) const;

    // Signs `user` in with password and TOTP code and stores the new key (mode 0600) and
    // certificate; replaces a session stored before for `user` (signing it out on the server
    // is `signOut`'s).
    [[nodiscard]] Result<StoredSession> signIn(const std::string& user,
                                               const crypto::SecretBytes& password,
                                               const std::string& totpCode) const;
    // Completes a reset or an enrolment with the one-time code: sets `password` and returns the
    // otpauth:// URI of the user's new TOTP secret (shown once). Stores nothing: the user signs
    // in next.
    [[nodiscard]] Result<std::string> completeReset(const std::string& user,
                                                    const std::string& code,
                                                    const crypto::SecretBytes& password) const;

    // Whose session a command uses: `named` when given, else $SEALTRAIN_USER, else the one user
    // signed in here. InvalidArgument, saying how to choose, otherwise.
    [[nodiscard]] Result<std::string> chooseUser(const std::string& named) const;
    // The users signed in here, by name.
    [[nodiscard]] std::vector<StoredSession> sessions() const;
    // A client authenticated as `user`; NotFound when `user` has not signed in here and
    // Unauthenticated, saying to sign in again, when their certificate has expired.
    [[nodiscard]] Result<std::unique_ptr<ControlClient>> client(const std::string& user) const;
    // A client without a certificate (sign-in, a reset's completion, the CA).
    [[nodiscard]] Result<std::unique_ptr<ControlClient>> anonymousClient() const;
    // Ends `user`'s session on the control plane and forgets its key and certificate. The
    // stored files are removed even when the control plane can not be reached; the error says
    // so then.
    [[nodiscard]] Result<void> signOut(const std::string& user) const;

private:
    [[nodiscard]] Result<void> forgetSessions() const;
    [[nodiscard]] Result<void> storeEndpoint(const Endpoint& endpoint) const;
    std::filesystem::path folder_;
};

}  // namespace sealtrain::api
