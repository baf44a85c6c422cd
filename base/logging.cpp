// spdlog-backed structured logging with the secrets rule applied before any sink sees a line.
#include "sealtrain/base/logging.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <mutex>
#include <regex>

namespace sealtrain::log {
namespace {

constexpr std::string_view kRedacted = "[redacted]";

std::mutex gMutex;
std::shared_ptr<spdlog::logger> gLogger;
Format gFormat = Format::Text;

spdlog::level::level_enum toSpdlog(Level level)
{
    switch (level) {
    case Level::Trace: return spdlog::level::trace;
    case Level::Debug: return spdlog::level::debug;
    case Level::Info: return spdlog::level::info;
    case Level::Warning: return spdlog::level::warn;
    case Level::Error: return spdlog::level::err;
    case Level::Critical: return spdlog::level::critical;
    case Level::Off: return spdlog::level::off;
    }
    return spdlog::level::info;
}

std::shared_ptr<spdlog::logger> makeLogger(const Options& options)
{
    spdlog::sink_ptr sink;
    if (options.stream != nullptr)
        sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(*options.stream, true);
    else if (options.file)
        sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(options.file->string(), false);
    else
        sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();

    auto logger = std::make_shared<spdlog::logger>("sealtrain", sink);
    // The component and the structured payload are rendered into %v by write().
    if (options.format == Format::Json)
        logger->set_pattern(R"({"ts":"%Y-%m-%dT%H:%M:%S.%fZ","level":"%l",%v})",
                            spdlog::pattern_time_type::utc);
    else
        logger->set_pattern("%Y-%m-%dT%H:%M:%S.%fZ %^%l%$ %v", spdlog::pattern_time_type::utc);
    logger->set_level(toSpdlog(options.level));
    logger->flush_on(spdlog::level::warn);
    return logger;
}

std::shared_ptr<spdlog::logger> currentLogger()
{
    std::lock_guard lock(gMutex);
    if (!gLogger)
        gLogger = makeLogger(Options{});
    return gLogger;
}

std::string valueText(const FieldValue& value)
{
    return std::visit(
        [](const auto& v) -> std::string {
            using V = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<V, std::string>)
                return v;
            else if constexpr (std::is_same_v<V, bool>)
                return v ? "true" : "false";
            else
                return fmt::format("{}", v);
        },
        value);
}

bool needsQuoting(std::string_view text)
{
    return text.empty() || std::any_of(text.begin(), text.end(), [](char c) {
               return std::isspace(static_cast<unsigned char>(c)) != 0 || c == '"' || c == '=';
           });
}

std::string renderText(std::string_view component, std::string_view message, const Fields& fields)
{
    std::string line = fmt::format("[{}] {}", component, redactSecrets(message));
    for (const auto& field : fields) {
        std::string value = isSecretFieldName(field.key) ? std::string(kRedacted)
                                                         : redactSecrets(valueText(field.value));
        if (needsQuoting(value))
            value = nlohmann::json(value).dump();
        line += fmt::format(" {}={}", field.key, value);
    }
    return line;
}

std::string renderJson(std::string_view component, std::string_view message, const Fields& fields)
{
    nlohmann::json object = nlohmann::json::object();
    for (const auto& field : fields) {
        if (isSecretFieldName(field.key)) {
            object[field.key] = kRedacted;
            continue;
        }
        std::visit(
            [&](const auto& v) {
                using V = std::decay_t<decltype(v)>;
                if constexpr (std::is_same_v<V, std::string>)
                    object[field.key] = redactSecrets(v);
                else
                    object[field.key] = v;
            },
            field.value);
    }
    // Invalid UTF-8 in a message must not throw: replace it.
    const auto dump = [](const nlohmann::json& j) {
        return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    };
    return fmt::format(R"("component":{},"msg":{},"fields":{})", dump(nlohmann::json(component)),
                       dump(nlohmann::json(redactSecrets(message))), dump(object));
}

}  // namespace

void configure(const Options& options)
{
    auto logger = makeLogger(options);
    // The previous logger is dropped without a flush: its stream may already be gone, and its
    // sinks flush on every warning and on destruction of file sinks.
    std::lock_guard lock(gMutex);
    gLogger = std::move(logger);
    gFormat = options.format;
}

std::optional<Level> parseLevel(std::string_view name)
{
    static constexpr std::pair<std::string_view, Level> kNames[] = {
        {"trace", Level::Trace},     {"debug", Level::Debug}, {"info", Level::Info},
        {"warning", Level::Warning}, {"error", Level::Error}, {"critical", Level::Critical},
        {"off", Level::Off}};
    for (const auto& [text, level] : kNames) {
        if (text == name)
            return level;
    }
    return std::nullopt;
}

void write(Level level, std::string_view component, std::string_view message, const Fields& fields)
{
    auto logger = currentLogger();
    const auto spdLevel = toSpdlog(level);
    if (!logger->should_log(spdLevel))
        return;
    Format format = Format::Text;
    {
        std::lock_guard lock(gMutex);
        format = gFormat;
    }
    const std::string payload = format == Format::Json ? renderJson(component, message, fields)
                                                       : renderText(component, message, fields);
    logger->log(spdLevel, "{}", payload);
}

void flush()
{
    currentLogger()->flush();
}

bool isSecretFieldName(std::string_view name)
{
    std::string lowered(name);
    std::transform(lowered.begin(), lowered.end(), lowered.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    static constexpr std::string_view kMarkers[] = {
        "password",   "passphrase", "secret", "token", "key", "totp", "otp",
        "credential", "private",    "dek",    "kek",   "pin", "seed"};
    // "key_id" and "public_key" name public facts; everything else with "key" is redacted.
    if (lowered.ends_with("key_id") || lowered == "public_key" || lowered == "keyid")
        return false;
    return std::any_of(std::begin(kMarkers), std::end(kMarkers), [&](std::string_view marker) {
        return lowered.find(marker) != std::string::npos;
    });
}

std::string redactSecrets(std::string_view text)
{
    // Ordered from most to least specific. Hex of 32+ digits and base64 of 40+ characters look
    // like raw keys; hashes we print on purpose (SHA-256 ids) are prefixed "sha256:" and kept.
    static const std::regex kPemPrivate(
        R"(-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$))");
    static const std::regex kOtpSecret(R"((otpauth://[^\s?]*\?(?:[^\s]*&)?secret=)[A-Za-z2-7=]+)",
                                       std::regex::icase);
    static const std::regex kLongHex(R"((^|[^:A-Za-z0-9])[0-9A-Fa-f]{32,}(?![0-9A-Za-z]))");
    static const std::regex kLongBase64(
        R"((^|[^:A-Za-z0-9+/])[A-Za-z0-9+/]{40,}={0,2}(?![A-Za-z0-9+/=]))");

    std::string out(text);
    out = std::regex_replace(out, kPemPrivate, "[redacted private key]");
    out = std::regex_replace(out, kOtpSecret, "$1[redacted]");
    out = std::regex_replace(out, kLongHex, "$1[redacted]");
    out = std::regex_replace(out, kLongBase64, "$1[redacted]");
    return out;
}

}  // namespace sealtrain::log
