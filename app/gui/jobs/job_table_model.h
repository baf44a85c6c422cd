// The jobs table (JobsPage): one row per job, newest first as the server lists them.
#pragma once

#include "../common/row_model.h"

#include "sealtrain/api/client.h"

namespace sealtrain::gui {

class JobTableModel final : public RowModel<api::JobSummary> {
    Q_OBJECT

public:
    enum Column { Id, Name, Project, State, Submitter, Approver, Worker, Updated };
    explicit JobTableModel(QObject* parent = nullptr);

protected:
    [[nodiscard]] QVariant cell(const api::JobSummary& job, int column, int role) const override;
};

}  // namespace sealtrain::gui
