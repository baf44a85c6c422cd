// The progress display (progress.h).
#include "sealtrain/base/progress.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace sealtrain {

namespace {
constexpr std::size_t kBarWidth = 24;
}

std::string formatBytes(std::uint64_t bytes)
{
    const auto value = static_cast<double>(bytes);
    if (bytes < 1000)
        return fmt::format("{} B", bytes);
    if (value < 1e6)
        return fmt::format("{:.1f} KB", value / 1e3);
    if (value < 1e9)
        return fmt::format("{:.1f} MB", value / 1e6);
    return fmt::format("{:.2f} GB", value / 1e9);
}

std::string formatDuration(double seconds)
{
    if (!(seconds >= 0) || !std::isfinite(seconds) || seconds > 1e8)
        return "?";
    const auto total = static_cast<std::uint64_t>(std::llround(seconds));
    const std::uint64_t hours = total / 3600;
    const std::uint64_t minutes = total / 60 % 60;
    const std::uint64_t secs = total % 60;
    if (hours > 0)
        return fmt::format("{}:{:02}:{:02}", hours, minutes, secs);
    return fmt::format("{}:{:02}", minutes, secs);
}

ProgressReporter::ProgressReporter(std::ostream& out, ProgressOptions options)
    : ProgressReporter(out, std::move(options), Clock::now())
{
}

ProgressReporter::ProgressReporter(std::ostream& out, ProgressOptions options,
                                   Clock::time_point start)
    : out_(out)
    , options_(std::move(options))
    , start_(start)
    , last_(start)
{
}

std::string ProgressReporter::describe(const ProgressSample& sample, double elapsed) const
{
    const double rate = elapsed > 0 ? static_cast<double>(sample.items) / elapsed : 0.0;
    const bool known = sample.bytesTotal > 0;
    const std::uint64_t done =
        known ? std::min(sample.bytesDone, sample.bytesTotal) : sample.bytesDone;
    const double fraction =
        known ? static_cast<double>(done) / static_cast<double>(sample.bytesTotal) : 0.0;
    double eta = -1.0;
    if (known && done > 0 && elapsed > 0)
        eta = static_cast<double>(sample.bytesTotal - done) / (static_cast<double>(done) / elapsed);
    const std::string amount =
        known ? formatBytes(done) + " of " + formatBytes(sample.bytesTotal) : formatBytes(done);
    const std::string speed = fmt::format("{:.0f} {}/s", rate, options_.itemName);
    if (options_.terminal) {
        std::string bar;
        if (known) {
            const auto filled = static_cast<std::size_t>(fraction * kBarWidth);
            bar = "[" + std::string(filled, '#') + std::string(kBarWidth - filled, '.') + "] "
                  + fmt::format("{:3.0f}% ", fraction * 100.0);
        }
        return bar + amount + "  " + speed + (known ? "  ETA " + formatDuration(eta) : "");
    }
    return options_.label + ": " + (known ? fmt::format("{:.0f}% ", fraction * 100.0) : "") + amount
           + ", " + fmt::format("{} {}", sample.items, options_.itemName) + ", " + speed
           + (known ? ", " + formatDuration(eta) + " left" : "");
}

void ProgressReporter::show(const ProgressSample& sample, Clock::time_point now, bool final)
{
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    std::string line = describe(sample, elapsed);
    last_ = now;
    if (options_.terminal) {
        // Pad over what the longer previous line left on screen.
        const std::size_t width = line.size();
        if (width < lastWidth_)
            line.append(lastWidth_ - width, ' ');
        lastWidth_ = width;
        out_ << '\r' << line;
        if (final)
            out_ << '\n';
    } else {
        out_ << line << '\n';
    }
    out_.flush();
}

void ProgressReporter::update(const ProgressSample& sample)
{
    update(sample, Clock::now());
}

void ProgressReporter::update(const ProgressSample& sample, Clock::time_point now)
{
    if (finished_)
        return;
    const auto interval = options_.terminal ? options_.redrawInterval : options_.lineInterval;
    if (now - last_ < interval)
        return;
    show(sample, now, false);
}

void ProgressReporter::finish(const ProgressSample& sample)
{
    finish(sample, Clock::now());
}

void ProgressReporter::finish(const ProgressSample& sample, Clock::time_point now)
{
    if (finished_)
        return;
    finished_ = true;
    show(sample, now, true);
}

void ProgressReporter::abandon()
{
    if (finished_)
        return;
    finished_ = true;
    if (options_.terminal && lastWidth_ > 0) {
        out_ << '\n';
        out_.flush();
    }
}

}  // namespace sealtrain
