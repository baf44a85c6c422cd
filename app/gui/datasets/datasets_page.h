// Datasets (dataset.read to see them): the list of the datasets one may read (a steward sees
// all), and for the selected one what its signed manifest says, its parent version, who made
// and signed it and who may read it, its versions and the jobs trained on them drawn as a graph
// (dataset_lineage.h); read grants for stewards (dataset.grant), and the import
// wizard for those who may import (dataset.import).
#pragma once

#include "../common/row_model.h"

#include "sealtrain/api/client.h"

#include <QWidget>

class QLabel;
class QLineEdit;
class QPushButton;
class QScrollArea;
class QTableView;

namespace sealtrain::gui {

class LineageView;
class Session;

class DatasetTableModel final : public RowModel<api::DatasetSummary> {
    Q_OBJECT

public:
    enum Column { Name, Version, Classification, Records, Tokens, Id };
    explicit DatasetTableModel(QObject* parent = nullptr);

protected:
    [[nodiscard]] QVariant cell(const api::DatasetSummary& dataset, int column,
                                int role) const override;
};

class DatasetsPage final : public QWidget {
    Q_OBJECT

public:
    explicit DatasetsPage(Session& session, QWidget* parent = nullptr);

    void reload();
    // Shows what the signed-in user's permissions allow (import, read grants); reload() does
    // it too, and the window at sign-in, so that a screen not yet visited offers nothing more.
    void permit();
    [[nodiscard]] DatasetTableModel& model() const noexcept { return *model_; }

private:
    void show(const api::DatasetSummary& dataset);
    void grant(bool add);
    void openImport();
    void drawLineage();
    void scrollToSelected();

    Session& session_;
    DatasetTableModel* model_;
    QTableView* table_;
    QLabel* details_;
    QLineEdit* reader_;
    QPushButton* grant_;
    QPushButton* revoke_;
    QPushButton* import_;
    QLabel* status_;
    std::string shown_;
    LineageView* lineage_;
    QScrollArea* lineageScroll_ = nullptr;
    std::vector<api::JobSummary> jobs_;
};

}  // namespace sealtrain::gui
