// The desktop's own colours (colors.h).
#include "colors.h"

#include <QApplication>
#include <QChart>

namespace sealtrain::gui {

bool paletteIsDark(const QPalette& palette)
{
    return palette.color(QPalette::Window).lightnessF() < 0.5;
}

QColor toneColor(Tone tone)
{
    const bool dark = paletteIsDark(QApplication::palette());
    switch (tone) {
    case Tone::Bad: return QColor(dark ? "#ff8a80" : "#b00020");
    case Tone::Good: return QColor(dark ? "#81c995" : "#1b5e20");
    case Tone::Accent: return QColor(dark ? "#6cb6ef" : "#2f7fc1");
    case Tone::Muted: return QColor(dark ? "#9aa0a6" : "#6b6b6b");
    }
    return {};
}

QString toneStyle(Tone tone, bool bold)
{
    return QStringLiteral("color: %1;%2")
        .arg(toneColor(tone).name(), bold ? QStringLiteral(" font-weight: bold;") : QString());
}

void themeChart(QChart& chart)
{
    chart.setTheme(paletteIsDark(QApplication::palette()) ? QChart::ChartThemeDark
                                                          : QChart::ChartThemeLight);
}

QColor seriesColour(QRgb light)
{
    constexpr QRgb kBlack = 0x000000;
    constexpr QRgb kYellow = 0xF0E442;
    return QColor((light & 0xFFFFFFU) == kBlack && paletteIsDark(QApplication::palette()) ? kYellow
                                                                                          : light);
}

QColor markBackground()
{
    return QColor(paletteIsDark(QApplication::palette()) ? "#4a3f00" : "#fff3c4");
}

QString noticeStyle()
{
    return paletteIsDark(QApplication::palette())
               ? QStringLiteral("QLabel { background: #3d3200; color: #ffe69c; border: 1px solid "
                                "#8a7300; padding: 8px; }")
               : QStringLiteral("QLabel { background: #fff3cd; color: #5c4400; border: 1px solid "
                                "#e0c060; padding: 8px; }");
}

}  // namespace sealtrain::gui
