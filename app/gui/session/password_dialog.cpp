// "Change password…" (password_dialog.h).
#include "password_dialog.h"

#include "common/colors.h"

#include "../common/background.h"
#include "../common/row_model.h"
#include "session.h"

#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace sealtrain::gui {

PasswordDialog::PasswordDialog(Session& session, QWidget* parent)
    : QDialog(parent)
    , session_(session)
    , current_(namedSecretField(this, "currentPassword", tr("Current password")))
    , next_(namedSecretField(this, "newPassword", tr("New password")))
    , again_(namedSecretField(this, "newPasswordAgain", tr("New password again")))
    , change_(new QPushButton(tr("&Change it"), this))
    , message_(new QLabel(this))
{
    setObjectName("passwordDialog");
    setWindowTitle(tr("Change your password"));
    setMinimumWidth(fontMetrics().horizontalAdvance('M') * 32);
    change_->setObjectName("changePasswordSubmit");
    change_->setDefault(true);
    message_->setObjectName("passwordMessage");
    message_->setWordWrap(true);
    auto* note = new QLabel(tr("Your other sessions end once it is changed. A wrong current "
                               "password ends this session too."),
                            this);
    note->setWordWrap(true);
    auto* form = new QFormLayout;
    form->addRow(tr("C&urrent password"), current_);
    form->addRow(tr("&New password"), next_);
    form->addRow(tr("&Again"), again_);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(note);
    layout->addLayout(form);
    layout->addWidget(change_, 0, Qt::AlignRight);
    layout->addWidget(message_);
    connect(change_, &QPushButton::clicked, this, &PasswordDialog::submit);
}

void PasswordDialog::submit()
{
    message_->setStyleSheet(toneStyle(Tone::Bad));
    if (current_->text().isEmpty() || next_->text().isEmpty()) {
        message_->setText(tr("Type your current password and a new one."));
        return;
    }
    if (next_->text() != again_->text()) {
        message_->setText(tr("The two new passwords differ; type the same one twice."));
        next_->clear();
        again_->clear();
        return;
    }
    auto current = secretOf(current_->text());
    auto next = secretOf(next_->text());
    for (QLineEdit* field : std::initializer_list<QLineEdit*>{current_, next_, again_})
        field->clear();
    if (!current || !next) {
        message_->setText(sentence(!current ? current.error() : next.error()));
        return;
    }
    auto client = session_.client();
    if (!client)
        return;
    change_->setEnabled(false);
    message_->clear();
    runInBackground(
        this,
        [client, current = std::move(*current), next = std::move(*next)] {
            return client->sessions().changePassword(*current, *next);
        },
        [this](const Result<std::uint32_t>& ended) {
            change_->setEnabled(true);
            if (!ended) {
                if (ended.error().code() == ErrorCode::Unauthenticated) {
                    // This session has ended: back to sign-in, with the server's sentence.
                    session_.lose(sentence(ended.error()));
                    reject();
                    return;
                }
                message_->setText(sentence(ended.error()));
                return;
            }
            message_->setStyleSheet({});
            message_->setText(*ended == 1
                                  ? tr("Your password is changed; 1 other session of yours "
                                       "ended.")
                                  : tr("Your password is changed; %1 other sessions of yours "
                                       "ended.")
                                        .arg(*ended));
        });
}

}  // namespace sealtrain::gui
