// The pending-resets tab of the users-and-roles screen (access_page.h; user.manage): the resets
// another admin asked for, to approve as the second admin, who is then shown the one-time code.
#pragma once

#include "access_calls.h"
#include "access_models.h"

#include <QWidget>

#include <functional>

class QTableView;

namespace sealtrain::gui {

class ResetsTab final : public QWidget {
    Q_OBJECT

public:
    // `approved` gets what an approval did (the code to hand over).
    ResetsTab(const AccessCalls& calls, std::function<void(const api::ResetResult&)> approved,
              QWidget* parent);

    [[nodiscard]] PendingResetTableModel& resets() const noexcept { return *resets_; }

private:
    const AccessCalls& calls_;
    std::function<void(const api::ResetResult&)> approved_;
    PendingResetTableModel* resets_;
    QTableView* table_;
};

}  // namespace sealtrain::gui
