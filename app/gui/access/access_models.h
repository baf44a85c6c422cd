// The users-and-roles screen's tables (access_page.h), fed the client library's plain rows so
// that they are tested without a server: users with their state and grants, the resets waiting
// for a second admin, roles with their permissions, and sessions.
#pragma once

#include "../common/row_model.h"

#include "sealtrain/api/client.h"
#include "sealtrain/api/client_views.h"

namespace sealtrain::gui {

class UserTableModel final : public RowModel<api::UserSummary> {
    Q_OBJECT

public:
    enum Column { Name, State, Grants };
    explicit UserTableModel(QObject* parent = nullptr);

protected:
    [[nodiscard]] QVariant cell(const api::UserSummary& user, int column, int role) const override;
};

class PendingRequestTableModel final : public RowModel<api::PendingRequestView> {
    Q_OBJECT

public:
    enum Column { Kind, Subject, Detail, RequestedBy, Requested, WaitsFor };
    explicit PendingRequestTableModel(QObject* parent = nullptr);

protected:
    [[nodiscard]] QVariant cell(const api::PendingRequestView& request, int column,
                                int role) const override;
};

class RoleTableModel final : public RowModel<api::RoleSummary> {
    Q_OBJECT

public:
    enum Column { Name, Kind, Permissions };
    explicit RoleTableModel(QObject* parent = nullptr);

protected:
    [[nodiscard]] QVariant cell(const api::RoleSummary& role, int column,
                                int itemRole) const override;
};

class SessionTableModel final : public RowModel<api::SessionSummary> {
    Q_OBJECT

public:
    enum Column { Id, User, Created, LastUsed, State };
    explicit SessionTableModel(QObject* parent = nullptr);

protected:
    [[nodiscard]] QVariant cell(const api::SessionSummary& session, int column,
                                int role) const override;
};

}  // namespace sealtrain::gui
