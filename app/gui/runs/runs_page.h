// Runs (issue #30; docs/runs.md, docs/gui.md "Runs"): every run of the caller's projects with what
// its last lines say; the runs chosen in the table (one or several) compared: their loss and
// validation loss overlaid by step with each restart marked, their attempts, the parameters that
// differ (or all), and their histories exported as CSV or JSON (docs/formats/run-metrics.md).
// Shown to whoever may submit or approve jobs.
#pragma once

#include "sealtrain/api/client.h"

#include <QWidget>

#include <cstdint>
#include <vector>

class QCheckBox;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QTableView;
class QTableWidget;

namespace sealtrain::gui {

class CompareChart;
class RunTableModel;
class Session;

class RunsPage final : public QWidget {
    Q_OBJECT

public:
    // At most this many runs are compared at once (the chart's colours).
    static constexpr int kMaxCompared = 7;

    explicit RunsPage(Session& session, QWidget* parent = nullptr);

    void reload();
    // Forgets every run and history shown (the user signed out or the window locked).
    void clear();
    // Chooses runs `ids` in the table (which compares them); false when one is not listed.
    bool choose(const std::vector<std::int64_t>& ids);
    // Writes the compared runs' histories to `path` as CSV, or JSON (mode 0600); false, with the
    // reason shown, when nothing is compared or the file can not be written.
    bool exportTo(const QString& path, bool json);

    [[nodiscard]] RunTableModel& model() const noexcept { return *model_; }
    [[nodiscard]] CompareChart& chart() const noexcept { return *chart_; }
    [[nodiscard]] const std::vector<api::RunView>& compared() const noexcept { return runs_; }

signals:
    // The chosen runs and their histories have arrived and are shown.
    void compareShown();

private:
    void compareChosen();
    void showCompared();
    void showParameters();
    void askAndExport(bool json);
    void showError(const QString& message);

    Session& session_;
    RunTableModel* model_;
    QTableView* table_;
    QLabel* title_;
    QLabel* error_;
    CompareChart* chart_;
    QPlainTextEdit* attempts_;
    QTableWidget* parameters_;
    QCheckBox* allParameters_;
    QPushButton* exportCsv_;
    QPushButton* exportJson_;
    std::vector<api::RunView> runs_;
    std::vector<std::vector<api::RunPointView>> histories_;
    int asked_ = 0;  // which choice the histories in flight belong to
};

}  // namespace sealtrain::gui
