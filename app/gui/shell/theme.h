// Light and dark (issue #51): the desktop follows the desktop environment's choice unless told
// otherwise (`sealtrain --theme light|dark|system`, or SEALTRAIN_THEME). "system" keeps the palette
// the platform's Qt theme gives when it is already dark (KDE Plasma, a Qt theme set to dark);
// otherwise it asks the freedesktop settings portal (org.freedesktop.appearance color-scheme,
// which GNOME and KDE both answer) and draws a dark palette of its own when the desktop prefers
// dark. "light" and "dark" use Qt's Fusion style with a light or a dark palette, on any desktop.
#pragma once

#include <QPalette>
#include <QString>

#include <optional>

namespace sealtrain::gui {

enum class ThemeChoice { System, Light, Dark };

// "system", "light" or "dark" (any case); nullopt for anything else.
[[nodiscard]] std::optional<ThemeChoice> parseTheme(const QString& text);
// Whether the desktop's settings portal says the user prefers dark; false when there is no
// portal (no session bus, an old desktop), after at most a short wait.
[[nodiscard]] bool desktopPrefersDark();
// The palettes the desktop draws with Fusion.
[[nodiscard]] QPalette lightPalette();
[[nodiscard]] QPalette darkPalette();
// Applies `choice` to the application before any window is made; returns whether the palette
// is dark.
bool applyTheme(ThemeChoice choice);

}  // namespace sealtrain::gui
