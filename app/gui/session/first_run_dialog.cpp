// The first run on a workstation (first_run_dialog.h).
#include "first_run_dialog.h"

#include "common/colors.h"
#include "common/path_field.h"

#include "../common/row_model.h"
#include "enrol_dialog.h"
#include "qr_code.h"

#include "sealtrain/base/paths.h"

#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QVBoxLayout>

#include <utility>

namespace sealtrain::gui {

namespace {

// The last line sealtrainctl wrote to standard error: its one sentence.
QString lastLine(const QByteArray& text)
{
    const QList<QByteArray> lines = text.trimmed().split('\n');
    QString line = QString::fromUtf8(lines.isEmpty() ? QByteArray() : lines.last()).trimmed();
    line.remove(QRegularExpression("^sealtrainctl: (error: )?"));
    return line;
}

}  // namespace

FirstRunDialog::FirstRunDialog(std::filesystem::path initExecutable,
                               std::filesystem::path profileFolder, QStringList extraArguments,
                               QWidget* parent)
    : QDialog(parent)
    , initExecutable_(std::move(initExecutable))
    , profileFolder_(std::move(profileFolder))
    , extraArguments_(std::move(extraArguments))
    , dataDir_(namedField(this, "firstRunDataDir", tr("Data directory")))
    , admin_(namedField(this, "firstRunAdmin", tr("First admin's user name"), "a-z 0-9 _ -"))
    , passphrase_(namedSecretField(this, "firstRunPassphrase", tr("New keyring passphrase")))
    , passphraseAgain_(
          namedSecretField(this, "firstRunPassphraseAgain", tr("Keyring passphrase again")))
    , password_(namedSecretField(this, "firstRunPassword", tr("Admin's password")))
    , passwordAgain_(namedSecretField(this, "firstRunPasswordAgain", tr("Admin's password again")))
    , create_(new QPushButton(tr("&Create"), this))
    , busy_(new QProgressBar(this))
    , error_(new QLabel(this))
    , qr_(new QLabel(this))
    , secret_(namedField(this, "firstRunSecret", tr("The admin's TOTP key")))
    , facts_(new QLabel(this))
    , done_(new QPushButton(tr("&Done"), this))
    , form_(new QWidget(this))
    , fingerprint_(namedField(this, "firstRunFingerprint", tr("The platform CA's fingerprint")))
{
    setObjectName("firstRunDialog");
    setWindowTitle(tr("A control plane on this workstation"));
    setMinimumWidth(fontMetrics().horizontalAdvance('M') * 44);
    dataDir_->setText(QString::fromStdString(defaultDataDir().string()));
    create_->setObjectName("firstRunCreate");
    create_->setDefault(true);
    busy_->setObjectName("firstRunBusy");
    busy_->setRange(0, 0);  // no steps to count: the keyring's Argon2id takes what it takes
    busy_->setAccessibleName(tr("Creating the data directory"));
    busy_->hide();
    error_->setObjectName("firstRunError");
    error_->setWordWrap(true);
    error_->setStyleSheet(toneStyle(Tone::Bad));
    qr_->setObjectName("firstRunQr");
    qr_->setAccessibleName(tr("QR code of the admin's TOTP secret, for an authenticator app"));
    secret_->setReadOnly(true);
    facts_->setObjectName("firstRunFacts");
    facts_->setWordWrap(true);
    facts_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    done_->setObjectName("firstRunDone");
    for (QWidget* widget : std::initializer_list<QWidget*>{qr_, secret_, facts_, done_})
        widget->hide();

    auto* intro = new QLabel(tr("A data directory holds the keyring, the encrypted database, the "
                                "signing keys, the platform CA and the audit log. Only its "
                                "control plane opens it, with the keyring passphrase; keep that "
                                "passphrase safe: without it nobody can open the data again."),
                             this);
    intro->setWordWrap(true);
    auto* form = new QFormLayout(form_);
    form->addRow(tr("&Folder"), withBrowse(dataDir_, PathKind::Folder, tr("The data directory")));
    form->addRow(tr("First &admin"), admin_);
    form->addRow(tr("Keyring &passphrase"), passphrase_);
    form->addRow(tr("Passphrase a&gain"), passphraseAgain_);
    form->addRow(tr("Admin's pass&word"), password_);
    form->addRow(tr("Password ag&ain"), passwordAgain_);
    form->addRow(create_);
    fingerprint_->setReadOnly(true);
    fingerprint_->hide();
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(intro);
    layout->addWidget(form_);
    layout->addWidget(busy_);
    layout->addWidget(error_);
    layout->addWidget(qr_, 0, Qt::AlignHCenter);
    layout->addWidget(secret_);
    layout->addWidget(facts_);
    layout->addWidget(fingerprint_);
    layout->addWidget(done_, 0, Qt::AlignRight);
    connect(create_, &QPushButton::clicked, this, &FirstRunDialog::create);
    connect(done_, &QPushButton::clicked, this, &QDialog::accept);
    connect(this, &QDialog::finished, this, &FirstRunDialog::forget);
}

FirstRunDialog::~FirstRunDialog()
{
    if (process_ != nullptr && process_->state() != QProcess::NotRunning) {
        process_->kill();
        process_->waitForFinished(5000);
    }
    forget();
}

QString FirstRunDialog::admin() const
{
    return admin_->text().trimmed();
}

void FirstRunDialog::create()
{
    if (admin().isEmpty() || passphrase_->text().isEmpty() || password_->text().isEmpty()
        || dataDir_->text().trimmed().isEmpty()) {
        error_->setText(tr("Fill in the folder, the admin's name, a passphrase and a password."));
        return;
    }
    if (passphrase_->text() != passphraseAgain_->text()
        || password_->text() != passwordAgain_->text()) {
        error_->setText(tr("A passphrase or password typed twice differs; type it again."));
        return;
    }
    error_->clear();
    // Both secrets on standard input, one a line, in the order sealtrainctl reads them.
    QByteArray input = passphrase_->text().toUtf8() + '\n' + password_->text().toUtf8() + '\n';
    for (QLineEdit* field : std::initializer_list<QLineEdit*>{passphrase_, passphraseAgain_,
                                                              password_, passwordAgain_})
        field->clear();
    process_ = new QProcess(this);
    process_->setProgram(QString::fromStdString(initExecutable_.string()));
    QStringList arguments{"init",
                          "--data-dir",
                          dataDir_->text().trimmed(),
                          "--admin",
                          admin(),
                          "--passphrase-file",
                          "/dev/stdin",
                          "--admin-password-file",
                          "/dev/stdin",
                          "--client-dir",
                          QString::fromStdString(profileFolder_.string())};
    arguments << extraArguments_;
    process_->setArguments(arguments);
    connect(process_, &QProcess::finished, this, [this](int exitCode) { finished(exitCode); });
    connect(process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
        if (error == QProcess::FailedToStart)
            finished(-1);
    });
    create_->setEnabled(false);
    busy_->show();
    process_->start();
    process_->write(input);
    input.fill('\0');
    process_->closeWriteChannel();
}

