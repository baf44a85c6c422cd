// The "Waiting for a second admin" tab of the users-and-roles screen (access_page.h): every
// request another admin made that waits for this admin's confirmation (Access.ListPendingRequests:
// grants with grant.manage, roles with role.manage, admin changes and resets with user.manage),
// and "Confirm the request", which makes the same call the requester made. The server decides:
// a request of one's own is refused there, with its sentence. Confirming a reset shows its
// one-time code to the approver.
#pragma once

#include "access_calls.h"
#include "access_models.h"

#include <QWidget>

#include <functional>
#include <optional>

class QTableView;

namespace sealtrain::gui {

// Confirming `request`: the call the requester made, made again by this admin. For a reset, what
// the approval did (its one-time code); nullopt otherwise.
[[nodiscard]] Result<std::optional<api::ResetResult>>
confirmRequest(api::ControlClient& client, const api::PendingRequestView& request);

class PendingTab final : public QWidget {
    Q_OBJECT

public:
    // `approved` gets what a reset's approval did (the code to hand over).
    PendingTab(const AccessCalls& calls, std::function<void(const api::ResetResult&)> approved,
               QWidget* parent);

    [[nodiscard]] PendingRequestTableModel& requests() const noexcept { return *requests_; }

private:
    const AccessCalls& calls_;
    std::function<void(const api::ResetResult&)> approved_;
    PendingRequestTableModel* requests_;
    QTableView* table_;
};

}  // namespace sealtrain::gui
