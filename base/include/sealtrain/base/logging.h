// Structured logging for every Sealtrain process, over spdlog.
//
// The secrets rule (docs/decisions/0002-logging-and-secrets.md): secrets never reach a log line.
// 1. Key material lives in crypto's SecretBytes, which converts to no string and whose formatter
//    prints only its length, so it can not be logged by accident.
// 2. A field whose name says it holds a secret (password, passphrase, secret, token, key, totp,
//    otp, credential, private, dek, kek) is written as "[redacted]" whatever its value.
// 3. Messages are scrubbed of PEM private-key blocks, otpauth:// secrets and long hex or base64
//    runs that look like raw keys, before any sink sees them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace sealtrain::log {

enum class Level { Trace, Debug, Info, Warning, Error, Critical, Off };
enum class Format { Text, Json };

struct Options {
    Level level = Level::Info;
    Format format = Format::Text;
    std::optional<std::filesystem::path> file;  // append here instead of standard error
    std::ostream* stream = nullptr;             // or here (tests); takes precedence over file
};

// A structured field's value. There is deliberately no constructor from a byte buffer.
using FieldValue = std::variant<std::string, std::int64_t, double, bool>;

struct Field {
    Field(std::string_view k, std::string_view v)
        : key(k)
        , value(std::string(v))
    {
    }
    Field(std::string_view k, const char* v)
        : key(k)
        , value(std::string(v))
    {
    }
    Field(std::string_view k, const std::string& v)
        : key(k)
        , value(v)
    {
    }
    Field(std::string_view k, const std::filesystem::path& v)
        : key(k)
        , value(v.string())
    {
    }
    Field(std::string_view k, bool v)
        : key(k)
        , value(v)
    {
    }
    Field(std::string_view k, double v)
        : key(k)
        , value(v)
    {
    }
    template <typename Int>
    requires std::is_integral_v<Int> Field(std::string_view k, Int v)
        : key(k)
        , value(static_cast<std::int64_t>(v))
    {
    }

    std::string key;
    FieldValue value;
};

using Fields = std::vector<Field>;

// Replaces the process-wide configuration; safe to call again (tests do).
void configure(const Options& options);

// Parses "trace|debug|info|warning|error|critical|off"; nullopt for anything else.
[[nodiscard]] std::optional<Level> parseLevel(std::string_view name);

void write(Level level, std::string_view component, std::string_view message,
           const Fields& fields = {});

inline void debug(std::string_view component, std::string_view message, const Fields& fields = {})
{
    write(Level::Debug, component, message, fields);
}
inline void info(std::string_view component, std::string_view message, const Fields& fields = {})
{
    write(Level::Info, component, message, fields);
}
inline void warn(std::string_view component, std::string_view message, const Fields& fields = {})
{
    write(Level::Warning, component, message, fields);
}
inline void error(std::string_view component, std::string_view message, const Fields& fields = {})
{
    write(Level::Error, component, message, fields);
}

// Flushes every sink (call before exiting after an error).
void flush();

// The scrubbing of rule 3, exposed for tests and for text that leaves the process otherwise.
[[nodiscard]] std::string redactSecrets(std::string_view text);

// Rule 2: whether a field of this name is always redacted.
[[nodiscard]] bool isSecretFieldName(std::string_view name);

}  // namespace sealtrain::log
