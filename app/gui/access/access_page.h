// Users and roles, for administrators: one tab per thing an admin looks after, each shown only
// when WhoAmI says the caller may use it.
//   Users (user.manage; grants with grant.manage): create a user (the one-time enrolment code
//     shown once), disable, enable, reset (the code shown once, or "waits for a second admin"),
//     grant and revoke roles per project, a break-glass grant with its reason and duration.
//   Resets (user.manage): the resets another admin asked for, to approve as the second admin.
//   Roles (role.manage): roles with their permissions, each permission with what it allows; make
//     and delete custom roles.
//   Sessions (session.manage): every session; end all of a user's sessions.
// The server decides every one of these; a refusal is its sentence under the tab.
#pragma once

#include "access_models.h"

#include <QWidget>

#include <functional>
#include <memory>

class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;
class QSpinBox;
class QTabWidget;
class QTableView;

namespace sealtrain::gui {

class Session;

class AccessPage final : public QWidget {
    Q_OBJECT

public:
    explicit AccessPage(Session& session, QWidget* parent = nullptr);

    // Whether the caller may see this screen at all.
    [[nodiscard]] static bool allowedFor(const Session& session);
    void reload();
    // Forgets what was shown (signing out): the tables and a one-time code still on screen.
    void clear();

    [[nodiscard]] UserTableModel& users() const noexcept { return *users_; }
    [[nodiscard]] PendingResetTableModel& resets() const noexcept { return *resets_; }
    [[nodiscard]] RoleTableModel& roles() const noexcept { return *roles_; }
    [[nodiscard]] SessionTableModel& sessions() const noexcept { return *sessions_; }
    // Selects `user` in the users table; false when not listed.
    bool selectUser(const QString& user);

private:
    QWidget* makeUsersTab();
    QWidget* makeResetsTab();
    QWidget* makeRolesTab();
    QWidget* makeSessionsTab();
    // Runs `work` with the client off the GUI thread; a failure's sentence goes under the tab,
    // a success to `ok`, then the lists are read again.
    template <typename Work, typename Ok>
    void call(Work work, Ok ok);
    [[nodiscard]] std::string selectedUser() const;
    void showCode(const QString& code, const QString& what);
    void grant(bool add);
    void breakGlass();
    void createRole();

    Session& session_;
    QTabWidget* tabs_;
    QLabel* status_;
    UserTableModel* users_;
    QTableView* usersTable_ = nullptr;
    QLineEdit* newUser_ = nullptr;
    QLineEdit* code_ = nullptr;
    QComboBox* grantRole_ = nullptr;
    QLineEdit* grantProject_ = nullptr;
    QLineEdit* glassReason_ = nullptr;
    QSpinBox* glassHours_ = nullptr;
    QWidget* grantBox_ = nullptr;
    PendingResetTableModel* resets_;
    QTableView* resetsTable_ = nullptr;
    RoleTableModel* roles_;
    QTableView* rolesTable_ = nullptr;
    QListWidget* permissions_ = nullptr;
    QLineEdit* newRole_ = nullptr;
    SessionTableModel* sessions_;
    QTableView* sessionsTable_ = nullptr;
};

}  // namespace sealtrain::gui
