// The users-and-roles screen (access_page.h).
#include "access_page.h"

#include "../common/background.h"
#include "../session/session.h"

#include <QComboBox>
#include <QDateTime>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QLocale>
#include <QPushButton>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

#include <chrono>
#include <utility>

namespace sealtrain::gui {

namespace {

constexpr const char* kUserManage = "user.manage";
constexpr const char* kRoleManage = "role.manage";
constexpr const char* kGrantManage = "grant.manage";
constexpr const char* kSessionManage = "session.manage";

QPushButton* button(const QString& text, const char* name, QWidget* parent)
{
    auto* made = new QPushButton(text, parent);
    made->setObjectName(name);
    return made;
}

}  // namespace

AccessPage::AccessPage(Session& session, QWidget* parent)
    : QWidget(parent)
    , session_(session)
    , tabs_(new QTabWidget(this))
    , status_(new QLabel(this))
    , users_(new UserTableModel(this))
    , resets_(new PendingResetTableModel(this))
    , roles_(new RoleTableModel(this))
    , sessions_(new SessionTableModel(this))
{
    setObjectName("accessPage");
    tabs_->setObjectName("accessTabs");
    status_->setObjectName("accessStatus");
    status_->setWordWrap(true);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    tabs_->addTab(makeUsersTab(), tr("&Users"));
    tabs_->addTab(makeResetsTab(), tr("Pending &resets"));
    tabs_->addTab(makeRolesTab(), tr("R&oles"));
    tabs_->addTab(makeSessionsTab(), tr("&Sessions"));
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(tabs_, 1);
    layout->addWidget(status_);
}

bool AccessPage::allowedFor(const Session& session)
{
    return session.holds(kUserManage) || session.holds(kRoleManage) || session.holds(kGrantManage)
           || session.holds(kSessionManage);
}

template <typename Work, typename Ok>
void AccessPage::call(Work work, Ok ok)
{
    auto client = session_.client();
    if (!client)
        return;
    runInBackground(
        this, [client, work = std::move(work)]() mutable { return work(*client); },
        [this, ok = std::move(ok)](auto done) mutable {
            if (!done) {
                status_->setStyleSheet("color: #b00020;");
                status_->setText(sentence(done.error()));
                return;
            }
            status_->setStyleSheet({});
            ok(std::move(done));
            reload();
        });
}

// Over 100 lines: the users tab's widgets, each named and laid out where it shows, read
// top to bottom as the screen.
QWidget* AccessPage::makeUsersTab()
{
    auto* tab = new QWidget(this);
    tab->setObjectName("usersTab");
    usersTable_ = new QTableView(tab);
    setUpTable(*usersTable_, *users_, "usersTable", tr("Users"));

    newUser_ = namedField(tab, "newUserName", tr("New user's name"), tr("new user's name"));
    auto* create = button(tr("&Create user"), "createUserButton", tab);
    auto* disable = button(tr("&Disable"), "disableUserButton", tab);
    auto* enable = button(tr("&Enable"), "enableUserButton", tab);
    auto* reset = button(tr("Reset password and &TOTP"), "resetUserButton", tab);
    auto* endSessions = button(tr("End their &sessions"), "revokeUserSessionsButton", tab);
    code_ = namedField(tab, "accessCode", tr("The one-time code to hand over"),
                       tr("a one-time code appears here once; hand it over in person"));
    code_->setReadOnly(true);

    grantBox_ = new QGroupBox(tr("Roles of the selected user"), tab);
    grantRole_ = new QComboBox(grantBox_);
    grantRole_->setObjectName("grantRole");
    grantRole_->setEditable(true);
    grantRole_->setAccessibleName(tr("Role to grant or revoke"));
    grantProject_ =
        namedField(grantBox_, "grantProject", tr("Project of the grant"), tr("every project"));
    auto* grant = button(tr("&Grant"), "grantRoleButton", grantBox_);
    auto* revoke = button(tr("Re&voke"), "revokeRoleButton", grantBox_);
    glassReason_ = namedField(grantBox_, "breakGlassReason", tr("Reason for the emergency grant"),
                              tr("why, e.g. the incident number (audited)"));
    glassHours_ = new QSpinBox(grantBox_);
    glassHours_->setObjectName("breakGlassHours");
    glassHours_->setAccessibleName(tr("Hours the emergency grant lasts"));
    glassHours_->setRange(1, 72);
    glassHours_->setValue(4);
    glassHours_->setSuffix(tr(" h"));
    auto* glass = button(tr("&Break glass"), "breakGlassButton", grantBox_);
    auto* grantRow = new QHBoxLayout;
    grantRow->addWidget(grantRole_, 1);
    grantRow->addWidget(grantProject_, 1);
    grantRow->addWidget(grant);
    grantRow->addWidget(revoke);
    auto* glassRow = new QHBoxLayout;
    glassRow->addWidget(glassReason_, 2);
    glassRow->addWidget(glassHours_);
    glassRow->addWidget(glass);
    auto* grantForm = new QFormLayout(grantBox_);
    grantForm->addRow(tr("Role and project:"), grantRow);
    grantForm->addRow(tr("Emergency grant:"), glassRow);

    auto* userRow = new QHBoxLayout;
    userRow->addWidget(disable);
    userRow->addWidget(enable);
    userRow->addWidget(reset);
    userRow->addWidget(endSessions);
    userRow->addStretch(1);
    auto* createRow = new QHBoxLayout;
    createRow->addWidget(newUser_, 1);
    createRow->addWidget(create);
    auto* layout = new QVBoxLayout(tab);
    layout->addWidget(usersTable_, 1);
    layout->addLayout(userRow);
    layout->addWidget(grantBox_);
    layout->addLayout(createRow);
    layout->addWidget(code_);

    connect(create, &QPushButton::clicked, this, [this] {
        call([name = newUser_->text().trimmed().toStdString()](
                 api::ControlClient& client) { return client.createUser(name); },
             [this](Result<api::NewUserResult> created) {
                 showCode(QString::fromStdString(created->enrolmentCode),
                          tr("%1 is created; they set their password and TOTP with this code "
                             "(sealtrain, \"I have a one-time code\") before %2.")
                              .arg(newUser_->text().trimmed(),
                                   QDateTime::fromSecsSinceEpoch(created->codeExpires)
                                       .toString(QLocale().dateTimeFormat(QLocale::ShortFormat))));
                 newUser_->clear();
             });
    });
    const auto onUser = [this](auto action, const QString& done) {
        return [this, action, done] {
            const std::string user = selectedUser();
            if (user.empty())
                return;
            call([action, user](api::ControlClient& client) { return action(client, user); },
                 [this, done, user](auto) {
                     status_->setText(done.arg(QString::fromStdString(user)));
                 });
        };
    };
    connect(disable, &QPushButton::clicked, this, [this] {
        const std::string user = selectedUser();
        if (user.empty())
            return;
        call([user](api::ControlClient& client) { return client.disableUser(user); },
             [this, user](Result<api::ChangeResult> result) {
                 status_->setText(
                     (result->pending
                          ? tr("Disabling %1 would leave one admin: it waits for the other "
                               "admin's same request.")
                          : tr("%1 is disabled: their sessions end and they cannot sign in."))
                         .arg(QString::fromStdString(user)));
             });
    });
    connect(enable, &QPushButton::clicked, this,
            onUser([](api::ControlClient& c, const std::string& u) { return c.enableUser(u); },
                   tr("%1 may sign in again.")));
    connect(endSessions, &QPushButton::clicked, this,
            onUser([](api::ControlClient& c, const std::string& u) { return c.revokeSessions(u); },
                   tr("Every session of %1 has ended; their certificates are refused.")));
    connect(reset, &QPushButton::clicked, this, [this] {
        const std::string user = selectedUser();
        if (user.empty())
            return;
        call([user](api::ControlClient& client) { return client.resetUser(user); },
             [this](Result<api::ResetResult> result) {
                 const QString who = QString::fromStdString(result->user);
                 if (result->pending) {
                     code_->clear();
                     status_->setText(tr("The reset of %1 waits for a second admin's approval "
                                         "(Pending resets); no code until then.")
                                          .arg(who));
                     return;
                 }
                 showCode(QString::fromStdString(result->resetCode),
                          tr("%1's password and TOTP are gone; they choose new ones with this "
                             "code.")
                              .arg(who));
             });
    });
    connect(grant, &QPushButton::clicked, this, [this] { this->grant(true); });
    connect(revoke, &QPushButton::clicked, this, [this] { this->grant(false); });
    connect(glass, &QPushButton::clicked, this, &AccessPage::breakGlass);
    return tab;
}

QWidget* AccessPage::makeResetsTab()
{
    auto* tab = new QWidget(this);
    tab->setObjectName("resetsTab");
    resetsTable_ = new QTableView(tab);
    setUpTable(*resetsTable_, *resets_, "pendingResetsTable", tr("Resets waiting for approval"));
    auto* approve = button(tr("&Approve the reset"), "approveResetButton", tab);
    auto* note = new QLabel(tr("A reset another admin asked for takes effect when a second admin "
                               "approves it; the one-time code is shown to the approver."),
                            tab);
    note->setWordWrap(true);
    auto* layout = new QVBoxLayout(tab);
    layout->addWidget(note);
    layout->addWidget(resetsTable_, 1);
    layout->addWidget(approve, 0, Qt::AlignLeft);
    connect(approve, &QPushButton::clicked, this, [this] {
        const api::PendingResetView* pending = resets_->rowAt(resetsTable_->currentIndex().row());
        if (pending == nullptr) {
            status_->setText(tr("Choose the reset to approve in the table first."));
            return;
        }
        call([user =
                  pending->user](api::ControlClient& client) { return client.approveReset(user); },
             [this](Result<api::ResetResult> result) {
                 tabs_->setCurrentIndex(0);
                 showCode(QString::fromStdString(result->resetCode),
                          tr("The reset of %1 took effect; hand them this code.")
                              .arg(QString::fromStdString(result->user)));
             });
    });
    return tab;
}

QWidget* AccessPage::makeRolesTab()
{
    auto* tab = new QWidget(this);
    tab->setObjectName("rolesTab");
    rolesTable_ = new QTableView(tab);
    setUpTable(*rolesTable_, *roles_, "rolesTable", tr("Roles"));
    permissions_ = new QListWidget(tab);
    permissions_->setObjectName("rolePermissions");
    permissions_->setAccessibleName(tr("Permissions of the new role"));
    newRole_ = namedField(tab, "newRoleName", tr("New role's name"), tr("new role's name"));
    auto* create = button(tr("&Make the role"), "createRoleButton", tab);
    auto* remove = button(tr("&Delete the selected role"), "deleteRoleButton", tab);
    auto* createRow = new QHBoxLayout;
    createRow->addWidget(newRole_, 1);
    createRow->addWidget(create);
    createRow->addWidget(remove);
    auto* layout = new QVBoxLayout(tab);
    layout->addWidget(rolesTable_, 2);
    layout->addWidget(new QLabel(tr("A new role's permissions (tick them):"), tab));
    layout->addWidget(permissions_, 2);
    layout->addLayout(createRow);
    connect(create, &QPushButton::clicked, this, &AccessPage::createRole);
    connect(remove, &QPushButton::clicked, this, [this] {
        const api::RoleSummary* role = roles_->rowAt(rolesTable_->currentIndex().row());
        if (role == nullptr)
            return;
        call([name = role->name](api::ControlClient& client) { return client.deleteRole(name); },
             [this, name = QString::fromStdString(role->name)](auto) {
                 status_->setText(tr("The role %1 is deleted.").arg(name));
             });
    });
    return tab;
}

QWidget* AccessPage::makeSessionsTab()
{
    auto* tab = new QWidget(this);
    tab->setObjectName("sessionsTab");
    sessionsTable_ = new QTableView(tab);
    setUpTable(*sessionsTable_, *sessions_, "sessionsTable", tr("Sessions"));
    auto* end = button(tr("&End every session of this user"), "endSessionsButton", tab);
    auto* layout = new QVBoxLayout(tab);
    layout->addWidget(sessionsTable_, 1);
    layout->addWidget(end, 0, Qt::AlignLeft);
    connect(end, &QPushButton::clicked, this, [this] {
        const api::SessionSummary* row = sessions_->rowAt(sessionsTable_->currentIndex().row());
        if (row == nullptr) {
            status_->setText(tr("Choose a session of the user in the table first."));
            return;
        }
        call([user = row->user](api::ControlClient& client) { return client.revokeSessions(user); },
             [this, user = QString::fromStdString(row->user)](Result<std::uint32_t> ended) {
                 status_->setText(tr("%1 certificates of %2 are revoked; they sign in again.")
                                      .arg(*ended)
                                      .arg(user));
             });
    });
    return tab;
}

void AccessPage::reload()
{
    auto client = session_.client();
    if (!client)
        return;
    const bool users = session_.holds(kUserManage);
    const bool roles = session_.holds(kRoleManage);
    tabs_->setTabVisible(0, users || session_.holds(kGrantManage));
    tabs_->setTabVisible(1, users);
    tabs_->setTabVisible(2, roles);
    tabs_->setTabVisible(3, session_.holds(kSessionManage));
    grantBox_->setVisible(session_.holds(kGrantManage));
    if (users || session_.holds(kGrantManage))
        runInBackground(
            this, [client] { return client->listUsers(); },
            [this](Result<std::vector<api::UserSummary>> list) {
                if (list)
                    users_->setRows(std::move(*list));
            });
    if (users)
        runInBackground(
            this, [client] { return client->listPendingResets(); },
            [this](Result<std::vector<api::PendingResetView>> list) {
                if (list)
                    resets_->setRows(std::move(*list));
            });
    if (roles || session_.holds(kGrantManage))
        runInBackground(
            this, [client] { return client->listRoles(); },
            [this](Result<std::vector<api::RoleSummary>> list) {
                if (!list)
                    return;
                const QString typed = grantRole_->currentText();
                grantRole_->clear();
                for (const api::RoleSummary& role : *list)
                    grantRole_->addItem(QString::fromStdString(role.name));
                grantRole_->setCurrentText(typed);
                roles_->setRows(std::move(*list));
            });
    if (roles && permissions_->count() == 0)
        runInBackground(
            this, [client] { return client->listPermissions(); },
            [this](Result<std::vector<api::PermissionView>> list) {
                if (!list)
                    return;
                for (const api::PermissionView& permission : *list) {
                    auto* item = new QListWidgetItem(
                        tr("%1 — %2").arg(QString::fromStdString(permission.name),
                                          QString::fromStdString(permission.description)),
                        permissions_);
                    item->setData(Qt::UserRole, QString::fromStdString(permission.name));
                    item->setCheckState(Qt::Unchecked);
                }
            });
    if (session_.holds(kSessionManage))
        runInBackground(
            this, [client] { return client->listSessions(); },
            [this](Result<std::vector<api::SessionSummary>> list) {
                if (list)
                    sessions_->setRows(std::move(*list));
            });
}

void AccessPage::clear()
{
    users_->setRows({});
    resets_->setRows({});
    roles_->setRows({});
    sessions_->setRows({});
    code_->clear();
    status_->clear();
}

bool AccessPage::selectUser(const QString& user)
{
    for (int row = 0; row < users_->rowCount(); ++row) {
        if (QString::fromStdString(users_->rowAt(row)->name) == user) {
            usersTable_->selectRow(row);
            return true;
        }
    }
    return false;
}

std::string AccessPage::selectedUser() const
{
    const api::UserSummary* user = users_->rowAt(usersTable_->currentIndex().row());
    if (user == nullptr) {
        status_->setText(tr("Choose the user in the table first."));
        return {};
    }
    return user->name;
}

void AccessPage::showCode(const QString& code, const QString& what)
{
    code_->setText(code);
    code_->selectAll();
    status_->setText(what);
}

void AccessPage::grant(bool add)
{
    const std::string user = selectedUser();
    if (user.empty())
        return;
    const std::string role = grantRole_->currentText().trimmed().toStdString();
    const std::string project = grantProject_->text().trimmed().toStdString();
    if (add) {
        call([user, role, project](
                 api::ControlClient& client) { return client.grantRole(user, role, project); },
             [this, user, role](Result<api::GrantResult> result) {
                 status_->setText(
                     (result->pending
                          ? tr("The grant of %1 to %2 waits for the same grant again: by a "
                               "second admin while there are two, and only once %2 has set "
                               "their own credentials.")
                          : tr("%2 now holds %1."))
                         .arg(QString::fromStdString(role), QString::fromStdString(user)));
             });
        return;
    }
    call([user, role,
          project](api::ControlClient& client) { return client.revokeRole(user, role, project); },
         [this, user, role](Result<api::ChangeResult> result) {
             status_->setText((result->pending ? tr("Taking %1 from %2 would leave one admin: it "
                                                    "waits for the other admin's same request.")
                                               : tr("%2 no longer holds %1."))
                                  .arg(QString::fromStdString(role), QString::fromStdString(user)));
         });
}

void AccessPage::breakGlass()
{
    const std::string user = selectedUser();
    if (user.empty())
        return;
    const std::chrono::hours hours(glassHours_->value());
    call(
        [user, role = grantRole_->currentText().trimmed().toStdString(),
         project = grantProject_->text().trimmed().toStdString(),
         reason = glassReason_->text().trimmed().toStdString(), hours](api::ControlClient& client) {
            return client.grantBreakGlass(user, role, project, reason, hours);
        },
        [this, user, hours](auto) {
            glassReason_->clear();
            status_->setText(tr("Emergency grant to %1 for %2 hours; every action under it is "
                                "flagged in the audit log.")
                                 .arg(QString::fromStdString(user))
                                 .arg(hours.count()));
        });
}

void AccessPage::createRole()
{
    std::vector<std::string> chosen;
    for (int row = 0; row < permissions_->count(); ++row) {
        const QListWidgetItem* item = permissions_->item(row);
        if (item->checkState() == Qt::Checked)
            chosen.push_back(item->data(Qt::UserRole).toString().toStdString());
    }
    call([name = newRole_->text().trimmed().toStdString(),
          chosen](api::ControlClient& client) { return client.createRole(name, chosen); },
         [this](Result<api::ChangeResult> result) {
             status_->setText((result->pending ? tr("The role %1 gives a separated duty: it is "
                                                    "made when a second admin asks for the same "
                                                    "role with the same permissions.")
                                               : tr("The role %1 is made; grant it on the Users "
                                                    "tab."))
                                  .arg(newRole_->text().trimmed()));
             newRole_->clear();
             for (int row = 0; row < permissions_->count(); ++row)
                 permissions_->item(row)->setCheckState(Qt::Unchecked);
         });
}

}  // namespace sealtrain::gui
