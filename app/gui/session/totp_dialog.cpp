// "Change two-factor…" (totp_dialog.h).
#include "totp_dialog.h"

#include "common/colors.h"

#include "../common/background.h"
#include "../common/row_model.h"
#include "enrol_dialog.h"
#include "qr_code.h"
#include "session.h"

#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

#include <algorithm>

namespace sealtrain::gui {

TotpDialog::TotpDialog(Session& session, QWidget* parent)
    : QDialog(parent)
    , session_(session)
    , password_(namedSecretField(this, "totpPassword", tr("Password")))
    , current_(namedField(this, "totpCurrentCode", tr("Code from your current authenticator"),
                          tr("six digits")))
    , start_(new QPushButton(tr("&Show a new secret"), this))
    , qr_(new QLabel(this))
    , secret_(new QLineEdit(this))
    , explain_(new QLabel(this))
    , newCode_(namedField(this, "totpNewCode", tr("Code from the new secret"), tr("six digits")))
    , confirm_(new QPushButton(tr("&Confirm"), this))
    , restart_(new QPushButton(tr("Start &over"), this))
    , message_(new QLabel(this))
{
    setObjectName("totpDialog");
    setWindowTitle(tr("Change your two-factor authenticator"));
    setMinimumWidth(fontMetrics().horizontalAdvance('M') * 34);
    start_->setObjectName("totpStart");
    start_->setDefault(true);
    qr_->setObjectName("totpQr");
    qr_->setAccessibleName(tr("QR code of the new TOTP secret, for an authenticator app"));
    secret_->setObjectName("totpSecret");
    secret_->setAccessibleName(tr("The new TOTP key, to type into an authenticator app"));
    secret_->setReadOnly(true);
    confirm_->setObjectName("totpConfirm");
    restart_->setObjectName("totpRestart");
    message_->setObjectName("totpMessage");
    message_->setWordWrap(true);
    explain_->setWordWrap(true);
    auto* note = new QLabel(tr("For moving to a new phone or app while the old one still works "
                               "(lost it? ask an admin for a reset). A wrong password or code "
                               "ends this session."),
                            this);
    note->setWordWrap(true);
    auto* proof = new QFormLayout;
    proof->addRow(tr("&Password"), password_);
    proof->addRow(tr("Current &code"), current_);
    proof->addRow(start_);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(newCode_, 1);
    buttons->addWidget(confirm_);
    buttons->addWidget(restart_);
    auto* close = new QPushButton(tr("C&lose"), this);
    close->setObjectName("totpClose");
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(note);
    layout->addLayout(proof);
    layout->addWidget(qr_, 0, Qt::AlignHCenter);
    layout->addWidget(secret_);
    layout->addWidget(explain_);
    layout->addLayout(buttons);
    layout->addWidget(message_);
    layout->addWidget(close, 0, Qt::AlignRight);
    for (QWidget* widget :
         std::initializer_list<QWidget*>{qr_, secret_, explain_, newCode_, confirm_, restart_})
        widget->hide();
    connect(start_, &QPushButton::clicked, this, &TotpDialog::start);
    connect(confirm_, &QPushButton::clicked, this, &TotpDialog::confirm);
    connect(restart_, &QPushButton::clicked, this, &TotpDialog::startOver);
    connect(close, &QPushButton::clicked, this, &QDialog::reject);
    connect(this, &QDialog::finished, this, &TotpDialog::forget);
}

TotpDialog::~TotpDialog()
{
    forget();
}

void TotpDialog::error(const QString& text)
{
    message_->setStyleSheet(toneStyle(Tone::Bad));
    message_->setText(text);
}

void TotpDialog::start()
{
    if (password_->text().isEmpty() || current_->text().trimmed().isEmpty()) {
        error(tr("Type your password and the code your current authenticator shows."));
        return;
    }
    auto password = secretOf(password_->text());
    password_->clear();
    const std::string code = current_->text().trimmed().toStdString();
    current_->clear();
    if (!password) {
        error(sentence(password.error()));
        return;
    }
    auto client = session_.client();
    if (!client)
        return;
    start_->setEnabled(false);
    message_->clear();
    runInBackground(
        this,
        [client, code, password = std::move(*password)] {
            return client->sessions().startTotpChange(*password, code);
        },
        [this](Result<api::PendingTotpView> pending) {
            start_->setEnabled(true);
            if (!pending) {
                if (pending.error().code() == ErrorCode::Unauthenticated) {
                    // This session has ended: back to sign-in, with the server's sentence.
                    session_.lose(sentence(pending.error()));
                    reject();
                    return;
                }
                error(sentence(pending.error()));
                return;
            }
            QByteArray uri = QByteArray::fromStdString(pending->otpauthUri);
            std::fill(pending->otpauthUri.begin(), pending->otpauthUri.end(), '\0');
            showSecret(std::move(uri), pending->expiresUnix);
        });
}

void TotpDialog::showSecret(QByteArray uri, std::int64_t expires)
{
    showQr(*qr_, uri);
    secret_->setText(otpauthSecret(uri));
    uri.fill('\0');
    explain_->setText(tr("Scan the code with your new authenticator (or type the key into it), "
                         "then type the six digits it shows and confirm before %1. Until then "
                         "your current authenticator is the one that signs you in.")
                          .arg(utcText(expires)));
    for (QWidget* widget : std::initializer_list<QWidget*>{password_, current_, start_})
        widget->setEnabled(false);
    for (QWidget* widget :
         std::initializer_list<QWidget*>{qr_, secret_, explain_, newCode_, confirm_, restart_})
        widget->show();
    confirm_->setDefault(true);
    waiting_ = true;
    newCode_->setFocus();
    adjustSize();
}

void TotpDialog::confirm()
{
    const std::string code = newCode_->text().trimmed().toStdString();
    newCode_->clear();
    if (code.empty()) {
        error(tr("Type the code your new authenticator shows."));
        return;
    }
    auto client = session_.client();
    if (!client)
        return;
    confirm_->setEnabled(false);
    message_->clear();
    runInBackground(
        this, [client, code] { return client->sessions().confirmTotpChange(code); },
        [this](const Result<std::uint32_t>& ended) {
            confirm_->setEnabled(true);
            if (!ended) {
                // A wrong code keeps the session; the server's sentence says how many tries are
                // left, or that the new secret is gone (then Start over).
                error(sentence(ended.error()));
                if (ended.error().code() == ErrorCode::Unauthenticated) {
                    session_.lose(sentence(ended.error()));
                    reject();
                }
                return;
            }
            forget();
            for (QWidget* widget : std::initializer_list<QWidget*>{qr_, secret_, explain_, newCode_,
                                                                   confirm_, restart_, start_})
                widget->hide();
            password_->setEnabled(false);
            current_->setEnabled(false);
            waiting_ = false;
            message_->setStyleSheet({});
            message_->setText(*ended == 1 ? tr("Your new authenticator is the one now; 1 other "
                                               "session of yours ended.")
                                          : tr("Your new authenticator is the one now; %1 other "
                                               "sessions of yours ended.")
                                                .arg(*ended));
            adjustSize();
        });
}

void TotpDialog::startOver()
{
    forget();
    for (QWidget* widget :
         std::initializer_list<QWidget*>{qr_, secret_, explain_, newCode_, confirm_, restart_})
        widget->hide();
    for (QWidget* widget : std::initializer_list<QWidget*>{password_, current_, start_})
        widget->setEnabled(true);
    start_->setDefault(true);
    waiting_ = false;
    message_->clear();
    password_->setFocus();
    adjustSize();
}

void TotpDialog::forget()
{
    qr_->clear();
    secret_->clear();
    newCode_->clear();
    password_->clear();
    current_->clear();
}

}  // namespace sealtrain::gui
