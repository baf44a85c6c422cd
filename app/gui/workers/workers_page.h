// Workers, for operators (worker.read to see them, worker.enroll to change them): the enrolled
// workers with their pool, state, last heartbeat (red when silent), certificate expiry (red within
// 30 days), current job and inventory; a one-time
// enrolment token for a new node (shown once, selectable to copy); revocation with a reason.
#pragma once

#include "../common/row_model.h"

#include "sealtrain/api/client.h"

#include <QWidget>

class QLabel;
class QLineEdit;
class QPushButton;
class QTableView;

namespace sealtrain::gui {

class Session;

class WorkerTableModel final : public RowModel<api::WorkerSummary> {
    Q_OBJECT

public:
    enum Column { Name, Pool, State, LastSeen, CertificateExpires, Job, Gpus, Interconnect };
    explicit WorkerTableModel(QObject* parent = nullptr);

    // An active worker is silent after two minutes without a heartbeat, and its certificate
    // expiring within 30 days (or past): each shown in red.
    static constexpr std::int64_t kSilentAfter = 120;
    static constexpr std::int64_t kExpiryWarning = std::int64_t{30} * 24 * 3600;
    struct Health {
        bool silent = false;
        bool expiring = false;
    };
    [[nodiscard]] static Health health(const api::WorkerSummary& worker, std::int64_t nowUnix);

protected:
    [[nodiscard]] QVariant cell(const api::WorkerSummary& worker, int column,
                                int role) const override;
};

class WorkersPage final : public QWidget {
    Q_OBJECT

public:
    explicit WorkersPage(Session& session, QWidget* parent = nullptr);

    void reload();
    // Shows the enrolment and revocation controls to those who may enrol (reload() and the
    // window at sign-in call it).
    void permit();
    [[nodiscard]] WorkerTableModel& model() const noexcept { return *model_; }

private:
    void makeToken();
    void revoke();

    Session& session_;
    WorkerTableModel* model_;
    QTableView* table_;
    QLineEdit* name_;
    QLineEdit* pool_;
    QPushButton* token_;
    QLineEdit* tokenShown_;
    QLineEdit* reason_;
    QPushButton* revoke_;
    QLabel* status_;
};

}  // namespace sealtrain::gui
