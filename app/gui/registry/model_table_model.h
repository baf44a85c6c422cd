// The models table (ModelsPage): one row per model of the caller's projects, with its versions,
// pending promotions and aliases.
#pragma once

#include "../common/row_model.h"

#include "sealtrain/api/client.h"

namespace sealtrain::gui {

class ModelTableModel final : public RowModel<api::ModelSummaryView> {
    Q_OBJECT

public:
    enum Column { Name, Project, Versions, Pending, Aliases };
    explicit ModelTableModel(QObject* parent = nullptr);

protected:
    [[nodiscard]] QVariant cell(const api::ModelSummaryView& model, int column,
                                int role) const override;
};

}  // namespace sealtrain::gui
