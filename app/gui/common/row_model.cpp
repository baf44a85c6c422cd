// Shared formatting of the table models (row_model.h).
#include "row_model.h"

#include <QAction>
#include <QClipboard>
#include <QCoreApplication>
#include <QDateTime>
#include <QGuiApplication>
#include <QHeaderView>
#include <QLocale>
#include <QRegularExpression>

namespace sealtrain::gui {

QString utcText(std::int64_t unixSeconds)
{
    if (unixSeconds == 0)
        return {};
    return QDateTime::fromSecsSinceEpoch(unixSeconds, Qt::UTC).toString("yyyy-MM-dd HH:mm:ss")
           + " UTC";
}

QString elideDigests(const QString& text)
{
    static const QRegularExpression digest(
        "\\b([0-9a-fA-F]{12})[0-9a-fA-F]{20,}([0-9a-fA-F]{8})\\b");
    QString elided = text;
    elided.replace(digest, QStringLiteral("\\1…\\2"));
    return elided;
}

bool cellLess(const QVariant& a, const QVariant& b)
{
    const QLocale locale;
    bool aNumber = false;
    bool bNumber = false;
    const double x = locale.toDouble(a.toString(), &aNumber);
    const double y = locale.toDouble(b.toString(), &bNumber);
    if (aNumber && bNumber)
        return x < y;
    if (aNumber != bNumber)
        return aNumber;  // numbers before words (an empty cell is a word)
    return QString::localeAwareCompare(a.toString(), b.toString()) < 0;
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
    table.horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder);
    table.setSortingEnabled(true);
    auto* copy = new QAction(QCoreApplication::translate("Table", "&Copy"), &table);
    copy->setObjectName(QStringLiteral("%1Copy").arg(QString::fromLatin1(objectName)));
    copy->setShortcut(QKeySequence::Copy);
    copy->setShortcutContext(Qt::WidgetShortcut);
    QObject::connect(copy, &QAction::triggered, &table, [&table] {
        const QModelIndex current = table.currentIndex();
        if (!current.isValid())
            return;
        QVariant whole = current.data(kFullTextRole);
        if (!whole.isValid())
            whole = current.data(Qt::DisplayRole);
        QGuiApplication::clipboard()->setText(whole.toString());
    });
    table.addAction(copy);
    table.setContextMenuPolicy(Qt::ActionsContextMenu);
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
