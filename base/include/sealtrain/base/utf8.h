// UTF-8 decoding and validation, strict: only the well-formed sequences of Unicode's table 3-7
// (no overlong forms, no surrogates, nothing above U+10FFFF).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace sealtrain {

// Decodes the code point at `pos` into `codePoint`; returns its length in bytes, or 0 when the
// bytes at `pos` are not well-formed UTF-8.
[[nodiscard]] std::size_t decodeUtf8(std::string_view text, std::size_t pos, char32_t& codePoint);

// The offset of the first byte that does not start a well-formed sequence; text.size() when the
// whole text is valid.
[[nodiscard]] std::size_t firstInvalidUtf8(std::string_view text);

[[nodiscard]] bool isValidUtf8(std::string_view text);

// Whether `codePoint` is an invisible format character (Unicode general category Cf): the
// bidirectional controls (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C), zero-width
// characters (U+200B-U+200D, U+2060-U+2064, U+FEFF), the soft hyphen and the other format
// characters of Unicode 15. A name holding one can read as another ("report\u202etxt.exe" shows
// as "reportexe.txt"), so names refuse them (issue #54).
[[nodiscard]] bool isInvisibleFormatCharacter(char32_t codePoint) noexcept;
// Whether `text` holds one (text that is not UTF-8 holds none it could show).
[[nodiscard]] bool hasInvisibleFormatCharacter(std::string_view text);

// `text` as it may reach a person's terminal: C0 and C1 control characters, DEL and bytes that
// are not well-formed UTF-8 become visible escapes (\n, \r, \t, else \xNN per byte), so that
// text another user chose (a job's name or reason, a trainer's log line) can not move the cursor,
// clear the screen or forge lines (issue #27); invisible format characters become \u{XXXX}, so
// that none can reorder or hide what is shown (issue #54). The stored bytes stay as given; this
// is for output.
[[nodiscard]] std::string escapeControls(std::string_view text);
[[nodiscard]] bool isValidUtf8(std::span<const std::uint8_t> bytes);

}  // namespace sealtrain
