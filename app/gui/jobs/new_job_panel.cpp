// The "New job" tab (new_job_panel.h).
#include "new_job_panel.h"

#include "common/colors.h"

#include "spec_check.h"

#include "../common/background.h"
#include "../session/session.h"

#include <QFile>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTextDocument>
#include <QTimer>
#include <QVBoxLayout>

namespace sealtrain::gui {
namespace {

constexpr int kTypingPauseMs = 250;
constexpr qint64 kLargestSpecFile = qint64{1} << 20U;

}  // namespace

NewJobPanel::NewJobPanel(Session& session, QWidget* parent)
    : QWidget(parent)
    , session_(session)
    , check_(std::make_unique<SpecCheck>())
    , editor_(new QPlainTextEdit(this))
    , status_(new QLabel(this))
    , problems_(new QListWidget(this))
    , submit_(new QPushButton(tr("&Submit job"), this))
    , timer_(new QTimer(this))
{
    setObjectName("newJobPanel");
    editor_->setObjectName("newJobSpec");
    editor_->setAccessibleName(tr("A new job's spec, YAML or JSON"));
    editor_->setPlaceholderText(tr("spec_version: 1\nname: …\nproject: …\ndataset: …"));
    editor_->setTabChangesFocus(true);
    status_->setObjectName("specCheckStatus");
    status_->setWordWrap(true);
    problems_->setObjectName("specProblems");
    problems_->setAccessibleName(tr("What the job-spec schema finds wrong"));
    problems_->setWordWrap(true);
    problems_->setMaximumHeight(120);
    problems_->hide();
    auto* open = new QPushButton(tr("&Open a spec file…"), this);
    open->setObjectName("openSpecButton");
    submit_->setObjectName("submitButton");
    submit_->setEnabled(false);
    timer_->setSingleShot(true);
    timer_->setInterval(kTypingPauseMs);

    auto* buttons = new QHBoxLayout;
    buttons->addWidget(status_, 1);
    buttons->addWidget(open);
    buttons->addWidget(submit_);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(editor_, 1);
    layout->addWidget(problems_);
    layout->addLayout(buttons);

    connect(editor_, &QPlainTextEdit::textChanged, this, [this] {
        // Until the check runs, Submit checks first (a spec pasted and submitted at once).
        submit_->setEnabled(!busy_ && !editor_->document()->isEmpty());
        timer_->start();
    });
    connect(timer_, &QTimer::timeout, this, &NewJobPanel::checkNow);
    connect(open, &QPushButton::clicked, this, &NewJobPanel::open);
    connect(submit_, &QPushButton::clicked, this, &NewJobPanel::submit);
    checkNow();
}

NewJobPanel::~NewJobPanel() = default;

bool NewJobPanel::checkNow()
{
    timer_->stop();
    problems_->clear();
    const QString text = editor_->toPlainText();
    if (text.trimmed().isEmpty()) {
        status_->setText(tr("Type a spec (YAML or JSON) or open one; docs/formats/job-spec.md "
                            "describes every field."));
        status_->setStyleSheet({});
        problems_->hide();
        submit_->setEnabled(false);
        return false;
    }
    const QList<SpecProblem> problems = check_->check(text);
    for (const SpecProblem& problem : problems)
        problems_->addItem(problemLine(problem));
    problems_->setVisible(!problems.isEmpty());
    if (problems.isEmpty()) {
        status_->setText(tr("The job-spec schema accepts this spec; the control plane's policy "
                            "vets it when you submit."));
        status_->setStyleSheet(toneStyle(Tone::Good));
    } else {
        status_->setText(problems.size() == 1
                             ? tr("The job-spec schema finds one problem; fix it to submit.")
                             : tr("The job-spec schema finds %1 problems; fix them to submit.")
                                   .arg(problems.size()));
        status_->setStyleSheet(toneStyle(Tone::Bad));
    }
    submit_->setEnabled(problems.isEmpty() && !busy_);
    return problems.isEmpty();
}

void NewJobPanel::open()
{
    const QString path = QFileDialog::getOpenFileName(this, tr("Open a job spec"), {},
                                                      tr("Job specs (*.yaml *.yml *.json)"));
    if (path.isEmpty())
        return;
    QFile file(path);
    if (file.size() > kLargestSpecFile || !file.open(QIODevice::ReadOnly)) {
        emit failed(tr("Cannot read '%1' as a job spec; choose a readable spec file under 1 MiB.")
                        .arg(path));
        return;
    }
    editor_->setPlainText(QString::fromUtf8(file.readAll()));
    checkNow();
}

void NewJobPanel::submit()
{
    if (!checkNow())
        return;
    auto client = session_.client();
    if (!client)
        return;
    busy_ = true;
    submit_->setEnabled(false);
    runInBackground(
        this,
        [client, text = editor_->toPlainText().toStdString()] {
            return client->jobs().submitJob(text);
        },
        [this](const Result<api::JobSummary>& job) {
            busy_ = false;
            if (!job) {
                checkNow();
                emit failed(sentence(job.error()));
                return;
            }
            editor_->clear();
            checkNow();
            emit submitted(job->id);
        });
}

}  // namespace sealtrain::gui
