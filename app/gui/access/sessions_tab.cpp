// The sessions tab (sessions_tab.h).
#include "sessions_tab.h"

#include <QTableView>
#include <QVBoxLayout>

#include <cstdint>

namespace sealtrain::gui {

SessionsTab::SessionsTab(const AccessCalls& calls, QWidget* parent)
    : QWidget(parent)
    , calls_(calls)
    , sessions_(new SessionTableModel(this))
    , table_(new QTableView(this))
{
    setObjectName("sessionsTab");
    setUpTable(*table_, *sessions_, "sessionsTable", tr("Sessions"));
    auto* end = namedButton(tr("&End every session of this user"), "endSessionsButton", this);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(withFilter(*table_), 1);
    layout->addWidget(end, 0, Qt::AlignLeft);
    connect(end, &QPushButton::clicked, this, [this] {
        const api::SessionSummary* row = sessions_->rowAt(table_->currentIndex().row());
        if (row == nullptr) {
            calls_.say(tr("Choose a session of the user in the table first."));
            return;
        }
        calls_.call(
            this,
            [user = row->user](api::ControlClient& client) {
                return client.sessions().revokeSessions(user);
            },
            [this, user = QString::fromStdString(row->user)](Result<std::uint32_t> ended) {
                calls_.say(tr("%1 certificates of %2 are revoked; they sign in again.")
                               .arg(*ended)
                               .arg(user));
            });
    });
}

}  // namespace sealtrain::gui
