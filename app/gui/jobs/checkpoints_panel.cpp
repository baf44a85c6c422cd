// The selected job's checkpoints (checkpoints_panel.h).
#include "checkpoints_panel.h"

#include "../common/background.h"
#include "../session/session.h"

#include <QDir>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>

#include <filesystem>

namespace sealtrain::gui {

CheckpointTableModel::CheckpointTableModel(QObject* parent)
    : RowModel({tr("Step"), tr("Attempt"), tr("Signed by"), tr("Recorded"), tr("Sealed SHA-256")},
               parent)
{
}

QVariant CheckpointTableModel::cell(const api::JobCheckpointView& checkpoint, int column,
                                    int role) const
{
    if (role == Qt::TextAlignmentRole && (column == Step || column == Attempt))
        return int(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole)
        return {};
    switch (column) {
    case Step: return QVariant::fromValue<qlonglong>(checkpoint.step);
    case Attempt: return QVariant::fromValue<qlonglong>(checkpoint.attempt);
    case Worker: return QString::fromStdString(checkpoint.worker);
    case Recorded: return utcText(checkpoint.recordedUnix);
    case SealedSha256: return QString::fromStdString(checkpoint.sealedSha256);
    default: return {};
    }
}

CheckpointsPanel::CheckpointsPanel(Session& session, QWidget* parent)
    : QWidget(parent)
    , session_(session)
    , model_(new CheckpointTableModel(this))
    , table_(new QTableView(this))
    , folder_(namedField(this, "checkpointFolder", tr("Folder to download the checkpoint into"),
                         tr("a new or empty folder")))
    , status_(new QLabel(this))
{
    setObjectName("checkpointsPanel");
    setUpTable(*table_, *model_, "checkpointsTable", tr("The job's checkpoints"));
    auto* browse = new QPushButton(tr("Choose a &folder…"), this);
    browse->setObjectName("checkpointBrowse");
    auto* download = new QPushButton(tr("&Download the selected checkpoint"), this);
    download->setObjectName("checkpointDownload");
    status_->setObjectName("checkpointStatus");
    status_->setWordWrap(true);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* row = new QHBoxLayout;
    row->addWidget(folder_, 1);
    row->addWidget(browse);
    row->addWidget(download);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(withFilter(*table_), 1);
    layout->addLayout(row);
    layout->addWidget(status_);
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString chosen = QFileDialog::getExistingDirectory(this, tr("Download into"));
        if (!chosen.isEmpty())
            folder_->setText(chosen);
    });
    connect(download, &QPushButton::clicked, this, &CheckpointsPanel::download);
}

void CheckpointsPanel::showJob(std::int64_t id)
{
    job_ = id;
    model_->setRows({});
    status_->clear();
}

void CheckpointsPanel::add(const api::JobCheckpointView& checkpoint)
{
    model_->appendRows({checkpoint});
    table_->resizeColumnsToContents();
}

void CheckpointsPanel::download()
{
    const api::JobCheckpointView* chosen = model_->rowAt(table_->currentIndex().row());
    const QString folder = folder_->text().trimmed();
    if (chosen == nullptr || folder.isEmpty()) {
        status_->setText(tr("Choose a checkpoint in the table and a folder to put it in."));
        return;
    }
    const QDir dir(folder);
    if (dir.exists() && !dir.isEmpty()) {
        status_->setText(tr("'%1' is not empty; choose a new or empty folder.").arg(folder));
        return;
    }
    if (!QDir().mkpath(folder)) {
        status_->setText(tr("Cannot create '%1'; choose a folder you may write to.").arg(folder));
        return;
    }
    auto client = session_.client();
    if (!client)
        return;
    status_->setText(tr("Downloading step %1…").arg(chosen->step));
    runInBackground(
        this,
        [client, job = job_, step = chosen->step, path = folder.toStdString()] {
            return client->jobs().downloadCheckpoint(job, step, path);
        },
        [this, step = chosen->step](const Result<std::vector<std::filesystem::path>>& files) {
            if (!files) {
                status_->setText(sentence(files.error()));
                return;
            }
            QStringList names;
            for (const std::filesystem::path& file : *files)
                names << QString::fromStdString(file.filename().string());
            status_->setText(
                tr("Step %1 downloaded: %2. It stays sealed under the job's key; check its signed "
                   "lineage with 'sealtrainctl checkpoint verify FILE.sealed --key "
                   "WORKER.pub.pem'.")
                    .arg(step)
                    .arg(names.join(", ")));
        });
}

}  // namespace sealtrain::gui
