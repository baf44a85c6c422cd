// The models table (model_table_model.h).
#include "model_table_model.h"

#include <QStringList>

namespace sealtrain::gui {

ModelTableModel::ModelTableModel(QObject* parent)
    : RowModel({tr("Model"), tr("Project"), tr("Versions"), tr("Pending"), tr("Aliases")}, parent)
{
}

QVariant ModelTableModel::cell(const api::ModelSummaryView& model, int column, int role) const
{
    if (role != Qt::DisplayRole && role != Qt::UserRole)
        return {};
    switch (column) {
    case Name: return QString::fromStdString(model.name);
    case Project: return QString::fromStdString(model.project);
    case Versions: return QVariant::fromValue<qlonglong>(model.versions);
    case Pending: return QVariant::fromValue<qlonglong>(model.pendingPromotions);
    case Aliases: {
        QStringList aliases;
        for (const auto& [alias, version] : model.aliases)
            aliases.append(QString("%1 → %2").arg(QString::fromStdString(alias)).arg(version));
        return aliases.join(", ");
    }
    default: return {};
    }
}

}  // namespace sealtrain::gui