void FirstRunDialog::finished(int exitCode)
{
    busy_->hide();
    QByteArray out = process_->readAllStandardOutput();
    const QByteArray err = process_->readAllStandardError();
    process_->deleteLater();
    process_ = nullptr;
    if (exitCode != 0) {
        create_->setEnabled(true);
        error_->setText(exitCode < 0 ? tr("Cannot run %1; reinstall Sealtrain.")
                                           .arg(QString::fromStdString(initExecutable_.string()))
                                     : lastLine(err));
        out.fill('\0');
        return;
    }
    QByteArray uri;
    QString fingerprint;
    for (const QByteArray& line : out.split('\n')) {
        const QByteArray trimmed = line.trimmed();
        if (trimmed.startsWith("otpauth://"))
            uri = trimmed;
        else if (trimmed.startsWith("Platform CA fingerprint:"))
            fingerprint = QString::fromUtf8(trimmed.mid(trimmed.indexOf(':') + 1)).trimmed();
    }
    out.fill('\0');
    showQr(*qr_, uri);
    secret_->setText(otpauthSecret(uri));
    uri.fill('\0');
    fingerprint_->setText(fingerprint);
    fingerprint_->setCursorPosition(0);
    facts_->setText(
        tr("<b>%1 is made</b>, with %2 as its first admin. Scan the code above with the admin's "
           "authenticator app (or type the key); it is shown this once. Keep the keyring "
           "passphrase where you keep such things: it is not stored anywhere and nobody can "
           "reset it. Next: start the control plane with the passphrase, then sign in as %2. "
           "Other machines connect by pinning the platform CA's fingerprint:")
            .arg(dataDir_->text().trimmed().toHtmlEscaped(), admin().toHtmlEscaped()));
    form_->hide();
    for (QWidget* widget :
         std::initializer_list<QWidget*>{qr_, secret_, facts_, fingerprint_, done_})
        widget->show();
    created_ = true;
    done_->setFocus();
    adjustSize();
}

void FirstRunDialog::forget()
{
    qr_->clear();
    secret_->clear();
    for (QLineEdit* field : std::initializer_list<QLineEdit*>{passphrase_, passphraseAgain_,
                                                              password_, passwordAgain_})
        field->clear();
}

}  // namespace sealtrain::gui
