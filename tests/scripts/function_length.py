#!/usr/bin/env python3
"""Function length (issue #50): a function of the product code over 100 lines carries its reason.

    function_length.py SOURCE_DIR          checks every .cpp, .cu and .h outside tests/, bench/
                                           and fuzz/; exit 1 naming each long function without one
    function_length.py --selftest          shows that a long function without a reason is refused

A function's body runs from a line that is `{` alone to the next line that is `}` alone (how
.clang-format lays out every function of this tree). Over 100 lines between them, the block right
above the `{` (the signature and the comments touching it, up to a blank line) must hold a comment
`// Over 100 lines: WHY`, WHY being at least a few words.
"""
import pathlib
import re
import subprocess
import sys
import tempfile

LIMIT = 100
REASON = re.compile(r"^\s*//\s*(Over|Longer than) 100 lines:\s*\S+(\s+\S+){2,}")
SKIPPED = ("tests/", "bench/", "fuzz/", "build/")


def long_functions(text):
    """(first line, body lines, has a reason) of each function over LIMIT lines."""
    lines = text.split("\n")
    found = []
    start = None
    for number, line in enumerate(lines):
        if line == "{":
            start = number
        elif line == "}" and start is not None:
            body = number - start - 1
            if body > LIMIT:
                above = start - 1
                reason = False
                while above >= 0 and lines[above].strip() and lines[above] != "}":
                    reason = reason or bool(REASON.match(lines[above]))
                    above -= 1
                found.append((start + 1, body, reason))
            start = None
    return found


def check(root):
    root = pathlib.Path(root)
    listed = subprocess.run(["git", "ls-files", "*.cpp", "*.cu", "*.h", "*.cuh"], cwd=root,
                            capture_output=True, text=True)
    if listed.returncode == 0:
        listed = listed.stdout.split()
    else:  # a source tree without git: every file under it
        listed = [str(path.relative_to(root)) for path in sorted(root.rglob("*"))
                  if path.suffix in (".cpp", ".cu", ".h", ".cuh") and path.is_file()]
    failures = []
    for name in listed:
        if name.startswith(SKIPPED):
            continue
        for line, body, reason in long_functions((root / name).read_text(errors="replace")):
            if not reason:
                failures.append(f"  {name}:{line}: a function of {body} lines with no "
                                f"'// Over 100 lines: WHY' above it")
    return failures


def selftest():
    body = "\n".join(f"    step({i});" for i in range(LIMIT + 1))
    cases = {
        "int f()\n{\n" + body + "\n}\n": False,
        "// Over 100 lines: one table of every case, read top to bottom\nint f()\n{\n"
        + body + "\n}\n": True,
        "// Over 100 lines: x\nint f()\n{\n" + body + "\n}\n": False,  # no real reason
        "// Over 100 lines: one table of every case, read top to bottom\n\nint f()\n{\n"
        + body + "\n}\n": False,  # not touching the function
        "int f()\n{\n" + "\n".join(body.split("\n")[:LIMIT]) + "\n}\n": True,  # 100 lines
    }
    with tempfile.TemporaryDirectory() as tree:
        subprocess.run(["git", "init", "-q", tree], check=True)
        for text, passes in cases.items():
            (pathlib.Path(tree) / "f.cpp").write_text(text)
            subprocess.run(["git", "-C", tree, "add", "f.cpp"], check=True)
            if (not check(tree)) != passes:
                print(f"function_length.py --selftest: {'refused' if passes else 'let through'} "
                      f"a case it should not have:\n{text[:200]}", file=sys.stderr)
                return 1
    print("function_length.py --selftest: every case judged as it should be")
    return 0


def main():
    if sys.argv[1:] == ["--selftest"]:
        return selftest()
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    failures = check(sys.argv[1])
    if failures:
        print("Functions over 100 lines without their reason:\n" + "\n".join(failures),
              file=sys.stderr)
        return 1
    print("function length: every function over 100 lines says why")
    return 0


if __name__ == "__main__":
    sys.exit(main())
