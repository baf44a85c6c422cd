// "Change password…": the signed-in user's own new password (Sessions.ChangePassword). The
// current password and the new one twice; the server checks the current one and its policy,
// stores the new hash and ends the user's other sessions. A wrong current password ends this
// session too (so that each guess costs a sign-in): the window goes back to sign-in with the
// server's sentence.
#pragma once

#include <QDialog>

class QLabel;
class QLineEdit;
class QPushButton;

namespace sealtrain::gui {

class Session;

class PasswordDialog final : public QDialog {
    Q_OBJECT

public:
    explicit PasswordDialog(Session& session, QWidget* parent = nullptr);

private:
    void submit();

    Session& session_;
    QLineEdit* current_;
    QLineEdit* next_;
    QLineEdit* again_;
    QPushButton* change_;
    QLabel* message_;
};

}  // namespace sealtrain::gui
