// The first run on a workstation: make a data directory of one's own and its first admin, as
// `sealtrainctl init` does (it is what runs: the GUI links no core/ and never holds the keyring).
// The form takes the folder, the admin's name, the keyring passphrase and the admin's password
// (each twice); both secrets go to sealtrainctl on its standard input, never in its arguments,
// its environment or a file. Then, once: the admin's TOTP secret as a QR code and as the key, the
// platform CA's fingerprint (what other machines pin), and what to keep safe. The profile then
// names the new control plane, which the sign-in page offers to start.
#pragma once

#include <QDialog>
#include <QStringList>

#include <filesystem>

class QLabel;
class QLineEdit;
class QProcess;
class QProgressBar;
class QPushButton;

namespace sealtrain::gui {

class FirstRunDialog final : public QDialog {
    Q_OBJECT

public:
    // `initExecutable`: sealtrainctl; `profileFolder`: the profile to name the new directory in;
    // `extraArguments`: more `sealtrainctl init` options (tests: a cheaper Argon2id).
    FirstRunDialog(std::filesystem::path initExecutable, std::filesystem::path profileFolder,
                   QStringList extraArguments = {}, QWidget* parent = nullptr);
    ~FirstRunDialog() override;

    [[nodiscard]] bool created() const noexcept { return created_; }
    [[nodiscard]] QString admin() const;

private:
    void create();
    void finished(int exitCode);
    void forget();

    std::filesystem::path initExecutable_;
    std::filesystem::path profileFolder_;
    QStringList extraArguments_;
    QLineEdit* dataDir_;
    QLineEdit* admin_;
    QLineEdit* passphrase_;
    QLineEdit* passphraseAgain_;
    QLineEdit* password_;
    QLineEdit* passwordAgain_;
    QPushButton* create_;
    QProgressBar* busy_;
    QLabel* error_;
    QLabel* qr_;
    QLineEdit* secret_;
    QLabel* facts_;
    QPushButton* done_;
    QWidget* form_;
    QLineEdit* fingerprint_;
    QProcess* process_ = nullptr;
    bool created_ = false;
};

}  // namespace sealtrain::gui
