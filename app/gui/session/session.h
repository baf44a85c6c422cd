// Who is signed in to which control plane, for the whole window: the client profile
// (api::Profile, shared with sealtrainctl), the signed-in user's client, and what WhoAmI said
// (the screens shown follow its permissions; the server still decides every call). Signing in,
// signing out and starting the workstation's control plane run off the GUI thread and report
// with signals. Holds no key of the platform's; the user's session key is the profile's file,
// forgotten at sign-out.
#pragma once

#include "common/background.h"
#include "sealtrain/api/client.h"
#include "sealtrain/api/profile.h"

#include <QObject>
#include <QString>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

namespace sealtrain::gui {

class Session final : public QObject {
    Q_OBJECT

public:
    // `controlExecutable`: the sealtrain-control to start for a workstation (empty: none).
    Session(std::filesystem::path profileFolder, std::filesystem::path controlExecutable,
            QObject* parent = nullptr);

    [[nodiscard]] const api::Profile& profile() const noexcept { return profile_; }
    // The signed-in user's client, shared with the calls in flight; null when signed out.
    [[nodiscard]] std::shared_ptr<api::ControlClient> client() const { return client_; }
    [[nodiscard]] const std::optional<api::WhoAmI>& who() const noexcept { return who_; }
    [[nodiscard]] bool signedIn() const noexcept { return client_ != nullptr && who_.has_value(); }
    // Platform.GetServerInfo off the GUI thread (any signed-in user; it appends no entry), its
    // answer handed to `done` on `receiver`'s thread; nothing when signed out.
    template <typename Done>
    void askServerInfo(QObject* receiver, Done done) const
    {
        if (auto client = client_)
            runInBackground(
                receiver, [client] { return client->platform().serverInfo(); }, std::move(done));
    }
    // Whether WhoAmI's permissions include `permission` (in any project).
    [[nodiscard]] bool holds(const std::string& permission) const;
    // Where this profile connects, for the sign-in screen ("unix:/…" or "host:port"), or the
    // sentence saying what to do when it names no control plane yet.
    [[nodiscard]] QString endpointText() const;
    // A workstation's control plane that is not running and that this GUI could start.
    [[nodiscard]] bool canStartWorkstation() const;
    // The sealtrain-control this desktop starts for a workstation and whose `verify-backup`
    // checks a backup archive (empty: none found).
    [[nodiscard]] const std::filesystem::path& controlExecutable() const noexcept
    {
        return controlExecutable_;
    }
    // sealtrainctl, which makes a workstation's data directory on the first run (empty: none).
    void setInitExecutable(std::filesystem::path executable)
    {
        initExecutable_ = std::move(executable);
    }
    [[nodiscard]] const std::filesystem::path& initExecutable() const noexcept
    {
        return initExecutable_;
    }
    // A profile that names no control plane yet, and a sealtrainctl to make one with.
    [[nodiscard]] bool canCreateWorkstation() const;

    // Pins the CA of the control plane at `address` by its fingerprint (sealtrainctl connect).
    void connectTo(const QString& address, const QString& fingerprint);
    // Starts this workstation's control plane with its keyring passphrase.
    void startWorkstation(const QString& passphrase);
    // Signs in with password and TOTP, then asks WhoAmI.
    void signIn(const QString& user, const QString& password, const QString& totpCode);
    // Asks WhoAmI again (permissions, limits, warnings).
    void refresh();
    // Ends the session on the server and forgets the key; signedOut follows.
    void signOut();
    // The session ended elsewhere (revoked, expired): forget it and go back to sign-in with
    // `reason`, the server's sentence.
    void lose(const QString& reason);

signals:
    void connected();
    void workstationStarted();
    void signedInChanged();  // signed in, or out
    void failed(const QString& message);
    void whoChanged();

private:
    // Drops the client and WhoAmI, says so (signedInChanged), then ends the session on the
    // server and removes its key and certificate from the profile; a failure of that is
    // reported only when `reportFailure` (after a revocation the server has ended it already).
    void forget(bool reportFailure);

    api::Profile profile_;
    std::filesystem::path controlExecutable_;
    std::filesystem::path initExecutable_;
    std::shared_ptr<api::ControlClient> client_;
    std::optional<api::WhoAmI> who_;
    std::string user_;
};

// The one sentence of an error for a person, as the server or the client library wrote it.
[[nodiscard]] QString sentence(const Error& error);

// A typed secret (a password, a passphrase) in locked memory that is wiped when freed; the
// UTF-8 copy made on the way is wiped too. The form's own copy (a QString) is cleared by the form
// once sent; Qt does not wipe what it frees.
[[nodiscard]] Result<std::shared_ptr<crypto::SecretBytes>> secretOf(const QString& typed);

}  // namespace sealtrain::gui
