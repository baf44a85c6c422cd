// The jobs screen (jobs_page.h).
#include "jobs_page.h"

#include "common/colors.h"

#include "../common/background.h"
#include "../common/row_model.h"
#include "../session/session.h"
#include "checkpoints_panel.h"
#include "job_table_model.h"
#include "metrics_chart.h"
#include "new_job_panel.h"
#include "sample_panel.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPointer>
#include <QPushButton>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

namespace sealtrain::gui {

JobsPage::JobsPage(Session& session, QWidget* parent)
    : QWidget(parent)
    , session_(session)
    , model_(new JobTableModel(this))
    , table_(new QTableView(this))
    , title_(new QLabel(this))
    , sha_(new QLabel(this))
    , spec_(new QPlainTextEdit(this))
    , vetting_(new QListWidget(this))
    , reason_(new QLineEdit(this))
    , approve_(new QPushButton(tr("&Approve this spec"), this))
    , reject_(new QPushButton(tr("&Reject"), this))
    , cancel_(new QPushButton(tr("&Cancel job"), this))
    , chart_(new MetricsChart(this))
    , log_(new QPlainTextEdit(this))
    , checkpoints_(new CheckpointsPanel(session, this))
    , sample_(new SamplePanel(session, this))
    , newJob_(new NewJobPanel(session, this))
    , error_(new QLabel(this))
{
    setObjectName("jobsPage");
    setUpTable(*table_, *model_, "jobsTable", tr("Jobs"));
    title_->setObjectName("jobTitle");
    title_->setWordWrap(true);
    sha_->setObjectName("jobSha256");
    sha_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    sha_->setAccessibleName(tr("SHA-256 of the spec an approval approves"));
    spec_->setObjectName("jobSpec");
    spec_->setReadOnly(true);
    spec_->setTabChangesFocus(true);
    spec_->setAccessibleName(tr("The canonical spec"));
    vetting_->setObjectName("jobVetting");
    vetting_->setAccessibleName(tr("Vetting report"));
    vetting_->setWordWrap(true);
    reason_->setObjectName("jobReason");
    reason_->setPlaceholderText(tr("Reason (for a rejection or a cancellation)"));
    reason_->setAccessibleName(tr("Reason"));
    approve_->setObjectName("approveButton");
    reject_->setObjectName("rejectButton");
    cancel_->setObjectName("cancelButton");
    log_->setObjectName("jobLog");
    log_->setReadOnly(true);
    log_->setTabChangesFocus(true);
    log_->setAccessibleName(tr("The job's log"));
    log_->setMaximumBlockCount(10000);
    error_->setObjectName("jobsError");
    error_->setWordWrap(true);
    error_->setStyleSheet(toneStyle(Tone::Bad));

    auto* buttons = new QHBoxLayout;
    buttons->addWidget(approve_);
    buttons->addWidget(reject_);
    buttons->addWidget(cancel_);
    buttons->addWidget(reason_, 1);
    auto* review = new QWidget(this);
    auto* reviewLayout = new QVBoxLayout(review);
    reviewLayout->addWidget(sha_);
    reviewLayout->addWidget(spec_, 2);
    reviewLayout->addWidget(vetting_, 1);
    auto* tabs = new QTabWidget(this);
    tabs->setObjectName("jobTabs");
    tabs->addTab(review, tr("Spec and vetting"));
    tabs->addTab(chart_, tr("Metrics"));
    tabs->addTab(log_, tr("Log"));
    tabs->addTab(checkpoints_, tr("Checkpoints"));
    tabs->addTab(sample_, tr("Sample"));
    tabs->addTab(newJob_, tr("New job"));

    auto* details = new QWidget(this);
    auto* detailsLayout = new QVBoxLayout(details);
    detailsLayout->addWidget(title_);
    detailsLayout->addLayout(buttons);
    detailsLayout->addWidget(error_);
    detailsLayout->addWidget(tabs, 1);
    auto* split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(withFilter(*table_));
    split->addWidget(details);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 3);
    split->setSizes({460, 700});
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(split);

    for (QPushButton* button : {approve_, reject_, cancel_})
        button->hide();
    connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                if (const api::JobSummary* job = model_->rowAt(current.row()))
                    show(*job);
            });
    connect(approve_, &QPushButton::clicked, this, [this] { decide("approve"); });
    connect(reject_, &QPushButton::clicked, this, [this] { decide("reject"); });
    connect(cancel_, &QPushButton::clicked, this, [this] { decide("cancel"); });
    connect(newJob_, &NewJobPanel::submitted, this, [this](std::int64_t id) {
        error_->clear();
        wanted_ = id;  // shown once the list has it
        reload();
    });
    connect(newJob_, &NewJobPanel::failed, this, &JobsPage::showError);
}

JobsPage::~JobsPage()
{
    stopWatch();
}

void JobsPage::permit()
{
    auto* tabs = findChild<QTabWidget*>("jobTabs");
    tabs->setTabVisible(tabs->indexOf(newJob_), session_.holds("job.submit"));
}

void JobsPage::reload()
{
    permit();
    auto client = session_.client();
    if (!client)
        return;
    runInBackground(
        this, [client] { return client->jobs().listJobs(); },
        [this](Result<std::vector<api::JobSummary>> jobs) {
            if (!jobs) {
                showError(sentence(jobs.error()));
                return;
            }
            const std::int64_t keep = wanted_ != 0 ? wanted_ : shown_;
            wanted_ = 0;
            model_->setRows(std::move(*jobs));
            table_->resizeColumnsToContents();
            if (keep != 0)
                select(keep);
        });
}

