// The roles tab of the users-and-roles screen (access_page.h; role.manage): roles with their
// permissions, each permission with what it allows; make and delete custom roles.
#pragma once

#include "access_calls.h"
#include "access_models.h"

#include <QWidget>

#include <vector>

class QLineEdit;
class QListWidget;
class QTableView;

namespace sealtrain::gui {

class RolesTab final : public QWidget {
    Q_OBJECT

public:
    RolesTab(const AccessCalls& calls, QWidget* parent);

    [[nodiscard]] RoleTableModel& roles() const noexcept { return *roles_; }
    // Whether the permission catalogue is shown yet (it is read once).
    [[nodiscard]] bool hasPermissions() const;
    void setPermissions(const std::vector<api::PermissionView>& permissions);

private:
    void createRole();

    const AccessCalls& calls_;
    RoleTableModel* roles_;
    QTableView* table_;
    QListWidget* permissions_;
    QLineEdit* newRole_;
};

}  // namespace sealtrain::gui
