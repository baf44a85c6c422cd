// The command palette (command_palette.h).
#include "command_palette.h"

#include <QAbstractButton>
#include <QAction>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPointer>
#include <QTabWidget>
#include <QVBoxLayout>

namespace sealtrain::gui {
namespace {

QString withoutMnemonics(QString text)
{
    text.replace("&&", QChar(0x1));
    text.remove('&');
    text.replace(QChar(0x1), '&');
    return text;
}

// The tab widget that holds `child` as one of its tabs, if any.
QTabWidget* tabsHolding(QWidget* child)
{
    for (QWidget* up = child->parentWidget(); up != nullptr; up = up->parentWidget())
        if (auto* tabs = qobject_cast<QTabWidget*>(up))
            return tabs->indexOf(child) >= 0 ? tabs : nullptr;
    return nullptr;
}

// Shown on `page` as far as its screens and tabs go: nothing between it and the page is hidden
// but a shown, enabled tab that is not in front.
bool reachable(QWidget* widget, QWidget* page)
{
    for (QWidget* w = widget; w != nullptr && w != page; w = w->parentWidget()) {
        if (!w->isHidden())
            continue;
        const QTabWidget* tabs = tabsHolding(w);
        if (tabs == nullptr || !tabs->isTabVisible(tabs->indexOf(w))
            || !tabs->isTabEnabled(tabs->indexOf(w)))
            return false;
    }
    return true;
}

}  // namespace

bool paletteMatches(const QString& text, const QString& query)
{
    const auto words = query.split(' ', Qt::SkipEmptyParts);
    return std::all_of(words.begin(), words.end(), [&text](const QString& word) {
        return text.contains(word, Qt::CaseInsensitive);
    });
}

PaletteEntry actionEntry(QAction* action)
{
    return {withoutMnemonics(action->text()), action->shortcut().toString(QKeySequence::NativeText),
            [action = QPointer<QAction>(action)] {
                if (action && action->isEnabled())
                    action->trigger();
            }};
}

QList<PaletteEntry> pageEntries(const QString& title, QWidget* page,
                                const std::function<void()>& show)
{
    QList<PaletteEntry> entries;
    for (QAbstractButton* button : page->findChildren<QAbstractButton*>()) {
        const bool pressable = !button->text().isEmpty() && button->isEnabled()
                               && !button->isCheckable() && reachable(button, page);
        if (!pressable)
            continue;
        entries.push_back(
            {title + QStringLiteral(" › ") + withoutMnemonics(button->text()),
             button->shortcut().toString(QKeySequence::NativeText),
             [show, page = QPointer<QWidget>(page), button = QPointer<QAbstractButton>(button)] {
                 if (!page || !button)
                     return;
                 show();
                 for (QWidget* w = button; w != nullptr && w != page; w = w->parentWidget())
                     if (QTabWidget* tabs = tabsHolding(w))
                         tabs->setCurrentWidget(w);
                 if (button->isVisible() && button->isEnabled())
                     button->click();
             }});
    }
    return entries;
}

CommandPalette::CommandPalette(QList<PaletteEntry> entries, QWidget* parent)
    : QDialog(parent)
    , entries_(std::move(entries))
    , query_(new QLineEdit(this))
    , list_(new QListWidget(this))
{
    setObjectName("commandPalette");
    setWindowTitle(tr("Command palette"));
    query_->setObjectName("paletteQuery");
    query_->setPlaceholderText(tr("Type part of an action's name"));
    query_->setAccessibleName(tr("Action name"));
    query_->setClearButtonEnabled(true);
    list_->setObjectName("paletteList");
    list_->setAccessibleName(tr("Actions"));
    list_->setFocusPolicy(Qt::NoFocus);  // the keys stay in the query: arrows move, Enter runs
    auto* hint = new QLabel(tr("↑ ↓ choose · Enter runs · Esc closes"), this);
    hint->setObjectName("paletteHint");
    hint->setEnabled(false);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(query_);
    layout->addWidget(list_, 1);
    layout->addWidget(hint);
    resize(560, 420);
    query_->installEventFilter(this);
    connect(query_, &QLineEdit::textChanged, this, &CommandPalette::filter);
    connect(query_, &QLineEdit::returnPressed, this, &CommandPalette::runCurrent);
    connect(list_, &QListWidget::itemActivated, this, &CommandPalette::runCurrent);
    filter({});
}

QStringList CommandPalette::listed() const
{
    QStringList texts;
    for (int row = 0; row < list_->count(); ++row)
        texts << list_->item(row)->data(Qt::UserRole + 1).toString();
    return texts;
}

bool CommandPalette::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == query_ && event->type() == QEvent::KeyPress) {
        const int key = static_cast<QKeyEvent*>(event)->key();
        const int step = key == Qt::Key_Down ? 1 : key == Qt::Key_Up ? -1 : 0;
        if (step != 0 && list_->count() > 0) {
            const int row = std::clamp(list_->currentRow() + step, 0, list_->count() - 1);
            list_->setCurrentRow(row);
            return true;
        }
    }
    return QDialog::eventFilter(watched, event);
}

void CommandPalette::filter(const QString& query)
{
    list_->clear();
    for (int i = 0; i < entries_.size(); ++i) {
        const PaletteEntry& entry = entries_.at(i);
        if (!paletteMatches(entry.text, query))
            continue;
        auto* item = new QListWidgetItem(
            entry.shortcut.isEmpty() ? entry.text : entry.text + "    " + entry.shortcut, list_);
        item->setData(Qt::UserRole, i);
        item->setData(Qt::UserRole + 1, entry.text);
    }
    if (list_->count() > 0)
        list_->setCurrentRow(0);
}

void CommandPalette::runCurrent()
{
    const QListWidgetItem* item = list_->currentItem();
    if (item == nullptr)
        return;
    const auto run = entries_.at(item->data(Qt::UserRole).toInt()).run;
    accept();  // closed first: an action that opens a dialog opens it over the window
    run();
}

}  // namespace sealtrain::gui
