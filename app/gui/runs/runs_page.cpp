// The runs screen (runs_page.h).
#include "runs_page.h"

#include "common/colors.h"

#include "../common/background.h"
#include "../common/row_model.h"
#include "../session/session.h"
#include "compare_chart.h"
#include "run_table_model.h"

#include "sealtrain/api/run_compare.h"
#include "sealtrain/base/byte_io.h"

#include <QCheckBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <filesystem>
#include <utility>

namespace sealtrain::gui {
namespace {

// What the chosen runs are, with their histories: fetched together, off the GUI thread.
struct Compared {
    std::vector<api::RunView> runs;
    std::vector<std::vector<api::RunPointView>> histories;
};

QString attemptsText(const std::vector<api::RunView>& runs)
{
    QStringList lines;
    for (const api::RunView& run : runs) {
        lines.append(QObject::tr("Run %1, %2: %3%4")
                         .arg(run.job.id)
                         .arg(QString::fromStdString(run.job.name),
                              QString::fromStdString(run.job.state),
                              run.job.reason.empty()
                                  ? QString()
                                  : QString(" (%1)").arg(QString::fromStdString(run.job.reason))));
        for (const api::RunAttemptView& attempt : run.attempts) {
            const QString where = attempt.worker.empty() ? QObject::tr("the control plane")
                                                         : QString::fromStdString(attempt.worker);
            const QString from = attempt.resumedFromStep == 0
                                     ? QObject::tr("from scratch")
                                     : QObject::tr("resumed from the checkpoint at step %1")
                                           .arg(attempt.resumedFromStep);
            const QString steps =
                attempt.lastStep == 0
                    ? QObject::tr("no steps recorded")
                    : QObject::tr("steps %1 to %2").arg(attempt.firstStep).arg(attempt.lastStep);
            lines.append(
                QObject::tr("  attempt %1 on %2, %3: %4%5; %6")
                    .arg(attempt.attempt)
                    .arg(where, utcText(attempt.startedUnix),
                         QString::fromStdString(attempt.outcome),
                         attempt.reason.empty()
                             ? QString()
                             : QString(" (%1)").arg(QString::fromStdString(attempt.reason)),
                         from + ", " + steps));
        }
    }
    return lines.join('\n');
}

}  // namespace

RunsPage::RunsPage(Session& session, QWidget* parent)
    : QWidget(parent)
    , session_(session)
    , model_(new RunTableModel(this))
    , table_(new QTableView(this))
    , title_(new QLabel(this))
    , error_(new QLabel(this))
    , chart_(new CompareChart(this))
    , attempts_(new QPlainTextEdit(this))
    , parameters_(new QTableWidget(this))
    , allParameters_(new QCheckBox(tr("Show &every parameter"), this))
    , exportCsv_(new QPushButton(tr("Export &CSV…"), this))
    , exportJson_(new QPushButton(tr("Export &JSON…"), this))
{
    setObjectName("runsPage");
    setUpTable(*table_, *model_, "runsTable", tr("Runs"));
    // Several runs are compared: chosen with Ctrl or Shift, as in any list.
    table_->setSelectionMode(QAbstractItemView::ExtendedSelection);
    title_->setObjectName("runsTitle");
    title_->setWordWrap(true);
    title_->setText(tr("Choose a run, or several with Ctrl or Shift, to compare them."));
    error_->setObjectName("runsError");
    error_->setWordWrap(true);
    error_->setStyleSheet(toneStyle(Tone::Bad));
    attempts_->setObjectName("runAttempts");
    attempts_->setReadOnly(true);
    attempts_->setTabChangesFocus(true);
    attempts_->setAccessibleName(tr("The chosen runs' attempts and restarts"));
    parameters_->setObjectName("runParameters");
    parameters_->setAccessibleName(tr("The chosen runs' parameters side by side"));
    parameters_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    parameters_->horizontalHeader()->setStretchLastSection(true);
    parameters_->verticalHeader()->hide();
    allParameters_->setObjectName("allParameters");
    allParameters_->setAccessibleName(tr("Show every parameter, not only those that differ"));
    exportCsv_->setObjectName("exportRunsCsv");
    exportCsv_->setAccessibleName(tr("Export the chosen runs' histories as CSV"));
    exportJson_->setObjectName("exportRunsJson");
    exportJson_->setAccessibleName(tr("Export the chosen runs' histories as JSON"));
    for (QPushButton* button : {exportCsv_, exportJson_})
        button->setEnabled(false);

    auto* buttons = new QHBoxLayout;
    buttons->addWidget(allParameters_);
    buttons->addStretch(1);
    buttons->addWidget(exportCsv_);
    buttons->addWidget(exportJson_);
    auto* tabs = new QTabWidget(this);
    tabs->setObjectName("runTabs");
    tabs->addTab(parameters_, tr("Parameters"));
    tabs->addTab(attempts_, tr("Attempts"));
    auto* details = new QWidget(this);
    auto* detailsLayout = new QVBoxLayout(details);
    detailsLayout->addWidget(title_);
    detailsLayout->addWidget(error_);
    detailsLayout->addWidget(chart_, 3);
    detailsLayout->addLayout(buttons);
    detailsLayout->addWidget(tabs, 2);
    auto* split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(withFilter(*table_));
    split->addWidget(details);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 1);
    split->setSizes({520, 480});
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(split);

    connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            [this] { compareChosen(); });
    connect(allParameters_, &QCheckBox::toggled, this, [this] { showParameters(); });
    connect(exportCsv_, &QPushButton::clicked, this, [this] { askAndExport(false); });
    connect(exportJson_, &QPushButton::clicked, this, [this] { askAndExport(true); });
}

void RunsPage::reload()
{
    auto client = session_.client();
    if (!client)
        return;
    runInBackground(
        this, [client] { return client->runs().listRuns(); },
        [this](Result<std::vector<api::RunView>> runs) {
            if (!runs) {
                showError(sentence(runs.error()));
                return;
            }
            std::vector<std::int64_t> kept;
            for (const api::RunView& run : runs_)
                kept.push_back(run.job.id);
            const QSignalBlocker quiet(table_->selectionModel());
            model_->setRows(std::move(*runs));
            table_->resizeColumnsToContents();
            // The runs compared stay chosen; their histories are not fetched again.
            for (int row = 0; row < model_->rowCount(); ++row)
                if (std::find(kept.begin(), kept.end(), model_->rowAt(row)->job.id) != kept.end())
                    table_->selectionModel()->select(model_->index(row, 0),
                                                     QItemSelectionModel::Select
                                                         | QItemSelectionModel::Rows);
        });
}

void RunsPage::clear()
{
    ++asked_;  // a history in flight is dropped when it comes
    const QSignalBlocker quiet(table_->selectionModel());
    model_->setRows({});
    runs_.clear();
    histories_.clear();
    error_->clear();
    showCompared();
}

bool RunsPage::choose(const std::vector<std::int64_t>& ids)
{
    QItemSelection chosen;
    int found = 0;
    for (int row = 0; row < model_->rowCount(); ++row) {
        if (std::find(ids.begin(), ids.end(), model_->rowAt(row)->job.id) == ids.end())
            continue;
        chosen.select(model_->index(row, 0), model_->index(row, model_->columnCount() - 1));
        ++found;
    }
    table_->selectionModel()->select(chosen, QItemSelectionModel::ClearAndSelect);
    return found == static_cast<int>(ids.size());
}

