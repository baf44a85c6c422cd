// The sign-in screen (sign_in_page.h).
#include "sign_in_page.h"

#include "common/colors.h"

#include "../common/row_model.h"
#include "enrol_dialog.h"
#include "first_run_dialog.h"
#include "session.h"

#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace sealtrain::gui {
// Over 100 lines: every widget of the sign-in page made, named and laid out where it
// shows, read top to bottom as the screen.
SignInPage::SignInPage(Session& session, QWidget* parent)
    : QWidget(parent)
    , session_(session)
    , title_(new QLabel(this))
    , endpoint_(new QLabel(this))
    , connectBox_(new QGroupBox(tr("Connect to a control plane"), this))
    , address_(namedField(connectBox_, "connectAddress", tr("Address"), "host:port"))
    , fingerprint_(namedField(connectBox_, "connectFingerprint", tr("CA fingerprint"), "sha256:…"))
    , connect_(new QPushButton(tr("&Connect"), connectBox_))
    , startBox_(new QGroupBox(tr("This workstation's control plane is not running"), this))
    , passphrase_(namedField(startBox_, "startPassphrase", tr("Keyring passphrase")))
    , start_(new QPushButton(tr("S&tart it"), startBox_))
    , user_(namedField(this, "signInUser", tr("User")))
    , password_(namedField(this, "signInPassword", tr("Password")))
    , totp_(namedField(this, "signInTotp", tr("TOTP code"), tr("6 digits from your authenticator")))
    , signIn_(new QPushButton(tr("&Sign in"), this))
    , enrol_(new QPushButton(tr("I have a &one-time code…"), this))
    , firstRun_(new QPushButton(tr("&Make a control plane on this workstation…"), this))
    , error_(new QLabel(this))
{
    setObjectName("signInPage");
    title_->setObjectName("signInTitle");
    QFont big = title_->font();
    big.setPointSizeF(big.pointSizeF() * 1.4);
    big.setBold(true);
    title_->setFont(big);
    endpoint_->setObjectName("signInEndpoint");
    endpoint_->setWordWrap(true);
    endpoint_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    connectBox_->setObjectName("connectBox");
    connect_->setObjectName("connectButton");
    startBox_->setObjectName("startBox");
    start_->setObjectName("startButton");
    signIn_->setObjectName("signInButton");
    signIn_->setDefault(true);
    enrol_->setObjectName("oneTimeCodeButton");
    enrol_->setFlat(true);
    firstRun_->setObjectName("firstRunButton");
    error_->setObjectName("signInError");
    error_->setWordWrap(true);
    error_->setStyleSheet(toneStyle(Tone::Bad));
    error_->setAccessibleName(tr("Error"));
    password_->setEchoMode(QLineEdit::Password);
    passphrase_->setEchoMode(QLineEdit::Password);
    totp_->setMaxLength(8);
    totp_->setInputMethodHints(Qt::ImhDigitsOnly);

    auto* connectForm = new QFormLayout(connectBox_);
    connectForm->addRow(tr("&Address"), address_);
    connectForm->addRow(tr("CA &fingerprint"), fingerprint_);
    connectForm->addRow(connect_);
    auto* startForm = new QFormLayout(startBox_);
    startForm->addRow(tr("Keyring &passphrase"), passphrase_);
    startForm->addRow(start_);

    auto* form = new QFormLayout;
    form->addRow(tr("&User"), user_);
    form->addRow(tr("Pass&word"), password_);
    form->addRow(tr("T&OTP code"), totp_);
    form->addRow(signIn_);
    form->addRow(enrol_);

    auto* column = new QVBoxLayout;
    column->addWidget(title_);
    column->addWidget(endpoint_);
    column->addWidget(connectBox_);
    column->addWidget(firstRun_);
    column->addWidget(startBox_);
    column->addLayout(form);
    column->addWidget(error_);
    column->addStretch();
    // A column of a readable width in the middle, however wide the window.
    auto* holder = new QWidget(this);
    holder->setLayout(column);
    holder->setMaximumWidth(fontMetrics().horizontalAdvance('M') * 48);
    auto* centre = new QHBoxLayout(this);
    centre->addStretch(1);
    centre->addWidget(holder, 4);
    centre->addStretch(1);
    setTabOrder(user_, password_);
    setTabOrder(password_, totp_);
    setTabOrder(totp_, signIn_);
    setTabOrder(signIn_, enrol_);
    connect(enrol_, &QPushButton::clicked, this, &SignInPage::openEnrolment);
    connect(firstRun_, &QPushButton::clicked, this, &SignInPage::openFirstRun);

    connect(connect_, &QPushButton::clicked, this, [this] {
        setBusy(true);
        session_.connectTo(address_->text().trimmed(), fingerprint_->text().trimmed());
    });
    connect(start_, &QPushButton::clicked, this, [this] {
        setBusy(true);
        session_.startWorkstation(passphrase_->text());
        passphrase_->clear();
    });
    connect(signIn_, &QPushButton::clicked, this, [this] {
        if (user_->text().trimmed().isEmpty() || password_->text().isEmpty()
            || totp_->text().trimmed().isEmpty()) {
            showError(tr("Type your user name, password and TOTP code; all three are needed."));
            return;
        }
        setBusy(true);
        session_.signIn(user_->text().trimmed(), password_->text(), totp_->text().trimmed());
        password_->clear();
        totp_->clear();
    });
    connect(totp_, &QLineEdit::returnPressed, signIn_, &QPushButton::click);
    connect(&session_, &Session::failed, this, [this](const QString& message) {
        setBusy(false);
        showError(message);
    });
    connect(&session_, &Session::connected, this, [this] {
        setBusy(false);
        reset();
    });
    connect(&session_, &Session::workstationStarted, this, [this] {
        setBusy(false);
        reset();
    });
    connect(&session_, &Session::signedInChanged, this, [this] { setBusy(false); });
    reset();
}

