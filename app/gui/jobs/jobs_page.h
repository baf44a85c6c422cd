// Jobs: the list of the caller's projects' jobs; for the selected one, exactly what an approval
// approves (the canonical spec and its SHA-256) with the vetting report, approve and reject
// (absent for one's own job; the server refuses it anyway), cancel, live charts and the log
// from Jobs.WatchJob, its checkpoints (listed from the same watch, downloaded sealed), text sampled
// from them, and a new job's spec, checked against the schema as it is typed, to submit.
#pragma once

#include "sealtrain/api/client.h"

#include <QWidget>

#include <cstdint>
#include <memory>

class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QTableView;
class QListWidget;

namespace sealtrain::gui {

class CheckpointsPanel;
class JobTableModel;
class MetricsChart;
class NewJobPanel;
class SamplePanel;
class Session;

class JobsPage final : public QWidget {
    Q_OBJECT

public:
    explicit JobsPage(Session& session, QWidget* parent = nullptr);
    ~JobsPage() override;

    void reload();
    // Shows the New job tab to those who may submit (reload() and the window at sign-in call
    // it); the review buttons follow the job shown.
    void permit();
    [[nodiscard]] JobTableModel& model() const noexcept { return *model_; }
    [[nodiscard]] MetricsChart& chart() const noexcept { return *chart_; }
    [[nodiscard]] CheckpointsPanel& checkpoints() const noexcept { return *checkpoints_; }
    // Selects job `id` in the table (and shows it); false when it is not listed.
    bool select(std::int64_t id);

private:
    void show(const api::JobSummary& job);
    void startWatch(std::int64_t id);
    void stopWatch();
    void decide(const QString& what);
    void showError(const QString& message);

    Session& session_;
    JobTableModel* model_;
    QTableView* table_;
    QLabel* title_;
    QLabel* sha_;
    QPlainTextEdit* spec_;
    QListWidget* vetting_;
    QLineEdit* reason_;
    QPushButton* approve_;
    QPushButton* reject_;
    QPushButton* cancel_;
    MetricsChart* chart_;
    QPlainTextEdit* log_;
    CheckpointsPanel* checkpoints_;
    SamplePanel* sample_;
    NewJobPanel* newJob_;
    QLabel* error_;
    std::int64_t shown_ = 0;
    std::int64_t wanted_ = 0;  // a job just submitted, to show when the list comes
    std::shared_ptr<api::CallCancel> watch_;
};

}  // namespace sealtrain::gui
