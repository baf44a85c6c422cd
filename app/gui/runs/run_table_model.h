// The runs table (RunsPage): one row per run, newest first as the server lists them, with what
// its last step lines say.
#pragma once

#include "../common/row_model.h"

#include "sealtrain/api/client.h"

namespace sealtrain::gui {

class RunTableModel final : public RowModel<api::RunView> {
    Q_OBJECT

public:
    enum Column { Id, Name, State, Steps, Loss, ValidationLoss, Restarts, Workers };
    explicit RunTableModel(QObject* parent = nullptr);

protected:
    [[nodiscard]] QVariant cell(const api::RunView& run, int column, int role) const override;
};

// The workers of a run's attempts in order, each once ("control plane" for its own trainer).
[[nodiscard]] QString runWorkers(const api::RunView& run);

}  // namespace sealtrain::gui
