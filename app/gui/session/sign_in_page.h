// The first screen: which control plane (pin one by address and CA fingerprint, or start this
// workstation's own), then sign-in with password and TOTP code. The server's sentence is shown
// under the form when a step fails. Also the lock screen: after the idle time the window shows
// this page again, its content hidden, and only a new sign-in opens it. "I have a one-time code"
// opens the enrolment (a new user, or the first sign-in after a reset: enrol_dialog.h); a profile
// that names no control plane yet may make one on this workstation (first_run_dialog.h).
#pragma once

#include <QStringList>
#include <QWidget>

#include <utility>

class QGroupBox;
class QLabel;
class QLineEdit;
class QPushButton;

namespace sealtrain::gui {

class Session;

class SignInPage final : public QWidget {
    Q_OBJECT

public:
    explicit SignInPage(Session& session, QWidget* parent = nullptr);

    // More `sealtrainctl init` options for the first run (tests: a cheaper Argon2id).
    void setFirstRunArguments(QStringList arguments) { firstRunArguments_ = std::move(arguments); }

    // Shows the form as it should be now (which groups, the endpoint), clears the secrets.
    void reset();
    // `locked`: the window locked itself; says so above the form.
    void setLocked(bool locked, const QString& user);
    void showError(const QString& message);

private:
    void setBusy(bool busy);
    void openEnrolment();
    void openFirstRun();

    Session& session_;
    QLabel* title_;
    QLabel* endpoint_;
    QGroupBox* connectBox_;
    QLineEdit* address_;
    QLineEdit* fingerprint_;
    QPushButton* connect_;
    QGroupBox* startBox_;
    QLineEdit* passphrase_;
    QPushButton* start_;
    QLineEdit* user_;
    QLineEdit* password_;
    QLineEdit* totp_;
    QPushButton* signIn_;
    QPushButton* enrol_;
    QPushButton* firstRun_;
    QLabel* error_;
    QStringList firstRunArguments_;
};

}  // namespace sealtrain::gui
