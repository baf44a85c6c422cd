// Shared formatting of the table models (row_model.h).
#include "row_model.h"

#include <QDateTime>
#include <QHeaderView>

namespace sealtrain::gui {

QString utcText(std::int64_t unixSeconds)
{
    if (unixSeconds == 0)
        return {};
    return QDateTime::fromSecsSinceEpoch(unixSeconds, Qt::UTC).toString("yyyy-MM-dd HH:mm:ss")
           + " UTC";
}

void setUpTable(QTableView& table, QAbstractItemModel& model, const char* objectName,
                const QString& accessibleName)
{
    table.setObjectName(objectName);
    table.setAccessibleName(accessibleName);
    table.setModel(&model);
    table.setSelectionBehavior(QAbstractItemView::SelectRows);
    table.setSelectionMode(QAbstractItemView::SingleSelection);
    table.horizontalHeader()->setStretchLastSection(true);
    table.verticalHeader()->hide();
}

QLineEdit* namedField(QWidget* parent, const char* objectName, const QString& accessibleName,
                      const QString& placeholder)
{
    auto* edit = new QLineEdit(parent);
    edit->setObjectName(objectName);
    edit->setAccessibleName(accessibleName);
    edit->setPlaceholderText(placeholder);
    return edit;
}

QLineEdit* namedSecretField(QWidget* parent, const char* objectName, const QString& accessibleName)
{
    QLineEdit* edit = namedField(parent, objectName, accessibleName);
    edit->setEchoMode(QLineEdit::Password);
    return edit;
}

}  // namespace sealtrain::gui