bool JobsPage::select(std::int64_t id)
{
    for (int row = 0; row < model_->rowCount(); ++row) {
        if (model_->rowAt(row)->id == id) {
            table_->selectRow(row);
            if (const api::JobSummary* job = model_->rowAt(row))
                show(*job);
            return true;
        }
    }
    return false;
}

void JobsPage::show(const api::JobSummary& job)
{
    const bool other = job.id != shown_;
    shown_ = job.id;
    title_->setText(tr("Job %1, %2, in %3: %4 (submitted by %5)")
                        .arg(job.id)
                        .arg(QString::fromStdString(job.name), QString::fromStdString(job.project),
                             QString::fromStdString(job.state),
                             QString::fromStdString(job.submitter)));
    sha_->setText(tr("SHA-256 %1").arg(QString::fromStdString(job.specSha256)));
    // The canonical spec, indented for reading; the SHA-256 above is of the canonical bytes.
    const QJsonDocument spec = QJsonDocument::fromJson(QByteArray::fromStdString(job.specJson));
    spec_->setPlainText(spec.isNull() ? QString::fromStdString(job.specJson)
                                      : QString::fromUtf8(spec.toJson(QJsonDocument::Indented)));
    vetting_->clear();
    for (const api::VettingCheck& check : job.vetting)
        vetting_->addItem(QString("%1 %2: %3")
                              .arg(check.ok ? QString::fromUtf8("✓") : QString::fromUtf8("✗"),
                                   QString::fromStdString(check.check),
                                   QString::fromStdString(check.detail)));
    const auto& who = session_.who();
    const bool mine = who && who->user == job.submitter;
    const bool approver = session_.holds("job.approve");
    // The button is absent for one's own job; the server refuses a forced click anyway.
    approve_->setVisible(approver && !mine && job.state == "vetted");
    reject_->setVisible(approver && !mine && (job.state == "vetted" || job.state == "submitted"));
    const bool ended = job.state == "succeeded" || job.state == "failed" || job.state == "cancelled"
                       || job.state == "rejected";
    cancel_->setVisible((mine || approver) && !ended);
    if (other || !watch_) {
        error_->clear();
        chart_->clear();
        log_->clear();
        checkpoints_->showJob(job.id);
        sample_->showJob(job.id);
        startWatch(job.id);
    }
}

void JobsPage::startWatch(std::int64_t id)
{
    stopWatch();
    auto client = session_.client();
    if (!client)
        return;
    auto cancel = std::make_shared<api::CallCancel>();
    watch_ = cancel;
    QPointer<JobsPage> self(this);
    runInBackground(
        this,
        [client, id, cancel, self] {
            return client->jobs().watchJob(
                id,
                [self, id](const api::JobWatchEvent& event) {
                    if (!self)
                        return false;
                    QMetaObject::invokeMethod(
                        self.data(),
                        [self, id, event] {
                            if (!self || self->shown_ != id)
                                return;
                            switch (event.kind) {
                            case api::JobWatchEvent::Kind::Job:
                                self->model_->setRows([&] {
                                    auto rows = self->model_->rows();
                                    for (auto& row : rows)
                                        if (row.id == event.job.id)
                                            row = event.job;
                                    return rows;
                                }());
                                self->table_->resizeColumnsToContents();
                                self->select(id);
                                break;
                            case api::JobWatchEvent::Kind::Metrics:
                                self->chart_->addLine(event.line);
                                break;
                            case api::JobWatchEvent::Kind::Log:
                                self->log_->appendPlainText(QString::fromStdString(event.line));
                                break;
                            case api::JobWatchEvent::Kind::Checkpoint:
                                self->checkpoints_->add(event.checkpoint);
                                self->log_->appendPlainText(
                                    tr("checkpoint of step %1 recorded (signed by %2)")
                                        .arg(event.checkpoint.step)
                                        .arg(QString::fromStdString(event.checkpoint.worker)));
                                break;
                            }
                        },
                        Qt::QueuedConnection);
                    return true;
                },
                cancel.get());
        },
        [this, cancel](const Result<api::JobSummary>& ended) {
            if (!ended && !cancel->cancelled()) {
                if (ended.error().code() == ErrorCode::Unauthenticated)
                    session_.lose(sentence(ended.error()));
                else
                    showError(sentence(ended.error()));
            }
        });
}

void JobsPage::stopWatch()
{
    if (watch_)
        watch_->cancel();
    watch_.reset();
}

void JobsPage::decide(const QString& what)
{
    const api::JobSummary* job = nullptr;
    for (const auto& row : model_->rows())
        if (row.id == shown_)
            job = &row;
    auto client = session_.client();
    if (job == nullptr || !client)
        return;
    const std::int64_t id = job->id;
    // Exactly the hash shown: an approval of what the approver saw, never of what the spec
    // became meanwhile (the server refuses a stale one with FAILED_PRECONDITION).
    const std::string sha = job->specSha256;
    const std::string reason = reason_->text().toStdString();
    error_->clear();
    runInBackground(
        this,
        [client, id, sha, reason, what] {
            if (what == "approve")
                return client->jobs().approveJob(id, sha);
            if (what == "reject")
                return client->jobs().rejectJob(id, reason);
            return client->jobs().cancelJob(id, reason);
        },
        [this](const Result<api::JobSummary>& decided) {
            if (!decided) {
                showError(sentence(decided.error()));
                return;
            }
            reason_->clear();
            reload();
        });
}

void JobsPage::showError(const QString& message)
{
    error_->setText(message);
}

}  // namespace sealtrain::gui
