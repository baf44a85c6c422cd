// The roles tab (roles_tab.h).
#include "roles_tab.h"

#include <QHBoxLayout>
#include <QLineEdit>
#include <QListWidget>
#include <QTableView>
#include <QVBoxLayout>

#include <string>

namespace sealtrain::gui {

RolesTab::RolesTab(const AccessCalls& calls, QWidget* parent)
    : QWidget(parent)
    , calls_(calls)
    , roles_(new RoleTableModel(this))
    , table_(new QTableView(this))
    , permissions_(new QListWidget(this))
    , newRole_(namedField(this, "newRoleName", tr("New role's name"), tr("new role's name")))
{
    setObjectName("rolesTab");
    setUpTable(*table_, *roles_, "rolesTable", tr("Roles"));
    permissions_->setObjectName("rolePermissions");
    permissions_->setAccessibleName(tr("Permissions of the new role"));
    auto* create = namedButton(tr("&Make the role"), "createRoleButton", this);
    auto* remove = namedButton(tr("&Delete the selected role"), "deleteRoleButton", this);
    auto* createRow = new QHBoxLayout;
    createRow->addWidget(newRole_, 1);
    createRow->addWidget(create);
    createRow->addWidget(remove);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(withFilter(*table_), 2);
    layout->addWidget(new QLabel(tr("A new role's permissions (tick them):"), this));
    layout->addWidget(permissions_, 2);
    layout->addLayout(createRow);
    connect(create, &QPushButton::clicked, this, &RolesTab::createRole);
    connect(remove, &QPushButton::clicked, this, [this] {
        const api::RoleSummary* role = roles_->rowAt(table_->currentIndex().row());
        if (role == nullptr)
            return;
        calls_.call(
            this,
            [name = role->name](api::ControlClient& client) {
                return client.access().deleteRole(name);
            },
            [this, name = QString::fromStdString(role->name)](auto) {
                calls_.say(tr("The role %1 is deleted.").arg(name));
            });
    });
}

bool RolesTab::hasPermissions() const
{
    return permissions_->count() > 0;
}

void RolesTab::setPermissions(const std::vector<api::PermissionView>& permissions)
{
    for (const api::PermissionView& permission : permissions) {
        auto* item =
            new QListWidgetItem(tr("%1 — %2").arg(QString::fromStdString(permission.name),
                                                  QString::fromStdString(permission.description)),
                                permissions_);
        item->setData(Qt::UserRole, QString::fromStdString(permission.name));
        item->setCheckState(Qt::Unchecked);
    }
}

void RolesTab::createRole()
{
    std::vector<std::string> chosen;
    for (int row = 0; row < permissions_->count(); ++row) {
        const QListWidgetItem* item = permissions_->item(row);
        if (item->checkState() == Qt::Checked)
            chosen.push_back(item->data(Qt::UserRole).toString().toStdString());
    }
    calls_.call(
        this,
        [name = newRole_->text().trimmed().toStdString(), chosen](api::ControlClient& client) {
            return client.access().createRole(name, chosen);
        },
        [this](Result<api::ChangeResult> result) {
            calls_.say((result->pending ? tr("The role %1 gives a separated duty: it is made when "
                                             "a second admin asks for the same role with the "
                                             "same permissions.")
                                        : tr("The role %1 is made; grant it on the Users tab."))
                           .arg(newRole_->text().trimmed()));
            newRole_->clear();
            for (int row = 0; row < permissions_->count(); ++row)
                permissions_->item(row)->setCheckState(Qt::Unchecked);
        });
}

}  // namespace sealtrain::gui