void SignInPage::reset()
{
    const auto endpoint = session_.profile().endpoint();
    connectBox_->setVisible(!endpoint);
    firstRun_->setVisible(session_.canCreateWorkstation());
    startBox_->setVisible(session_.canStartWorkstation());
    endpoint_->setText(endpoint ? tr("Control plane: %1").arg(session_.endpointText())
                                : tr("No control plane yet: connect to one with its address and "
                                     "the CA fingerprint your admin gave you."));
    password_->clear();
    totp_->clear();
    passphrase_->clear();
    if (title_->text().isEmpty())
        title_->setText(tr("Sign in to Sealtrain"));
}

void SignInPage::setLocked(bool locked, const QString& user)
{
    title_->setText(locked ? tr("Locked: sign in again to go on") : tr("Sign in to Sealtrain"));
    if (locked && !user.isEmpty())
        user_->setText(user);
    reset();
}

void SignInPage::showError(const QString& message)
{
    error_->setText(message);
}

void SignInPage::openEnrolment()
{
    if (!session_.profile().endpoint()) {
        showError(tr("Connect to the control plane first; your admin gave you its address and "
                     "CA fingerprint."));
        return;
    }
    auto* dialog = new EnrolDialog(session_, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QDialog::accepted, this, [this, dialog] {
        user_->setText(dialog->user());
        password_->setFocus();
    });
    dialog->open();
}

void SignInPage::openFirstRun()
{
    auto* dialog = new FirstRunDialog(session_.initExecutable(), session_.profile().folder(),
                                      firstRunArguments_, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QDialog::finished, this, [this, dialog] {
        if (dialog->created())
            user_->setText(dialog->admin());
        reset();  // the profile names the new control plane: "Start it" shows
    });
    dialog->open();
}

void SignInPage::setBusy(bool busy)
{
    for (QWidget* widget : std::initializer_list<QWidget*>{connect_, start_, signIn_, enrol_})
        widget->setEnabled(!busy);
    if (busy)
        error_->clear();
}

}  // namespace sealtrain::gui
