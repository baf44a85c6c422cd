// The few colours the desktop draws itself (a refusal's sentence, a verdict, a budget bar),
// chosen for the palette in use (issue #51): dark red and green on a light window, light ones on
// a dark window, so that each stays legible (WCAG AA contrast against the window colour).
#pragma once

#include <QColor>
#include <QPalette>
#include <QString>

class QChart;

namespace sealtrain::gui {

// Bad and Good colour text (a refusal, a verdict); Accent fills graphics (a bar); Muted greys
// what is no longer in force (a disabled user, an ended session).
enum class Tone { Bad, Good, Accent, Muted };

// Whether `palette`'s window is dark (its lightness under half).
[[nodiscard]] bool paletteIsDark(const QPalette& palette);
// `tone`'s colour on the application's palette.
[[nodiscard]] QColor toneColor(Tone tone);
// A style sheet that colours a label's text in `tone` ("color: #b00020;"), bold when asked.
[[nodiscard]] QString toneStyle(Tone tone, bool bold = false);
// Gives `chart` Qt Charts' light or dark theme to match the palette; call it before adding series
// (a theme resets their colours).
void themeChart(QChart& chart);
// A series colour of a colour-blind-safe palette, legible on the chart's background: black on a
// light chart becomes Okabe and Ito's yellow on a dark one.
[[nodiscard]] QColor seriesColour(QRgb light);

// The background that marks a cell out (a parameter that sets runs apart), under the palette's
// text colour.
[[nodiscard]] QColor markBackground();

// The style of a notice box everyone must read (the overview's four-eyes warning).
[[nodiscard]] QString noticeStyle();

}  // namespace sealtrain::gui
