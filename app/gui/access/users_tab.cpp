// The users tab (users_tab.h).
#include "users_tab.h"

#include <QComboBox>
#include <QDateTime>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QLocale>
#include <QSpinBox>
#include <QTableView>
#include <QVBoxLayout>

#include <chrono>

namespace sealtrain::gui {

UsersTab::UsersTab(const AccessCalls& calls, QWidget* parent)
    : QWidget(parent)
    , calls_(calls)
    , users_(new UserTableModel(this))
    , table_(new QTableView(this))
{
    setObjectName("usersTab");
    setUpTable(*table_, *users_, "usersTable", tr("Users"));
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(withFilter(*table_), 1);
    addUserRow();
    addGrantBox();
    newUser_ = namedField(this, "newUserName", tr("New user's name"), tr("new user's name"));
    auto* createButton = namedButton(tr("&Create user"), "createUserButton", this);
    auto* createRow = new QHBoxLayout;
    createRow->addWidget(newUser_, 1);
    createRow->addWidget(createButton);
    layout->addLayout(createRow);
    code_ = namedField(this, "accessCode", tr("The one-time code to hand over"),
                       tr("a one-time code appears here once; hand it over in person"));
    code_->setReadOnly(true);
    layout->addWidget(code_);
    connect(createButton, &QPushButton::clicked, this, &UsersTab::create);
}

// The row of what may be done to the selected user.
void UsersTab::addUserRow()
{
    auto* disableButton = namedButton(tr("&Disable"), "disableUserButton", this);
    auto* enableButton = namedButton(tr("&Enable"), "enableUserButton", this);
    auto* resetButton = namedButton(tr("Reset password and &TOTP"), "resetUserButton", this);
    auto* endSessions = namedButton(tr("End their &sessions"), "revokeUserSessionsButton", this);
    auto* row = new QHBoxLayout;
    row->addWidget(disableButton);
    row->addWidget(enableButton);
    row->addWidget(resetButton);
    row->addWidget(endSessions);
    row->addStretch(1);
    qobject_cast<QVBoxLayout*>(layout())->addLayout(row);
    connect(disableButton, &QPushButton::clicked, this, &UsersTab::disable);
    connect(resetButton, &QPushButton::clicked, this, &UsersTab::reset);
    connect(enableButton, &QPushButton::clicked, this, [this] {
        const std::string user = selectedUser();
        if (user.empty())
            return;
        calls_.call(
            this, [user](api::ControlClient& client) { return client.users().enableUser(user); },
            [this, user](auto) {
                calls_.say(tr("%1 may sign in again.").arg(QString::fromStdString(user)));
            });
    });
    connect(endSessions, &QPushButton::clicked, this, [this] {
        const std::string user = selectedUser();
        if (user.empty())
            return;
        calls_.call(
            this,
            [user](api::ControlClient& client) { return client.sessions().revokeSessions(user); },
            [this, user](auto) {
                calls_.say(tr("Every session of %1 has ended; their certificates are refused.")
                               .arg(QString::fromStdString(user)));
            });
    });
}

// The roles of the selected user and the emergency grant (grant.manage).
void UsersTab::addGrantBox()
{
    grantBox_ = new QGroupBox(tr("Roles of the selected user"), this);
    grantRole_ = new QComboBox(grantBox_);
    grantRole_->setObjectName("grantRole");
    grantRole_->setEditable(true);
    grantRole_->setAccessibleName(tr("Role to grant or revoke"));
    grantProject_ =
        namedField(grantBox_, "grantProject", tr("Project of the grant"), tr("every project"));
    auto* grantButton = namedButton(tr("&Grant"), "grantRoleButton", grantBox_);
    auto* revokeButton = namedButton(tr("Re&voke"), "revokeRoleButton", grantBox_);
    glassReason_ = namedField(grantBox_, "breakGlassReason", tr("Reason for the emergency grant"),
                              tr("why, e.g. the incident number (audited)"));
    glassHours_ = new QSpinBox(grantBox_);
    glassHours_->setObjectName("breakGlassHours");
    glassHours_->setAccessibleName(tr("Hours the emergency grant lasts"));
    glassHours_->setRange(1, 72);
    glassHours_->setValue(4);
    glassHours_->setSuffix(tr(" h"));
    auto* glass = namedButton(tr("&Break glass"), "breakGlassButton", grantBox_);
    auto* grantRow = new QHBoxLayout;
    grantRow->addWidget(grantRole_, 1);
    grantRow->addWidget(grantProject_, 1);
    grantRow->addWidget(grantButton);
    grantRow->addWidget(revokeButton);
    auto* glassRow = new QHBoxLayout;
    glassRow->addWidget(glassReason_, 2);
    glassRow->addWidget(glassHours_);
    glassRow->addWidget(glass);
    auto* form = new QFormLayout(grantBox_);
    form->addRow(tr("Role and project:"), grantRow);
    form->addRow(tr("Emergency grant:"), glassRow);
    qobject_cast<QVBoxLayout*>(layout())->addWidget(grantBox_);
    connect(grantButton, &QPushButton::clicked, this, [this] { grant(true); });
    connect(revokeButton, &QPushButton::clicked, this, [this] { grant(false); });
    connect(glass, &QPushButton::clicked, this, &UsersTab::breakGlass);
}

void UsersTab::setRoleNames(const QStringList& names)
{
    const QString typed = grantRole_->currentText();
    grantRole_->clear();
    grantRole_->addItems(names);
    grantRole_->setCurrentText(typed);
}

void UsersTab::setGrantsShown(bool shown)
{
    grantBox_->setVisible(shown);
}

bool UsersTab::selectUser(const QString& user)
{
    for (int row = 0; row < users_->rowCount(); ++row) {
        if (QString::fromStdString(users_->rowAt(row)->name) == user) {
            table_->selectRow(row);
            return true;
        }
    }
    return false;
}

void UsersTab::showCode(const QString& code, const QString& what)
{
    code_->setText(code);
    code_->selectAll();
    calls_.say(what);
}

void UsersTab::clear()
{
    users_->setRows({});
    code_->clear();
}

std::string UsersTab::selectedUser() const
{
    const api::UserSummary* user = users_->rowAt(table_->currentIndex().row());
    if (user == nullptr) {
        calls_.say(tr("Choose the user in the table first."));
        return {};
    }
    return user->name;
}

void UsersTab::create()
{
    calls_.call(
        this,
        [name = newUser_->text().trimmed().toStdString()](api::ControlClient& client) {
            return client.users().createUser(name);
        },
        [this](Result<api::NewUserResult> created) {
            showCode(QString::fromStdString(created->enrolmentCode),
                     tr("%1 is created; they set their password and TOTP with this code "
                        "(sealtrain, \"I have a one-time code\") before %2.")
                         .arg(newUser_->text().trimmed(),
                              QDateTime::fromSecsSinceEpoch(created->codeExpires)
                                  .toString(QLocale().dateTimeFormat(QLocale::ShortFormat))));
            newUser_->clear();
        });
}

void UsersTab::disable()
{
    const std::string user = selectedUser();
    if (user.empty())
        return;
    calls_.call(
        this, [user](api::ControlClient& client) { return client.users().disableUser(user); },
        [this, user](Result<api::ChangeResult> result) {
            calls_.say((result->pending
                            ? tr("Disabling %1 would leave one admin: it waits for the other "
                                 "admin's same request.")
                            : tr("%1 is disabled: their sessions end and they cannot sign in."))
                           .arg(QString::fromStdString(user)));
        });
}

void UsersTab::reset()
{
    const std::string user = selectedUser();
    if (user.empty())
        return;
    calls_.call(
        this, [user](api::ControlClient& client) { return client.users().resetUser(user); },
        [this](Result<api::ResetResult> result) {
            const QString who = QString::fromStdString(result->user);
            if (result->pending) {
                code_->clear();
                calls_.say(tr("The reset of %1 waits for a second admin's approval (Pending "
                              "resets); no code until then.")
                               .arg(who));
                return;
            }
            showCode(QString::fromStdString(result->resetCode),
                     tr("%1's password and TOTP are gone; they choose new ones with this code.")
                         .arg(who));
        });
}

void UsersTab::grant(bool add)
{
    const std::string user = selectedUser();
    if (user.empty())
        return;
    const std::string role = grantRole_->currentText().trimmed().toStdString();
    const std::string project = grantProject_->text().trimmed().toStdString();
    const QString roleText = QString::fromStdString(role);
    const QString userText = QString::fromStdString(user);
    if (add) {
        calls_.call(
            this,
            [user, role, project](api::ControlClient& client) {
                return client.access().grantRole(user, role, project);
            },
            [this, roleText, userText](Result<api::GrantResult> result) {
                calls_.say((result->pending
                                ? tr("The grant of %1 to %2 waits for the same grant again: by a "
                                     "second admin while there are two, and only once %2 has set "
                                     "their own credentials.")
                                : tr("%2 now holds %1."))
                               .arg(roleText, userText));
            });
        return;
    }
    calls_.call(
        this,
        [user, role, project](api::ControlClient& client) {
            return client.access().revokeRole(user, role, project);
        },
        [this, roleText, userText](Result<api::ChangeResult> result) {
            calls_.say((result->pending ? tr("Taking %1 from %2 would leave one admin: it waits "
                                             "for the other admin's same request.")
                                        : tr("%2 no longer holds %1."))
                           .arg(roleText, userText));
        });
}

void UsersTab::breakGlass()
{
    const std::string user = selectedUser();
    if (user.empty())
        return;
    const std::chrono::hours hours(glassHours_->value());
    calls_.call(
        this,
        [user, role = grantRole_->currentText().trimmed().toStdString(),
         project = grantProject_->text().trimmed().toStdString(),
         reason = glassReason_->text().trimmed().toStdString(), hours](api::ControlClient& client) {
            return client.access().grantBreakGlass(user, role, project, reason, hours);
        },
        [this, user, hours](auto) {
            glassReason_->clear();
            calls_.say(tr("Emergency grant to %1 for %2 hours; every action under it is flagged "
                          "in the audit log.")
                           .arg(QString::fromStdString(user))
                           .arg(hours.count()));
        });
}

}  // namespace sealtrain::gui
