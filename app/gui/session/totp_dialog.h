// "Change two-factor…": the signed-in user moves their TOTP second factor to a new
// authenticator (Sessions.StartTotpChange, then ConfirmTotpChange). First the password and a
// code from the current authenticator; the control plane then makes a new secret, shown here
// once as a QR code and as a key; a code from it confirms it, and the user's other sessions end.
// A wrong password or current code ends this session (back to sign-in with the server's
// sentence); a wrong new code does not, and the third discards the new secret ("Start over").
// Nothing of the secret is kept: it is cleared once confirmed, on Start over and on close.
#pragma once

#include <QDialog>

class QLabel;
class QLineEdit;
class QPushButton;

namespace sealtrain::gui {

class Session;

class TotpDialog final : public QDialog {
    Q_OBJECT

public:
    explicit TotpDialog(Session& session, QWidget* parent = nullptr);
    ~TotpDialog() override;

    // Whether the new secret is on screen, waiting for a code from it.
    [[nodiscard]] bool waitingForCode() const noexcept { return waiting_; }

private:
    void start();
    void confirm();
    void showSecret(QByteArray uri, std::int64_t expires);
    void startOver();
    void error(const QString& text);
    void forget();

    Session& session_;
    QLineEdit* password_;
    QLineEdit* current_;
    QPushButton* start_;
    QLabel* qr_;
    QLineEdit* secret_;
    QLabel* explain_;
    QLineEdit* newCode_;
    QPushButton* confirm_;
    QPushButton* restart_;
    QLabel* message_;
    bool waiting_ = false;
};

}  // namespace sealtrain::gui
