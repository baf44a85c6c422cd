// The window's session (session.h).
#include "session.h"

#include "../common/background.h"

namespace sealtrain::gui {

QString sentence(const Error& error)
{
    return QString::fromStdString(error.message());
}

Session::Session(std::filesystem::path profileFolder, std::filesystem::path controlExecutable,
                 QObject* parent)
    : QObject(parent)
    , profile_(std::move(profileFolder))
    , controlExecutable_(std::move(controlExecutable))
{
}

bool Session::holds(const std::string& permission) const
{
    return who_ && who_->holds(permission);
}

QString Session::endpointText() const
{
    auto endpoint = profile_.endpoint();
    if (!endpoint)
        return sentence(endpoint.error());
    return QString::fromStdString(endpoint->address);
}

bool Session::canStartWorkstation() const
{
    auto workstation = profile_.workstation();
    return !controlExecutable_.empty() && workstation && workstation->has_value()
           && !profile_.workstationPid();
}

bool Session::canCreateWorkstation() const
{
    auto workstation = profile_.workstation();
    return !initExecutable_.empty() && !profile_.endpoint() && workstation && !*workstation;
}

void Session::connectTo(const QString& address, const QString& fingerprint)
{
    const api::Profile profile = profile_;
    runInBackground(
        this,
        [profile, address = address.toStdString(), fingerprint = fingerprint.toStdString()] {
            return profile.connect(address, "localhost", fingerprint);
        },
        [this](const Result<void>& done) {
            if (!done) {
                emit failed(sentence(done.error()));
                return;
            }
            emit connected();
        });
}

Result<std::shared_ptr<crypto::SecretBytes>> secretOf(const QString& typed)
{
    QByteArray utf8 = typed.toUtf8();
    auto secret =
        crypto::SecretBytes::fromBytes({reinterpret_cast<const std::uint8_t*>(utf8.constData()),
                                        static_cast<std::size_t>(utf8.size())});
    utf8.fill('\0');
    if (!secret)
        return secret.error();
    return std::make_shared<crypto::SecretBytes>(std::move(*secret));
}

void Session::startWorkstation(const QString& passphrase)
{
    auto shared = secretOf(passphrase);
    if (!shared) {
        emit failed(sentence(shared.error()));
        return;
    }
    const api::Profile profile = profile_;
    runInBackground(
        this,
        [profile, executable = controlExecutable_, shared = std::move(*shared)] {
            auto copy = shared->copy();
            if (!copy)
                return Result<pid_t>(copy.error());
            return profile.startWorkstation(executable, std::move(*copy));
        },
        [this](const Result<pid_t>& started) {
            if (!started) {
                emit failed(sentence(started.error()));
                return;
            }
            emit workstationStarted();
        });
}

void Session::signIn(const QString& user, const QString& password, const QString& totpCode)
{
    auto typed = secretOf(password);
    if (!typed) {
        emit failed(sentence(typed.error()));
        return;
    }
    const api::Profile profile = profile_;
    std::shared_ptr<crypto::SecretBytes> shared = std::move(*typed);
    struct Outcome {
        std::shared_ptr<api::ControlClient> client;
        std::optional<api::WhoAmI> who;
        std::optional<Error> error;
    };
    runInBackground(
        this,
        [profile, shared, name = user.toStdString(), code = totpCode.toStdString()] {
            Outcome outcome;
            auto signedIn = profile.signIn(name, *shared, code);
            if (!signedIn) {
                outcome.error = signedIn.error();
                return outcome;
            }
            auto client = profile.client(name);
            if (!client) {
                outcome.error = client.error();
                return outcome;
            }
            outcome.client = std::move(*client);
            auto who = outcome.client->sessions().whoAmI();
            if (!who) {
                outcome.error = who.error();
                return outcome;
            }
            outcome.who = std::move(*who);
            return outcome;
        },
        [this, name = user.toStdString()](Outcome outcome) {
            if (outcome.error) {
                emit failed(sentence(*outcome.error));
                return;
            }
            client_ = std::move(outcome.client);
            who_ = std::move(outcome.who);
            user_ = name;
            emit signedInChanged();
            emit whoChanged();
        });
}

void Session::refresh()
{
    if (!client_)
        return;
    runInBackground(
        this, [client = client_] { return client->sessions().whoAmI(); },
        [this](Result<api::WhoAmI> who) {
            if (!who) {
                if (who.error().code() == ErrorCode::Unauthenticated)
                    lose(sentence(who.error()));
                return;
            }
            who_ = std::move(*who);
            emit whoChanged();
        });
}

void Session::signOut()
{
    if (user_.empty())
        return;
    forget(true);
}

void Session::lose(const QString& reason)
{
    if (!client_)
        return;
    // The server ended the session; the stored key and certificate are worth nothing now.
    forget(false);
    emit failed(reason);
}

void Session::forget(bool reportFailure)
{
    const api::Profile profile = profile_;
    const std::string user = user_;
    client_.reset();
    who_.reset();
    user_.clear();
    emit signedInChanged();
    runInBackground(
        this, [profile, user] { return profile.signOut(user); },
        [this, reportFailure](const Result<void>& done) {
            if (!done && reportFailure)
                emit failed(sentence(done.error()));
        });
}

}  // namespace sealtrain::gui
