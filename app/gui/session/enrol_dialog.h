// "I have a one-time code": a new user's enrolment, or a user's first sign-in after a reset.
// They type their name, the code an admin handed them and a new password twice; the control
// plane sets the password and makes a new TOTP secret, which this dialog shows once, as a QR code
// to scan with an authenticator app and as the key to type into one. Nothing of it is stored
// here; closing the dialog forgets it, and the user signs in next with the password and a code.
#pragma once

#include <QDialog>

class QLabel;
class QLineEdit;
class QPushButton;

namespace sealtrain::gui {

class Session;

class EnrolDialog final : public QDialog {
    Q_OBJECT

public:
    explicit EnrolDialog(Session& session, QWidget* parent = nullptr);
    ~EnrolDialog() override;

    // The name typed, for the sign-in form once done.
    [[nodiscard]] QString user() const;
    // Whether the TOTP secret is on screen (the password is set).
    [[nodiscard]] bool enrolled() const noexcept { return enrolled_; }

private:
    void submit();
    void showSecret(QByteArray uri);
    void forget();

    Session& session_;
    QLineEdit* user_;
    QLineEdit* code_;
    QLineEdit* password_;
    QLineEdit* repeat_;
    QPushButton* submit_;
    QLabel* error_;
    QLabel* qr_;
    QLineEdit* secret_;
    QLabel* explain_;
    QPushButton* done_;
    bool enrolled_ = false;
};

// The base32 secret of an otpauth:// URI (what one types into an authenticator by hand); empty
// when the URI has none.
[[nodiscard]] QString otpauthSecret(const QByteArray& uri);

}  // namespace sealtrain::gui
