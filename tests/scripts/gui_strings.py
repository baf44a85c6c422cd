#!/usr/bin/env python3
"""The desktop's words go through tr() (issue #51, item 1), so that a translation can be added.

    gui_strings.py SOURCE_DIR      checks app/gui/**/*.cpp; exit 1 naming each line that hands a
                                   widget a bare string literal (a label, button, title, tooltip,
                                   placeholder, tab, menu or accessible name) instead of tr("...")
    gui_strings.py --selftest      shows that such a line is refused, and tr() and a line marked
                                   `// not translated: WHY` are not

What is not words (a format such as "rc_…", a default value such as "production") says so on its
line: `// not translated: WHY`.
"""
import pathlib
import re
import sys
import tempfile

TAKES_WORDS = (
    r"QPushButton|QLabel|QCheckBox|QGroupBox|QRadioButton|QToolButton|QAction|setText|"
    r"setWindowTitle|setPlaceholderText|setToolTip|setStatusTip|setWhatsThis|addTab|insertTab|"
    r"setTabText|setAccessibleName|setAccessibleDescription|addMenu|addAction|setTitle|"
    r"setSubTitle|addItem|addItems|setHorizontalHeaderLabels|setButtonText|about|information|"
    r"warning|critical|question"
)
BARE = re.compile(r"\b(" + TAKES_WORDS + r")\(\s*(QStringLiteral\(|QString\(|QLatin1String\()?\"[A-Za-z]")
MARKED = re.compile(r"//\s*not translated:\s*\S+")


def bare_strings(root):
    """(path, line number, line) of each line handing a widget an untranslated literal."""
    found = []
    for path in sorted((root / "app" / "gui").rglob("*.cpp")):
        for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
            if BARE.search(line) and not MARKED.search(line):
                found.append((path.relative_to(root), number, line.strip()))
    return found


def selftest():
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        (root / "app" / "gui").mkdir(parents=True)
        (root / "app" / "gui" / "page.cpp").write_text(
            'auto* ok = new QPushButton(tr("&Approve"), this);\n'
            'field->setPlaceholderText("rc_…");  // not translated: the code\'s format\n'
            'label->setText(QStringLiteral("Signed in"));\n'
            'auto* bad = new QPushButton("Approve", this);\n',
            encoding="utf-8")
        found = [number for _, number, _ in bare_strings(root)]
        if found != [3, 4]:
            print(f"gui_strings selftest: expected lines 3 and 4 refused, got {found}")
            return 1
    print("gui_strings selftest: bare literals refused, tr() and marked lines accepted")
    return 0


def main():
    if sys.argv[1:] == ["--selftest"]:
        return selftest()
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    found = bare_strings(pathlib.Path(sys.argv[1]))
    for path, number, line in found:
        print(f"{path}:{number}: a widget is handed words without tr(): {line}")
    if found:
        print(f"gui_strings: {len(found)} line(s) above; wrap the words in tr(\"...\"), or end the "
              "line with `// not translated: WHY` when they are not words.")
        return 1
    print("gui_strings: every widget's words go through tr()")
    return 0


if __name__ == "__main__":
    sys.exit(main())
