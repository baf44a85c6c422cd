// The pending-resets tab (resets_tab.h).
#include "resets_tab.h"

#include <QTableView>
#include <QVBoxLayout>

#include <utility>

namespace sealtrain::gui {

ResetsTab::ResetsTab(const AccessCalls& calls,
                     std::function<void(const api::ResetResult&)> approved, QWidget* parent)
    : QWidget(parent)
    , calls_(calls)
    , approved_(std::move(approved))
    , resets_(new PendingResetTableModel(this))
    , table_(new QTableView(this))
{
    setObjectName("resetsTab");
    setUpTable(*table_, *resets_, "pendingResetsTable", tr("Resets waiting for approval"));
    auto* approve = namedButton(tr("&Approve the reset"), "approveResetButton", this);
    auto* note = new QLabel(tr("A reset another admin asked for takes effect when a second admin "
                               "approves it; the one-time code is shown to the approver."),
                            this);
    note->setWordWrap(true);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(note);
    layout->addWidget(withFilter(*table_), 1);
    layout->addWidget(approve, 0, Qt::AlignLeft);
    connect(approve, &QPushButton::clicked, this, [this] {
        const api::PendingResetView* pending = resets_->rowAt(table_->currentIndex().row());
        if (pending == nullptr) {
            calls_.say(tr("Choose the reset to approve in the table first."));
            return;
        }
        calls_.call(
            this,
            [user = pending->user](api::ControlClient& client) {
                return client.users().approveReset(user);
            },
            [this](Result<api::ResetResult> result) { approved_(*result); });
    });
}

}  // namespace sealtrain::gui
