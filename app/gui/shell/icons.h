// Icons from the desktop's theme (freedesktop names), with a maintained theme to fall back on
// where the desktop names none: Breeze, else Adwaita (Debian's breeze-icon-theme and
// adwaita-icon-theme; the package recommends both). A missing icon is an empty one: every
// action keeps its text.
#pragma once

#include <QIcon>
#include <QStringList>

namespace sealtrain::gui {

// Chooses the fallback theme once, when the platform names no theme with icons.
void ensureIconTheme();

// The first of `names` the theme has; an empty icon when it has none of them.
[[nodiscard]] QIcon themeIcon(const QStringList& names);

}  // namespace sealtrain::gui
