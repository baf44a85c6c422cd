// Users and roles, for administrators: one tab per thing an admin looks after, each its own widget
// and each shown only when WhoAmI says the caller may use it.
//   Users (users_tab.h; user.manage, grants with grant.manage)
//   Waiting for a second admin (pending_tab.h; user.manage, grant.manage or role.manage)
//   Roles (roles_tab.h; role.manage)
//   Sessions (sessions_tab.h; session.manage)
// The server decides every one of these; a refusal is its sentence under the tabs.
#pragma once

#include "access_calls.h"
#include "access_models.h"

#include <QWidget>

class QLabel;
class QTabWidget;

namespace sealtrain::gui {

class PendingTab;
class RolesTab;
class Session;
class SessionsTab;
class UsersTab;

class AccessPage final : public QWidget {
    Q_OBJECT

public:
    explicit AccessPage(Session& session, QWidget* parent = nullptr);

    // Whether the caller may see this screen at all.
    [[nodiscard]] static bool allowedFor(const Session& session);
    // Shows the tabs the caller may use and reads their lists again.
    void reload();
    // Shows the tabs the signed-in user's permissions allow (reload() and the window at sign-in
    // call it, so that the command palette offers nothing a hidden tab holds).
    void permit();
    // Forgets what was shown (signing out): the tables and a one-time code still on screen.
    void clear();

    [[nodiscard]] UserTableModel& users() const noexcept;
    [[nodiscard]] PendingRequestTableModel& pending() const noexcept;
    [[nodiscard]] RoleTableModel& roles() const noexcept;
    [[nodiscard]] SessionTableModel& sessions() const noexcept;
    // Selects `user` in the users table; false when not listed.
    bool selectUser(const QString& user);

private:
    Session& session_;
    QTabWidget* tabs_;
    QLabel* status_;
    AccessCalls calls_;
    UsersTab* users_;
    PendingTab* pending_;
    RolesTab* roles_;
    SessionsTab* sessions_;
};

}  // namespace sealtrain::gui
