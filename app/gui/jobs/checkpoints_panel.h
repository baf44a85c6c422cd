// The selected job's checkpoints (issue #29): every checkpoint the control plane recorded, as
// the job's watch reports them (so showing them costs no call and no audit entry of its own),
// and a download of the chosen one into a folder, sealed, with its DSSE envelope
// (Jobs.DownloadCheckpoint, audited). The files stay sealed under the job's key; the panel says
// how a reviewer checks their signed lineage (`sealtrainctl checkpoint verify`).
#pragma once

#include "../common/row_model.h"

#include "sealtrain/api/client.h"

#include <QWidget>

#include <cstdint>

class QLabel;
class QLineEdit;
class QTableView;

namespace sealtrain::gui {

class Session;

class CheckpointTableModel final : public RowModel<api::JobCheckpointView> {
    Q_OBJECT

public:
    enum Column { Step, Attempt, Worker, Recorded, SealedSha256 };
    explicit CheckpointTableModel(QObject* parent = nullptr);

protected:
    [[nodiscard]] QVariant cell(const api::JobCheckpointView& checkpoint, int column,
                                int role) const override;
};

class CheckpointsPanel final : public QWidget {
    Q_OBJECT

public:
    CheckpointsPanel(Session& session, QWidget* parent = nullptr);

    // A new job is shown: its checkpoints arrive through add().
    void showJob(std::int64_t id);
    void add(const api::JobCheckpointView& checkpoint);
    [[nodiscard]] CheckpointTableModel& model() const noexcept { return *model_; }

private:
    void download();

    Session& session_;
    CheckpointTableModel* model_;
    QTableView* table_;
    QLineEdit* folder_;
    QLabel* status_;
    std::int64_t job_ = 0;
};

}  // namespace sealtrain::gui
