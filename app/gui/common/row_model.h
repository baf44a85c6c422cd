// A table model over plain rows (the client library's summaries), so that every screen's model
// is tested without a server (issue #29): a subclass names its columns and says what a cell of
// a row shows. Rows are replaced whole (setRows) or appended (appendRows, for paging).
// Every table shows long digests elided in the middle with the whole value in the tooltip, sorts
// by a clicked column (issue #51) and copies a cell's whole value (setUpTable).
#pragma once

#include <QAbstractTableModel>
#include <QLineEdit>
#include <QStringList>
#include <QTableView>

#include <algorithm>
#include <numeric>
#include <utility>
#include <vector>

namespace sealtrain::gui {

// A cell's whole text, digests not elided: what Copy puts on the clipboard.
inline constexpr int kFullTextRole = Qt::UserRole + 100;

// `text` with each run of 40 or more hex digits (a SHA-256, a key id) shown as its first 12 and
// last 8 digits around an ellipsis.
[[nodiscard]] QString elideDigests(const QString& text);
// Whether cell `a` sorts before cell `b`: as numbers when both read as numbers in the user's
// locale ("1,234"), else as text in the locale's order.
[[nodiscard]] bool cellLess(const QVariant& a, const QVariant& b);

template <typename Row>
class RowModel : public QAbstractTableModel {
public:
    explicit RowModel(QStringList headers, QObject* parent = nullptr)
        : QAbstractTableModel(parent)
        , headers_(std::move(headers))
    {
    }

    void setRows(std::vector<Row> rows)
    {
        beginResetModel();
        rows_ = std::move(rows);
        if (sortColumn_ >= 0)
            rows_ = sorted(std::move(rows_), nullptr);
        endResetModel();
    }

    void appendRows(std::vector<Row> more)
    {
        if (more.empty())
            return;
        const int first = static_cast<int>(rows_.size());
        beginInsertRows({}, first, first + static_cast<int>(more.size()) - 1);
        for (Row& row : more)
            rows_.push_back(std::move(row));
        endInsertRows();
    }

    [[nodiscard]] const std::vector<Row>& rows() const noexcept { return rows_; }
    [[nodiscard]] const Row* rowAt(int row) const
    {
        return row >= 0 && row < static_cast<int>(rows_.size())
                   ? &rows_[static_cast<std::size_t>(row)]
                   : nullptr;
    }

    [[nodiscard]] int rowCount(const QModelIndex& parent = {}) const override
    {
        return parent.isValid() ? 0 : static_cast<int>(rows_.size());
    }
    [[nodiscard]] int columnCount(const QModelIndex& parent = {}) const override
    {
        return parent.isValid() ? 0 : static_cast<int>(headers_.size());
    }
    [[nodiscard]] QVariant data(const QModelIndex& index, int role) const override
    {
        const Row* row = rowAt(index.row());
        if (row == nullptr)
            return {};
        if (role == kFullTextRole)
            return cell(*row, index.column(), Qt::DisplayRole);
        if (role != Qt::DisplayRole && role != Qt::ToolTipRole)
            return cell(*row, index.column(), role);
        QVariant shown = cell(*row, index.column(), Qt::DisplayRole);
        const QString elided =
            shown.typeId() == QMetaType::QString ? elideDigests(shown.toString()) : QString();
        if (role == Qt::DisplayRole)
            return shown.typeId() == QMetaType::QString ? QVariant(elided) : shown;
        QVariant own = cell(*row, index.column(), Qt::ToolTipRole);
        if (own.isValid() || shown.typeId() != QMetaType::QString || elided == shown.toString())
            return own;
        return shown;  // the whole value behind the ellipsis
    }

