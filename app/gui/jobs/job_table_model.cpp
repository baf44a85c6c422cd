// The jobs table (job_table_model.h).
#include "job_table_model.h"

#include "common/colors.h"

#include <QBrush>
#include <QColor>

namespace sealtrain::gui {

JobTableModel::JobTableModel(QObject* parent)
    : RowModel({tr("Job"), tr("Name"), tr("Project"), tr("State"), tr("Submitter"), tr("Approver"),
                tr("Worker"), tr("Updated")},
               parent)
{
}

QVariant JobTableModel::cell(const api::JobSummary& job, int column, int role) const
{
    if (role == Qt::ForegroundRole && column == State) {
        if (job.state == "failed" || job.state == "rejected")
            return QBrush(toneColor(Tone::Bad));
        if (job.state == "succeeded")
            return QBrush(toneColor(Tone::Good));
        return {};
    }
    if (role == Qt::TextAlignmentRole && column == Id)
        return int(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole)
        return {};
    switch (column) {
    case Id: return QVariant::fromValue<qlonglong>(job.id);
    case Name: return QString::fromStdString(job.name);
    case Project: return QString::fromStdString(job.project);
    case State: return QString::fromStdString(job.state);
    case Submitter: return QString::fromStdString(job.submitter);
    case Approver: return QString::fromStdString(job.approver);
    case Worker: return QString::fromStdString(job.worker);
    case Updated: return utcText(job.updatedUnix);
    default: return {};
    }
}

}  // namespace sealtrain::gui
