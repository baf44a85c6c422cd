// The users-and-roles screen (access_page.h): the tabs, which of them the caller sees, and the
// lists they show, read off the GUI thread.
#include "access_page.h"

#include "pending_tab.h"
#include "roles_tab.h"
#include "sessions_tab.h"
#include "users_tab.h"

#include <QLabel>
#include <QTabWidget>
#include <QVBoxLayout>

#include <utility>

namespace sealtrain::gui {

namespace {

constexpr const char* kUserManage = "user.manage";
constexpr const char* kRoleManage = "role.manage";
constexpr const char* kGrantManage = "grant.manage";
constexpr const char* kSessionManage = "session.manage";

}  // namespace

AccessPage::AccessPage(Session& session, QWidget* parent)
    : QWidget(parent)
    , session_(session)
    , tabs_(new QTabWidget(this))
    , status_(new QLabel(this))
    , calls_(session, *status_, [this] { reload(); })
    , users_(new UsersTab(calls_, this))
    , pending_(new PendingTab(
          calls_,
          [this](const api::ResetResult& result) {
              tabs_->setCurrentIndex(0);
              users_->showCode(QString::fromStdString(result.resetCode),
                               tr("The reset of %1 took effect; hand them this code.")
                                   .arg(QString::fromStdString(result.user)));
          },
          this))
    , roles_(new RolesTab(calls_, this))
    , sessions_(new SessionsTab(calls_, this))
{
    setObjectName("accessPage");
    tabs_->setObjectName("accessTabs");
    status_->setObjectName("accessStatus");
    status_->setWordWrap(true);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    tabs_->addTab(users_, tr("&Users"));
    tabs_->addTab(pending_, tr("&Waiting for a second admin"));
    tabs_->addTab(roles_, tr("R&oles"));
    tabs_->addTab(sessions_, tr("&Sessions"));
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(tabs_, 1);
    layout->addWidget(status_);
}

bool AccessPage::allowedFor(const Session& session)
{
    return session.holds(kUserManage) || session.holds(kRoleManage) || session.holds(kGrantManage)
           || session.holds(kSessionManage);
}

UserTableModel& AccessPage::users() const noexcept
{
    return users_->users();
}

PendingRequestTableModel& AccessPage::pending() const noexcept
{
    return pending_->requests();
}

RoleTableModel& AccessPage::roles() const noexcept
{
    return roles_->roles();
}

SessionTableModel& AccessPage::sessions() const noexcept
{
    return sessions_->sessions();
}

bool AccessPage::selectUser(const QString& user)
{
    return users_->selectUser(user);
}

void AccessPage::permit()
{
    const bool users = session_.holds(kUserManage);
    const bool grants = session_.holds(kGrantManage);
    tabs_->setTabVisible(tabs_->indexOf(users_), users || grants);
    tabs_->setTabVisible(tabs_->indexOf(pending_), users || grants || session_.holds(kRoleManage));
    tabs_->setTabVisible(tabs_->indexOf(roles_), session_.holds(kRoleManage));
    tabs_->setTabVisible(tabs_->indexOf(sessions_), session_.holds(kSessionManage));
    users_->setGrantsShown(grants);
}

void AccessPage::reload()
{
    auto client = session_.client();
    if (!client)
        return;
    permit();
    const bool users = session_.holds(kUserManage);
    const bool roles = session_.holds(kRoleManage);
    const bool grants = session_.holds(kGrantManage);
    if (users || grants)
        runInBackground(
            this, [client] { return client->users().listUsers(); },
            [this](Result<std::vector<api::UserSummary>> list) {
                if (list)
                    users_->users().setRows(std::move(*list));
            });
    if (users || grants || roles)
        runInBackground(
            this, [client] { return client->access().listPendingRequests(); },
            [this](Result<std::vector<api::PendingRequestView>> list) {
                if (list)
                    pending_->requests().setRows(std::move(*list));
            });
    if (roles || grants)
        runInBackground(
            this, [client] { return client->access().listRoles(); },
            [this](Result<std::vector<api::RoleSummary>> list) {
                if (!list)
                    return;
                QStringList names;
                for (const api::RoleSummary& role : *list)
                    names.push_back(QString::fromStdString(role.name));
                users_->setRoleNames(names);
                roles_->roles().setRows(std::move(*list));
            });
    if (roles && !roles_->hasPermissions())
        runInBackground(
            this, [client] { return client->access().listPermissions(); },
            [this](Result<std::vector<api::PermissionView>> list) {
                if (list)
                    roles_->setPermissions(*list);
            });
    if (session_.holds(kSessionManage))
        runInBackground(
            this, [client] { return client->sessions().listSessions(); },
            [this](Result<std::vector<api::SessionSummary>> list) {
                if (list)
                    sessions_->sessions().setRows(std::move(*list));
            });
}

void AccessPage::clear()
{
    users_->clear();
    pending_->requests().setRows({});
    roles_->roles().setRows({});
    sessions_->sessions().setRows({});
    status_->clear();
}

}  // namespace sealtrain::gui
