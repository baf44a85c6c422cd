// The keyboard and screen-reader gates (issue #51, item 1; docs/gui.md, "Keyboard and screen
// readers"), as a person with a keyboard or a screen reader meets the window: Tab pressed for
// real from a starting control until focus comes back, and what Qt's accessibility interface
// (what AT-SPI hands Orca) says of each control.
#pragma once

#include <QAbstractButton>
#include <QAbstractItemView>
#include <QAbstractSpinBox>
#include <QAccessible>
#include <QApplication>
#include <QComboBox>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QRegularExpression>
#include <QSet>
#include <QTabBar>
#include <QWidget>
#include <QtTest/QtTest>

namespace sealtrain::testing {

inline QString describe(const QWidget* widget)
{
    if (widget == nullptr)
        return QStringLiteral("nothing");
    return QStringLiteral("%1 (%2)").arg(widget->objectName().isEmpty() ? QStringLiteral("unnamed")
                                                                        : widget->objectName(),
                                         widget->metaObject()->className());
}

// The controls a person works with under `root`, as shown now: buttons, fields, lists, tables,
// tab bars. Parts of a composite (a spin box's field, a combo box's list, a view's viewport and
// scroll bars) are reached through their owner and left out.
inline QList<QWidget*> shownControls(const QWidget& root)
{
    QList<QWidget*> controls;
    for (QWidget* widget : root.findChildren<QWidget*>()) {
        const bool control = qobject_cast<QAbstractButton*>(widget) != nullptr
                             || qobject_cast<QLineEdit*>(widget) != nullptr
                             || qobject_cast<QComboBox*>(widget) != nullptr
                             || qobject_cast<QAbstractSpinBox*>(widget) != nullptr
                             || qobject_cast<QPlainTextEdit*>(widget) != nullptr
                             || qobject_cast<QAbstractItemView*>(widget) != nullptr
                             || qobject_cast<QTabBar*>(widget) != nullptr;
        const QWidget* parent = widget->parentWidget();
        if (!control || !widget->isVisible() || !widget->isEnabled()
            || widget->objectName().startsWith("qt_")
            || qobject_cast<const QAbstractSpinBox*>(parent) != nullptr
            || qobject_cast<const QComboBox*>(parent) != nullptr
            || qobject_cast<const QAbstractItemView*>(parent) != nullptr
            || qobject_cast<const QTabBar*>(parent) != nullptr)
            continue;
        controls << widget;
    }
    return controls;
}

// Presses Tab from `start` until focus comes back to it. Returns what is wrong: a control that
// keeps the focus when Tab is pressed (a keyboard trap), the focus leaving `scope`'s window, or
// a shown control of `scope` that Tab never reached.
inline QStringList keyboardProblems(QWidget* start, const QWidget& scope)
{
    QStringList problems;
    start->setFocus(Qt::TabFocusReason);
    if (!QTest::qWaitFor([start] { return start->hasFocus(); }, 2000))
        return {describe(start) + ": can not take the focus"};
    QSet<const QWidget*> reached{start};
    QWidget* now = start;
    for (int presses = 0; presses < 500; ++presses) {
        QTest::keyClick(now, Qt::Key_Tab);
        QWidget* next = QApplication::focusWidget();
        if (next == now) {
            problems << describe(now) + ": Tab does not leave it (a keyboard trap)";
            break;
        }
        if (next == nullptr || next->window() != start->window()) {
            problems << "Tab from " + describe(now) + " leaves the window";
            break;
        }
        if (next == start)
            break;
        reached.insert(next);
        if (const QWidget* proxy = next->focusProxy())
            reached.insert(proxy);
        now = next;
    }
    for (const QWidget* control : shownControls(scope)) {
        const QWidget* owner = control;
        bool found = reached.contains(owner);
        for (const QWidget* w : reached)
            found = found || w->focusProxy() == owner;
        if (!found)
            problems << describe(control) + ": Tab never reaches it";
    }
    return problems;
}

// What a screen reader would say wrongly of the controls under `root`: one without a name (its
// accessible name, the label it is the buddy of, or a button's text, as Qt's accessibility
// interface gives it); a password or passphrase field (by its objectName) that shows what is
// typed; and a secret field that is not announced as one or whose value is read out.
inline QStringList screenReaderProblems(const QWidget& root)
{
    QStringList problems;
    for (QWidget* control : shownControls(root)) {
        QAccessibleInterface* face = QAccessible::queryAccessibleInterface(control);
        if (face == nullptr) {
            problems << describe(control) + ": no accessibility interface";
            continue;
        }
        if (face->text(QAccessible::Name).remove('&').trimmed().isEmpty())
            problems << describe(control) + ": no name for a screen reader";
        const auto* field = qobject_cast<const QLineEdit*>(control);
        if (field == nullptr)
            continue;
        static const QRegularExpression secretName("password|passphrase",
                                                   QRegularExpression::CaseInsensitiveOption);
        if (field->echoMode() == QLineEdit::Normal) {
            if (secretName.match(control->objectName()).hasMatch())
                problems << describe(control) + ": a secret field shows what is typed";
            continue;
        }
        if (field->text().isEmpty())
            continue;
        if (!face->state().passwordEdit)
            problems << describe(control) + ": a secret field not announced as one";
        QString heard = face->text(QAccessible::Value);
        if (QAccessibleTextInterface* text = face->textInterface())
            heard += text->text(0, text->characterCount());
        if (heard.contains(field->text()))
            problems << describe(control) + ": its secret is read out";
    }
    return problems;
}

}  // namespace sealtrain::testing
