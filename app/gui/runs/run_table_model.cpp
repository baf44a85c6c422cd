// The runs table (run_table_model.h).
#include "run_table_model.h"

#include <QStringList>

namespace sealtrain::gui {
namespace {

QVariant lossCell(const std::optional<double>& loss, int role)
{
    if (!loss)
        return role == Qt::DisplayRole ? QVariant(QString::fromUtf8("–")) : QVariant();
    return role == Qt::DisplayRole ? QVariant(QString::number(*loss, 'f', 4)) : QVariant(*loss);
}

}  // namespace

RunTableModel::RunTableModel(QObject* parent)
    : RowModel({tr("Run"), tr("Name"), tr("State"), tr("Steps"), tr("Loss"), tr("Val. loss"),
                tr("Restarts"), tr("Workers")},
               parent)
{
}

QVariant RunTableModel::cell(const api::RunView& run, int column, int role) const
{
    if (role != Qt::DisplayRole && role != Qt::UserRole)
        return {};
    switch (column) {
    case Id: return QVariant::fromValue<qlonglong>(run.job.id);
    case Name: return QString::fromStdString(run.job.name);
    case State: return QString::fromStdString(run.job.state);
    case Steps: return QString("%1 / %2").arg(run.summary.stepsDone).arg(run.summary.stepsPlanned);
    case Loss: return lossCell(run.summary.lastLoss, role);
    case ValidationLoss: return lossCell(run.summary.lastValidationLoss, role);
    case Restarts: return QVariant::fromValue<qlonglong>(run.job.restarts);
    case Workers: return runWorkers(run);
    default: return {};
    }
}

QString runWorkers(const api::RunView& run)
{
    QStringList names;
    for (const api::RunAttemptView& attempt : run.attempts) {
        const QString name = attempt.worker.empty() ? QObject::tr("control plane")
                                                    : QString::fromStdString(attempt.worker);
        if (!names.contains(name))
            names.append(name);
    }
    return names.join(", ");
}

}  // namespace sealtrain::gui
