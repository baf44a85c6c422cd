// Shared formatting of the table models (row_model.h).
#include "row_model.h"

#include <QAction>
#include <QClipboard>
#include <QCoreApplication>
#include <QDateTime>
#include <QGuiApplication>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLocale>
#include <QRegularExpression>
#include <QVBoxLayout>

namespace sealtrain::gui {

QString utcText(std::int64_t unixSeconds)
{
    if (unixSeconds == 0)
        return {};
    return QDateTime::fromSecsSinceEpoch(unixSeconds, Qt::UTC).toString("yyyy-MM-dd HH:mm:ss")
           + " UTC";
}

QString durationText(std::int64_t seconds)
{
    constexpr std::int64_t kMinute = 60;
    constexpr std::int64_t kHour = 60 * kMinute;
    constexpr std::int64_t kDay = 24 * kHour;
    seconds = std::max<std::int64_t>(0, seconds);
    if (seconds >= 2 * kDay)
        return QCoreApplication::translate("Table", "%1 days").arg(seconds / kDay);
    if (seconds >= 2 * kHour)
        return QCoreApplication::translate("Table", "%1 h").arg(seconds / kHour);
    if (seconds >= 2 * kMinute)
        return QCoreApplication::translate("Table", "%1 min").arg(seconds / kMinute);
    return QCoreApplication::translate("Table", "%1 s").arg(seconds);
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

bool rowMatches(const QAbstractItemModel& model, int row, const QString& filter)
{
    const QStringList words = filter.split(QChar(' '), Qt::SkipEmptyParts);
    if (words.isEmpty())
        return true;
    QString cells;
    for (int column = 0; column < model.columnCount(); ++column) {
        const QModelIndex index = model.index(row, column);
        QVariant whole = index.data(kFullTextRole);
        if (!whole.isValid())
            whole = index.data(Qt::DisplayRole);
        cells += whole.toString() + QChar('\n');
    }
    return std::all_of(words.begin(), words.end(), [&cells](const QString& word) {
        return cells.contains(word, Qt::CaseInsensitive);
    });
}

namespace {

// Hides the rows of `table` the filter's text does not match.
void applyFilter(QTableView& table, const QString& filter)
{
    const QAbstractItemModel& model = *table.model();
    for (int row = 0; row < model.rowCount(); ++row)
        table.setRowHidden(row, !rowMatches(model, row, filter));
    if (table.currentIndex().isValid() && table.isRowHidden(table.currentIndex().row()))
        table.clearSelection();
}

// Esc in the filter field empties it (and shows every row again).
class FilterField final : public QLineEdit {
public:
    using QLineEdit::QLineEdit;

protected:
    void keyPressEvent(QKeyEvent* event) override
    {
        if (event->key() == Qt::Key_Escape && !text().isEmpty()) {
            clear();
            return;
        }
        QLineEdit::keyPressEvent(event);
    }
};

}  // namespace

QWidget* withFilter(QTableView& table)
{
    auto* box = new QWidget(table.parentWidget());
    auto* field = new FilterField(box);
    field->setObjectName(table.objectName() + QStringLiteral("Filter"));
    field->setAccessibleName(
        QCoreApplication::translate("Table", "Filter %1").arg(table.accessibleName()));
    field->setPlaceholderText(QCoreApplication::translate("Table", "Filter (Ctrl+F)"));
    field->setClearButtonEnabled(true);
    auto* layout = new QVBoxLayout(box);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(field);
    layout->addWidget(&table, 1);
    const auto reapply = [&table, field] { applyFilter(table, field->text()); };
    QObject::connect(field, &QLineEdit::textChanged, &table, reapply);
    QAbstractItemModel* model = table.model();
    QObject::connect(model, &QAbstractItemModel::modelReset, &table, reapply);
    QObject::connect(model, &QAbstractItemModel::rowsInserted, &table, reapply);
    QObject::connect(model, &QAbstractItemModel::layoutChanged, &table, reapply);
    auto* find = new QAction(QCoreApplication::translate("Table", "&Filter"), &table);
    find->setShortcut(QKeySequence::Find);
    find->setShortcutContext(Qt::WidgetShortcut);
    QObject::connect(find, &QAction::triggered, field, [field] {
        field->setFocus(Qt::ShortcutFocusReason);
        field->selectAll();
    });
    table.addAction(find);
    return box;
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
