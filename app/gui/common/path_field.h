// Paths chosen in the desktop's own file dialog (issue #51): a path field with a "Browse…" button
// beside it, and, where a button needs a path and the field is empty, the dialog instead of a
// refusal. QFileDialog's static functions use the platform's native dialog (the portal, KDE's or
// GTK's) where there is one, and Qt's own elsewhere. The field stays: a path can be typed or
// pasted, and the tests type it.
#pragma once

#include <QString>

class QLineEdit;
class QWidget;

namespace sealtrain::gui {

enum class PathKind { SaveFile, OpenFile, Folder };

// The path in `field`, trimmed; when it is empty, the one chosen in the dialog titled `title`
// (starting at `suggested`), put into the field. Empty when the dialog was cancelled.
[[nodiscard]] QString pathOrAsk(QLineEdit* field, PathKind kind, const QString& title,
                                const QString& suggested = {});

// `field` in a row with a "Browse…" button (named "<field's name>Browse") that opens the dialog
// and puts the path chosen into the field; the row to lay out in the field's place.
[[nodiscard]] QWidget* withBrowse(QLineEdit* field, PathKind kind, const QString& title,
                                  const QString& suggested = {});

}  // namespace sealtrain::gui
