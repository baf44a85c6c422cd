// The command palette (Ctrl+K, as Qt Creator's locator and KDE's command bar): every action the
// signed-in user can take now, found by typing part of its name. Its entries are the window's
// own actions (the menus') and the buttons of every screen the user's permissions list, as the
// screens show them: a button a screen hides (the user may not, or not now) or disables is not
// offered, so what the palette offers is what the user could reach with the mouse. The server
// still decides every call.
#pragma once

#include <QDialog>
#include <QList>
#include <QString>

#include <functional>

class QAction;
class QLineEdit;
class QListWidget;

namespace sealtrain::gui {

struct PaletteEntry {
    QString text;      // "Jobs › Approve this spec", "Go to Audit"
    QString shortcut;  // as the menus show it; empty: none
    std::function<void()> run;
};

// Whether every word of `query` is part of `text` (case-insensitive); an empty query matches.
[[nodiscard]] bool paletteMatches(const QString& text, const QString& query);

// An action's entry: its text without mnemonics, its shortcut, triggering it.
[[nodiscard]] PaletteEntry actionEntry(QAction* action);

// The buttons of `page` that a person could press now, as "`title` › button" entries: shown
// (a tab not in front counts as shown) and enabled. Running one brings the page (`show`) and
// the button's tab forward, then presses it.
[[nodiscard]] QList<PaletteEntry> pageEntries(const QString& title, QWidget* page,
                                              const std::function<void()>& show);

class CommandPalette final : public QDialog {
    Q_OBJECT

public:
    CommandPalette(QList<PaletteEntry> entries, QWidget* parent = nullptr);

    // The texts listed for the filter as typed now.
    [[nodiscard]] QStringList listed() const;

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void filter(const QString& query);
    void runCurrent();

    QList<PaletteEntry> entries_;
    QLineEdit* query_;
    QListWidget* list_;
};

}  // namespace sealtrain::gui
