// The requests waiting for a second admin (pending_tab.h).
#include "pending_tab.h"

#include <QTableView>
#include <QVBoxLayout>

#include <utility>

namespace sealtrain::gui {

Result<std::optional<api::ResetResult>> confirmRequest(api::ControlClient& client,
                                                       const api::PendingRequestView& request)
{
    using Confirmed = std::optional<api::ResetResult>;
    const auto done = [](const auto& result) -> Result<Confirmed> {
        if (!result)
            return result.error();
        return Confirmed();
    };
    if (request.kind == "grant") {
        const auto at = request.detail.find('@');
        return done(client.access().grantRole(
            request.subject, request.detail.substr(0, at),
            at == std::string::npos ? std::string() : request.detail.substr(at + 1)));
    }
    if (request.kind == "role") {
        std::vector<std::string> permissions;
        std::string::size_type from = 0;
        while (from <= request.detail.size()) {
            const auto comma = request.detail.find(',', from);
            const auto end = comma == std::string::npos ? request.detail.size() : comma;
            if (end > from)
                permissions.push_back(request.detail.substr(from, end - from));
            from = end + 1;
        }
        return done(client.access().createRole(request.subject, permissions));
    }
    if (request.kind == "admin-change" && request.detail == "user.disable")
        return done(client.users().disableUser(request.subject));
    if (request.kind == "admin-change" && request.detail == "grant.revoke")
        return done(client.access().revokeRole(request.subject, "admin", ""));
    if (request.kind == "reset") {
        auto approved = client.users().approveReset(request.subject);
        if (!approved)
            return approved.error();
        return Confirmed(std::move(*approved));
    }
    return Error(ErrorCode::InvalidArgument,
                 "This desktop does not know how to confirm a '" + request.kind
                     + "' request; update it, or make the same call with sealtrainctl.");
}

PendingTab::PendingTab(const AccessCalls& calls,
                       std::function<void(const api::ResetResult&)> approved, QWidget* parent)
    : QWidget(parent)
    , calls_(calls)
    , approved_(std::move(approved))
    , requests_(new PendingRequestTableModel(this))
    , table_(new QTableView(this))
{
    setObjectName("pendingTab");
    setUpTable(*table_, *requests_, "pendingRequestsTable",
               tr("Requests waiting for a second admin"));
    auto* confirm = namedButton(tr("&Confirm the request"), "confirmRequestButton", this);
    auto* note = new QLabel(
        tr("With two or more admins, a grant or a role that gives a separated duty, a reset, and "
           "taking admin from one of two take effect when a second admin makes the same call; "
           "confirming here makes it. Your own requests wait for another admin."),
        this);
    note->setWordWrap(true);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(note);
    layout->addWidget(withFilter(*table_), 1);
    layout->addWidget(confirm, 0, Qt::AlignLeft);
    connect(confirm, &QPushButton::clicked, this, [this] {
        const api::PendingRequestView* request = requests_->rowAt(table_->currentIndex().row());
        if (request == nullptr) {
            calls_.say(tr("Choose the request to confirm in the table first."));
            return;
        }
        calls_.call(
            this,
            [request = *request](api::ControlClient& client) {
                return confirmRequest(client, request);
            },
            [this, kind = request->kind,
             subject = request->subject](Result<std::optional<api::ResetResult>> result) {
                if (*result)
                    approved_(**result);
                else
                    calls_.say(
                        tr("Confirmed: the %1 request for %2 is made.")
                            .arg(QString::fromStdString(kind), QString::fromStdString(subject)));
            });
    });
}

}  // namespace sealtrain::gui