void RunsPage::compareChosen()
{
    std::vector<std::int64_t> ids;
    for (const QModelIndex& index : table_->selectionModel()->selectedRows())
        if (const api::RunView* run = model_->rowAt(index.row()))
            ids.push_back(run->job.id);
    std::sort(ids.begin(), ids.end());
    error_->clear();
    if (static_cast<int>(ids.size()) > kMaxCompared) {
        showError(tr("Compare at most %1 runs at once; choose fewer.").arg(kMaxCompared));
        return;
    }
    const int asked = ++asked_;
    auto client = session_.client();
    if (ids.empty() || !client) {
        runs_.clear();
        histories_.clear();
        showCompared();
        return;
    }
    title_->setText(tr("Reading %n run(s)…", "", static_cast<int>(ids.size())));
    runInBackground(
        this,
        [client, ids]() -> Result<Compared> {
            Compared compared;
            for (const std::int64_t id : ids) {
                auto run = client->runs().showRun(id);
                if (!run)
                    return run.error();
                auto history = client->runs().runMetrics(id);
                if (!history)
                    return history.error();
                compared.runs.push_back(std::move(*run));
                compared.histories.push_back(std::move(*history));
            }
            return compared;
        },
        [this, asked](Result<Compared> compared) {
            if (asked != asked_)
                return;  // another choice was made meanwhile
            if (!compared) {
                showError(sentence(compared.error()));
                return;
            }
            runs_ = std::move(compared->runs);
            histories_ = std::move(compared->histories);
            showCompared();
            emit compareShown();
        });
}

void RunsPage::showCompared()
{
    chart_->showRuns(runs_, histories_);
    attempts_->setPlainText(attemptsText(runs_));
    showParameters();
    for (QPushButton* button : {exportCsv_, exportJson_})
        button->setEnabled(!runs_.empty());
    if (runs_.empty()) {
        title_->setText(tr("Choose a run, or several with Ctrl or Shift, to compare them."));
        return;
    }
    QStringList names;
    for (const api::RunView& run : runs_)
        names.append(tr("%1 (%2)").arg(run.job.id).arg(QString::fromStdString(run.job.name)));
    title_->setText(runs_.size() == 1 ? tr("Run %1").arg(names.front())
                                      : tr("Comparing runs %1").arg(names.join(", ")));
}

void RunsPage::showParameters()
{
    const std::vector<api::ParameterRow> rows = api::compareParameters(runs_);
    const bool all = allParameters_->isChecked() || runs_.size() < 2;
    QStringList headers{tr("Parameter")};
    for (const api::RunView& run : runs_)
        headers.append(tr("Run %1").arg(run.job.id));
    parameters_->clear();
    parameters_->setColumnCount(static_cast<int>(headers.size()));
    parameters_->setHorizontalHeaderLabels(headers);
    parameters_->setRowCount(0);
    for (const api::ParameterRow& row : rows) {
        if (!all && !row.differs)
            continue;
        const int at = parameters_->rowCount();
        parameters_->insertRow(at);
        parameters_->setItem(at, 0, new QTableWidgetItem(QString::fromStdString(row.name)));
        for (std::size_t i = 0; i < row.values.size(); ++i) {
            auto* item = new QTableWidgetItem(QString::fromStdString(row.values[i]));
            if (row.differs)
                item->setBackground(markBackground());  // what sets the runs apart
            parameters_->setItem(at, static_cast<int>(i) + 1, item);
        }
    }
    parameters_->resizeColumnsToContents();
}

bool RunsPage::exportTo(const QString& path, bool json)
{
    if (runs_.empty()) {
        showError(tr("Choose the runs to export first."));
        return false;
    }
    const std::string text =
        json ? api::metricsJson(runs_, histories_) : api::metricsCsv(runs_, histories_);
    auto written =
        writeFileAtomically(std::filesystem::path(path.toStdString()),
                            {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()},
                            AtomicFileSink::Overwrite::Allow, 0600U);
    if (!written) {
        showError(sentence(written.error()));
        return false;
    }
    error_->clear();
    title_->setText(tr("Exported %n run(s) to %1.", "", static_cast<int>(runs_.size())).arg(path));
    return true;
}

void RunsPage::askAndExport(bool json)
{
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export the runs' histories"), json ? "runs.json" : "runs.csv",
        json ? tr("JSON (*.json)") : tr("CSV (*.csv)"));
    if (!path.isEmpty())
        exportTo(path, json);
}

void RunsPage::showError(const QString& message)
{
    error_->setText(message);
}

}  // namespace sealtrain::gui
