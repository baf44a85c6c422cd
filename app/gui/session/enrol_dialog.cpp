// The one-time code dialog (enrol_dialog.h).
#include "enrol_dialog.h"

#include "common/colors.h"

#include "../common/background.h"
#include "qr_code.h"
#include "session.h"

#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QUrl>
#include <QUrlQuery>
#include <QVBoxLayout>

#include <memory>

namespace sealtrain::gui {

QString otpauthSecret(const QByteArray& uri)
{
    const QUrl url(QString::fromUtf8(uri));
    if (url.scheme() != "otpauth")
        return {};
    return QUrlQuery(url).queryItemValue("secret");
}

EnrolDialog::EnrolDialog(Session& session, QWidget* parent)
    : QDialog(parent)
    , session_(session)
    , user_(new QLineEdit(this))
    , code_(new QLineEdit(this))
    , password_(new QLineEdit(this))
    , repeat_(new QLineEdit(this))
    , submit_(new QPushButton(tr("&Set my password"), this))
    , error_(new QLabel(this))
    , qr_(new QLabel(this))
    , secret_(new QLineEdit(this))
    , explain_(new QLabel(this))
    , done_(new QPushButton(tr("&Done: sign in"), this))
{
    setObjectName("enrolDialog");
    setWindowTitle(tr("Enrol with a one-time code"));
    setMinimumWidth(fontMetrics().horizontalAdvance('M') * 36);
    const auto name = [](QWidget* widget, const char* object, const QString& accessible) {
        widget->setObjectName(object);
        widget->setAccessibleName(accessible);
    };
    name(user_, "enrolUser", tr("User"));
    name(code_, "enrolCode", tr("One-time code"));
    name(password_, "enrolPassword", tr("New password"));
    name(repeat_, "enrolRepeat", tr("New password again"));
    name(submit_, "enrolSubmit", tr("Set my password"));
    name(error_, "enrolError", tr("Error"));
    name(qr_, "enrolQr", tr("QR code of the new TOTP secret, for an authenticator app"));
    name(secret_, "enrolSecret", tr("The new TOTP key, to type into an authenticator app"));
    name(done_, "enrolDone", tr("Done: sign in"));
    code_->setPlaceholderText("rc_…");  // not translated: the code's own prefix
    code_->setEchoMode(QLineEdit::Password);
    password_->setEchoMode(QLineEdit::Password);
    repeat_->setEchoMode(QLineEdit::Password);
    error_->setWordWrap(true);
    error_->setStyleSheet(toneStyle(Tone::Bad));
    secret_->setReadOnly(true);
    explain_->setWordWrap(true);
    explain_->setText(tr("Scan the code with your authenticator app (or type the key into it). "
                         "It is shown this once: the control plane keeps it sealed and nobody "
                         "can show it again. Then sign in with your new password and the app's "
                         "six digits."));
    submit_->setDefault(true);
    for (QWidget* widget : std::initializer_list<QWidget*>{qr_, secret_, explain_, done_})
        widget->hide();

    auto* form = new QFormLayout;
    form->addRow(tr("&User"), user_);
    form->addRow(tr("One-time &code"), code_);
    form->addRow(tr("New &password"), password_);
    form->addRow(tr("&Again"), repeat_);
    form->addRow(submit_);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(error_);
    layout->addWidget(qr_, 0, Qt::AlignHCenter);
    layout->addWidget(secret_);
    layout->addWidget(explain_);
    layout->addWidget(done_, 0, Qt::AlignRight);
    connect(submit_, &QPushButton::clicked, this, &EnrolDialog::submit);
    connect(done_, &QPushButton::clicked, this, &QDialog::accept);
    connect(this, &QDialog::finished, this, &EnrolDialog::forget);
}

EnrolDialog::~EnrolDialog()
{
    forget();
}

QString EnrolDialog::user() const
{
    return user_->text().trimmed();
}

void EnrolDialog::submit()
{
    if (user().isEmpty() || code_->text().trimmed().isEmpty() || password_->text().isEmpty()) {
        error_->setText(tr("Type your user name, the one-time code and a new password."));
        return;
    }
    if (password_->text() != repeat_->text()) {
        error_->setText(tr("The two passwords differ; type the same one twice."));
        return;
    }
    auto password = secretOf(password_->text());
    password_->clear();
    repeat_->clear();
    if (!password) {
        error_->setText(sentence(password.error()));
        return;
    }
    error_->clear();
    submit_->setEnabled(false);
    runInBackground(
        this,
        [profile = session_.profile(), user = user().toStdString(),
         code = code_->text().trimmed().toStdString(),
         secret = std::move(*password)] { return profile.completeReset(user, code, *secret); },
        [this](Result<std::string> uri) {
            submit_->setEnabled(true);
            if (!uri) {
                error_->setText(sentence(uri.error()));
                return;
            }
            code_->clear();
            QByteArray bytes = QByteArray::fromStdString(*uri);
            std::fill(uri->begin(), uri->end(), '\0');
            showSecret(std::move(bytes));
        });
}

void EnrolDialog::showSecret(QByteArray uri)
{
    showQr(*qr_, uri);
    secret_->setText(otpauthSecret(uri));
    uri.fill('\0');
    for (QWidget* widget : std::initializer_list<QWidget*>{code_, password_, repeat_, submit_})
        widget->setEnabled(false);
    for (QWidget* widget : std::initializer_list<QWidget*>{qr_, secret_, explain_, done_})
        widget->show();
    enrolled_ = true;
    done_->setFocus();
    adjustSize();
}

void EnrolDialog::forget()
{
    qr_->clear();
    secret_->clear();
    code_->clear();
    password_->clear();
    repeat_->clear();
}

}  // namespace sealtrain::gui
