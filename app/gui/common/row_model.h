// A table model over plain rows (the client library's summaries), so that every screen's model
// is tested without a server (issue #29): a subclass names its columns and says what a cell of
// a row shows. Rows are replaced whole (setRows) or appended (appendRows, for paging).
#pragma once

#include <QAbstractTableModel>
#include <QLineEdit>
#include <QStringList>
#include <QTableView>

#include <utility>
#include <vector>

namespace sealtrain::gui {

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
        return cell(*row, index.column(), role);
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
    QStringList headers_;
    std::vector<Row> rows_;
};

// "2026-12-03 09:00:00 UTC" for Unix seconds (empty for 0).
[[nodiscard]] QString utcText(std::int64_t unixSeconds);

// A screen's table as every screen has it: named (tests find it), with an accessible name, whole
// rows selected one at a time, the last column stretched, no row numbers.
void setUpTable(QTableView& table, QAbstractItemModel& model, const char* objectName,
                const QString& accessibleName);

// A text field as every form has it: named (tests find it), with an accessible name and a hint.
[[nodiscard]] QLineEdit* namedField(QWidget* parent, const char* objectName,
                                    const QString& accessibleName, const QString& placeholder = {});
// namedField for a secret (a password, a passphrase): what is typed is not shown.
[[nodiscard]] QLineEdit* namedSecretField(QWidget* parent, const char* objectName,
                                          const QString& accessibleName);

}  // namespace sealtrain::gui
