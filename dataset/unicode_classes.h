// Unicode letter and number classes (general categories L* and N*) and White_Space, for
// GPT-2's pre-tokenisation pattern, plus a UTF-8 decoder that the tokenizer and the validator
// share. The tables are generated (tools/generate_unicode_classes.py).
#pragma once

#include "sealtrain/base/utf8.h"

#include <cstddef>
#include <string_view>

namespace sealtrain::dataset::internal {

[[nodiscard]] bool isUnicodeLetter(char32_t cp);
[[nodiscard]] bool isUnicodeNumber(char32_t cp);

// The Unicode White_Space property (what \s matches in the `regex` module GPT-2 uses).
[[nodiscard]] constexpr bool isUnicodeSpace(char32_t cp)
{
    return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680
           || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F
           || cp == 0x205F || cp == 0x3000;
}

// UTF-8 decoding is base's (sealtrain/base/utf8.h).
using sealtrain::decodeUtf8;
using sealtrain::firstInvalidUtf8;

}  // namespace sealtrain::dataset::internal