    // Sorts by `column` (what the header's click asks); kept through setRows. Appended pages
    // stay where they arrive.
    void sort(int column, Qt::SortOrder order) override
    {
        if (column < 0 || column >= columnCount())
            return;
        sortColumn_ = column;
        sortOrder_ = order;
        emit layoutAboutToBeChanged({}, QAbstractItemModel::VerticalSortHint);
        std::vector<int> movedTo;
        rows_ = sorted(std::move(rows_), &movedTo);
        const QModelIndexList before = persistentIndexList();
        QModelIndexList after;
        for (const QModelIndex& index : before)
            after << this->index(movedTo[static_cast<std::size_t>(index.row())], index.column());
        changePersistentIndexList(before, after);
        emit layoutChanged({}, QAbstractItemModel::VerticalSortHint);
    }
    [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation,
                                      int role) const override
    {
        if (orientation == Qt::Horizontal && role == Qt::DisplayRole && section >= 0
            && section < headers_.size())
            return headers_.at(section);
        return QAbstractTableModel::headerData(section, orientation, role);
    }

protected:
    // What `column` of `row` shows for `role` (Qt::DisplayRole at least).
    [[nodiscard]] virtual QVariant cell(const Row& row, int column, int role) const = 0;

private:
    // `rows` in the order asked; `movedTo`, when given, gets each old row's new place.
    std::vector<Row> sorted(std::vector<Row> rows, std::vector<int>* movedTo) const
    {
        std::vector<int> order(rows.size());
        std::iota(order.begin(), order.end(), 0);
        std::vector<QVariant> keys;
        keys.reserve(rows.size());
        for (const Row& row : rows)
            keys.push_back(cell(row, sortColumn_, Qt::DisplayRole));
        std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
            const auto& ka = keys[static_cast<std::size_t>(a)];
            const auto& kb = keys[static_cast<std::size_t>(b)];
            return sortOrder_ == Qt::AscendingOrder ? cellLess(ka, kb) : cellLess(kb, ka);
        });
        std::vector<Row> out;
        out.reserve(rows.size());
        if (movedTo != nullptr)
            movedTo->assign(rows.size(), 0);
        for (std::size_t place = 0; place < order.size(); ++place) {
            const auto from = static_cast<std::size_t>(order[place]);
            out.push_back(std::move(rows[from]));
            if (movedTo != nullptr)
                (*movedTo)[from] = static_cast<int>(place);
        }
        return out;
    }

    QStringList headers_;
    std::vector<Row> rows_;
    int sortColumn_ = -1;  // -1: the order the rows came in
    Qt::SortOrder sortOrder_ = Qt::AscendingOrder;
};

// "2026-12-03 09:00:00 UTC" for Unix seconds (empty for 0).
[[nodiscard]] QString utcText(std::int64_t unixSeconds);
// "12 s", "5 min", "3 h", "2 days": how long `seconds` is, for people.
[[nodiscard]] QString durationText(std::int64_t seconds);

// A screen's table as every screen has it: named (tests find it), with an accessible name, whole
// rows selected one at a time, the last column stretched, no row numbers; sorted by a click on a
// column's header (none until then: the rows' own order); Ctrl+C and the context menu's "Copy"
// put the current cell's whole value on the clipboard (a digest unelided).
void setUpTable(QTableView& table, QAbstractItemModel& model, const char* objectName,
                const QString& accessibleName);

// `table` under a filter field named "<table's name>Filter" (issue #51), in a widget to lay out
// in its place: the rows shown are those where every word typed is part of some cell's whole
// value, in any case (so a whole digest finds its row); Ctrl+F in the table goes to the field,
// Esc in the field empties it. Rows are hidden, not removed, so a screen's model rows keep their
// places; the filter holds through reloads, appended pages and sorting.
[[nodiscard]] QWidget* withFilter(QTableView& table);
// Whether `row` of `model` holds every word of `filter` (what withFilter shows).
[[nodiscard]] bool rowMatches(const QAbstractItemModel& model, int row, const QString& filter);

// A text field as every form has it: named (tests find it), with an accessible name and a hint.
[[nodiscard]] QLineEdit* namedField(QWidget* parent, const char* objectName,
                                    const QString& accessibleName, const QString& placeholder = {});
// namedField for a secret (a password, a passphrase): what is typed is not shown.
[[nodiscard]] QLineEdit* namedSecretField(QWidget* parent, const char* objectName,
                                          const QString& accessibleName);

}  // namespace sealtrain::gui
