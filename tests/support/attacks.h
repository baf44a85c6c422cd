// The inputs of attacks that both a test and a benchmark perform (issue #27), written once.
#pragma once

#include <fmt/format.h>

#include <string>

namespace sealtrain::testing {

// A "billion laughs" YAML document: six levels of nine aliases, 531,441 values once expanded
// (each level more multiplies by nine). A parser that expands aliases spends seconds and
// hundreds of MiB on its 400 bytes; the job spec reader refuses its first anchor.
inline std::string billionLaughs()
{
    std::string text = "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
    for (int level = 1; level <= 6; ++level) {
        text += fmt::format("a{}: &a{} [", level, level);
        for (int i = 0; i < 9; ++i)
            text += fmt::format("{}*a{}", i == 0 ? "" : ", ", level - 1);
        text += "]\n";
    }
    return text;
}

}  // namespace sealtrain::testing
