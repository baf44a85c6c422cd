// Light and dark (issue #51; docs/gui.md, "Light and dark"): the choice read from the command
// line, each palette's text legible on its window and fields (WCAG contrast), and the colours the
// desktop draws itself (a refusal's sentence, a verdict, a bar) legible on either palette; a
// window made after the dark theme is applied draws with it; `sealtrain --theme` refuses a word
// it does not know.
#include "common/colors.h"
#include "shell/theme.h"

#include <QApplication>
#include <QProcess>
#include <QtTest/QtTest>

#include <algorithm>
#include <cmath>

using namespace sealtrain::gui;

namespace {

// WCAG 2's relative luminance and contrast ratio.
double luminance(const QColor& color)
{
    const auto channel = [](double c) {
        return c <= 0.03928 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4);
    };
    return 0.2126 * channel(color.redF()) + 0.7152 * channel(color.greenF())
           + 0.0722 * channel(color.blueF());
}

double contrast(const QColor& a, const QColor& b)
{
    const double x = luminance(a);
    const double y = luminance(b);
    return (std::max(x, y) + 0.05) / (std::min(x, y) + 0.05);
}

}  // namespace

class TestGuiTheme : public QObject {
    Q_OBJECT

private slots:
    void choiceParsed()
    {
        QCOMPARE(parseTheme("dark"), std::optional(ThemeChoice::Dark));
        QCOMPARE(parseTheme(" Light "), std::optional(ThemeChoice::Light));
        QCOMPARE(parseTheme("SYSTEM"), std::optional(ThemeChoice::System));
        QVERIFY(!parseTheme("purple").has_value());
        QVERIFY(!parseTheme("").has_value());
    }

    // Text on its window, on its fields, on a button and a selection: AA (4.5) at least.
    void palettesAreLegible()
    {
        for (const QPalette& palette : {lightPalette(), darkPalette()}) {
            const auto check = [&palette](QPalette::ColorRole text, QPalette::ColorRole back) {
                const double ratio = contrast(palette.color(text), palette.color(back));
                QVERIFY2(ratio >= 4.5,
                         qPrintable(QStringLiteral("%1 on %2: %3")
                                        .arg(palette.color(text).name(), palette.color(back).name())
                                        .arg(ratio)));
            };
            check(QPalette::WindowText, QPalette::Window);
            check(QPalette::Text, QPalette::Base);
            check(QPalette::ButtonText, QPalette::Button);
            check(QPalette::HighlightedText, QPalette::Highlight);
            check(QPalette::ToolTipText, QPalette::ToolTipBase);
        }
        QVERIFY(!paletteIsDark(lightPalette()));
        QVERIFY(paletteIsDark(darkPalette()));
    }

    // The desktop's own colours follow the palette applied, each legible on its window.
    void ownColoursFollowThePalette()
    {
        for (const ThemeChoice choice : {ThemeChoice::Light, ThemeChoice::Dark}) {
            const bool dark = applyTheme(choice);
            QCOMPARE(dark, choice == ThemeChoice::Dark);
            QCOMPARE(paletteIsDark(QApplication::palette()), dark);
            const QColor window = QApplication::palette().color(QPalette::Window);
            // A marked cell's text: the palette's own text colour on the mark.
            const double marked =
                contrast(QApplication::palette().color(QPalette::Text), markBackground());
            QVERIFY2(marked >= 4.5, qPrintable(QString::number(marked)));
            for (const Tone tone : {Tone::Bad, Tone::Good, Tone::Accent, Tone::Muted}) {
                // Text needs 4.5:1; the accent fills bars only, a graphic, which needs 3:1.
                const double ratio = contrast(toneColor(tone), window);
                QVERIFY2(ratio >= (tone == Tone::Accent ? 3.0 : 4.5),
                         qPrintable(QStringLiteral("%1 on %2: %3")
                                        .arg(toneColor(tone).name(), window.name())
                                        .arg(ratio)));
            }
            QVERIFY(toneStyle(Tone::Bad).contains(toneColor(Tone::Bad).name()));
            // A widget made now draws with the palette.
            QWidget widget;
            QCOMPARE(paletteIsDark(widget.palette()), dark);
        }
    }

    // `sealtrain --theme` takes light, dark or system, and says so otherwise.
    void unknownThemeRefused()
    {
        QProcess desktop;
        desktop.setProcessEnvironment([] {
            auto env = QProcessEnvironment::systemEnvironment();
            env.insert("QT_QPA_PLATFORM", "offscreen");
            return env;
        }());
        desktop.start(QStringLiteral(SEALTRAIN_GUI_EXECUTABLE), {"--theme", "purple"});
        QVERIFY(desktop.waitForFinished(30000));
        QCOMPARE(desktop.exitCode(), 2);
        QVERIFY2(desktop.readAllStandardError().contains("--theme takes light, dark or system"),
                 "the sentence");
    }
};

QTEST_MAIN(TestGuiTheme)
#include "test_gui_theme.moc"
