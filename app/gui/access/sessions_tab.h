// The sessions tab of the users-and-roles screen (access_page.h; session.manage): every session,
// and ending all of a user's sessions.
#pragma once

#include "access_calls.h"
#include "access_models.h"

#include <QWidget>

class QTableView;

namespace sealtrain::gui {

class SessionsTab final : public QWidget {
    Q_OBJECT

public:
    SessionsTab(const AccessCalls& calls, QWidget* parent);

    [[nodiscard]] SessionTableModel& sessions() const noexcept { return *sessions_; }

private:
    const AccessCalls& calls_;
    SessionTableModel* sessions_;
    QTableView* table_;
};

}  // namespace sealtrain::gui
