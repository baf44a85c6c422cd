// The users tab of the users-and-roles screen (access_page.h): user.manage creates a user (the
// one-time enrolment code shown once), disables, enables, resets (the code shown once, or "waits
// for a second admin") and ends a user's sessions; grant.manage grants and revokes roles per
// project and makes a break-glass grant with its reason and duration.
#pragma once

#include "access_calls.h"
#include "access_models.h"

#include <QStringList>
#include <QWidget>

#include <string>

class QComboBox;
class QLineEdit;
class QSpinBox;
class QTableView;

namespace sealtrain::gui {

class UsersTab final : public QWidget {
    Q_OBJECT

public:
    UsersTab(const AccessCalls& calls, QWidget* parent);

    [[nodiscard]] UserTableModel& users() const noexcept { return *users_; }
    // The roles offered to grant (the roles tab's list).
    void setRoleNames(const QStringList& names);
    // The grant box, for grant.manage.
    void setGrantsShown(bool shown);
    // Selects `user` in the table; false when not listed.
    bool selectUser(const QString& user);
    // A one-time code to hand over, with what it is for.
    void showCode(const QString& code, const QString& what);
    // Forgets what was shown (signing out): the table and a one-time code still on screen.
    void clear();

private:
    void addUserRow();
    void addGrantBox();
    [[nodiscard]] std::string selectedUser() const;
    void create();
    void disable();
    void reset();
    void grant(bool add);
    void breakGlass();

    const AccessCalls& calls_;
    UserTableModel* users_;
    QTableView* table_;
    QLineEdit* newUser_ = nullptr;
    QLineEdit* code_ = nullptr;
    QComboBox* grantRole_ = nullptr;
    QLineEdit* grantProject_ = nullptr;
    QLineEdit* glassReason_ = nullptr;
    QSpinBox* glassHours_ = nullptr;
    QWidget* grantBox_ = nullptr;
};

}  // namespace sealtrain::gui
