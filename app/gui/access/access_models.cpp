// The users-and-roles tables (access_models.h).
#include "access_models.h"

#include "common/colors.h"

#include <QBrush>
#include <QColor>

namespace sealtrain::gui {

namespace {

QString joined(const std::vector<std::string>& items)
{
    QStringList list;
    for (const std::string& item : items)
        list << QString::fromStdString(item);
    return list.join(", ");
}

// Something no longer in force (a disabled user, a revoked or expired session) is greyed.
QVariant greyWhen(bool inactive, int role)
{
    if (role == Qt::ForegroundRole && inactive)
        return QBrush(toneColor(Tone::Muted));
    return {};
}

}  // namespace

UserTableModel::UserTableModel(QObject* parent)
    : RowModel({tr("User"), tr("State"), tr("Roles")}, parent)
{
}

QVariant UserTableModel::cell(const api::UserSummary& user, int column, int role) const
{
    if (role != Qt::DisplayRole)
        return greyWhen(user.disabled, role);
    switch (column) {
    case Name: return QString::fromStdString(user.name);
    case State: return user.disabled ? tr("disabled") : tr("active");
    case Grants: return user.grants.empty() ? tr("none") : joined(user.grants);
    default: return {};
    }
}

PendingRequestTableModel::PendingRequestTableModel(QObject* parent)
    : RowModel(
        {tr("Request"), tr("For"), tr("What"), tr("Asked by"), tr("Asked at"), tr("Waits for")},
        parent)
{
}

QVariant PendingRequestTableModel::cell(const api::PendingRequestView& request, int column,
                                        int role) const
{
    if (role != Qt::DisplayRole)
        return {};
    switch (column) {
    case Kind: return QString::fromStdString(request.kind);
    case Subject: return QString::fromStdString(request.subject);
    case Detail: return QString::fromStdString(request.detail);
    case RequestedBy: return QString::fromStdString(request.requestedBy);
    case Requested: return utcText(request.createdUnix);
    case WaitsFor: return QString::fromStdString(request.waitsFor);
    default: return {};
    }
}

RoleTableModel::RoleTableModel(QObject* parent)
    : RowModel({tr("Role"), tr("Kind"), tr("Permissions")}, parent)
{
}

QVariant RoleTableModel::cell(const api::RoleSummary& role, int column, int itemRole) const
{
    if (itemRole != Qt::DisplayRole)
        return {};
    switch (column) {
    case Name: return QString::fromStdString(role.name);
    case Kind: return role.builtin ? tr("built in") : tr("custom");
    case Permissions: return joined(role.permissions);
    default: return {};
    }
}

SessionTableModel::SessionTableModel(QObject* parent)
    : RowModel({tr("Session"), tr("User"), tr("Signed in"), tr("Last used"), tr("State")}, parent)
{
}

QVariant SessionTableModel::cell(const api::SessionSummary& session, int column, int role) const
{
    if (role != Qt::DisplayRole)
        return greyWhen(session.revoked || session.expired, role);
    switch (column) {
    case Id: return QString::fromStdString(session.id);
    case User: return QString::fromStdString(session.user);
    case Created: return utcText(session.createdUnix);
    case LastUsed: return utcText(session.lastUsedUnix);
    case State:
        return session.revoked ? tr("revoked") : session.expired ? tr("expired") : tr("live");
    default: return {};
    }
}

}  // namespace sealtrain::gui
