// The audit trail's health, for auditors (audit.read; issue #51): where the log is kept besides
// the control plane. Forwarding to a SIEM (the target's kind, entries delivered and behind, the
// newest signed head it has, the last delivery and its age, since when a refusing target has
// refused and how often) and the witnesses outside the data directory that keep every signed
// head: Platform.GetServerInfo's counts and times (docs/formats/audit-forward.md, "Delivery").
// The target's address and its errors' text stay in the daemon's log.
#pragma once

#include "sealtrain/api/client.h"

#include <QWidget>

class QLabel;
class QPushButton;

namespace sealtrain::gui {

class Session;

class TrailTab final : public QWidget {
    Q_OBJECT

public:
    explicit TrailTab(Session& session, QWidget* parent = nullptr);

    [[nodiscard]] static bool allowedFor(const Session& session);
    void reload();
    void clear();
    // Fills the form from what GetServerInfo said (reload() calls it; tests feed it).
    void show(const api::ServerInfoView& info, std::int64_t nowUnix);

private:
    Session& session_;
    QLabel* verdict_;
    QLabel* kind_;
    QLabel* delivered_;
    QLabel* behind_;
    QLabel* head_;
    QLabel* lastDelivery_;
    QLabel* failing_;
    QLabel* witnesses_;
    QPushButton* check_;
};

}  // namespace sealtrain::gui
