// A progress display for long passes over data (dataset import now; any pass the trainer makes
// over a corpus later): on a terminal, one line redrawn in place with '\r' at most ten times a
// second (a bar, bytes done of the total, items per second, the time left); elsewhere (a pipe,
// a log file, CI) a plain line every few seconds, so that logs stay readable. No Qt, no I/O but
// the stream it is given.
#pragma once

#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>

namespace sealtrain {

struct ProgressSample {
    std::uint64_t bytesDone = 0;
    std::uint64_t bytesTotal = 0;  // 0: unknown (no percentage, bar or time left)
    std::uint64_t items = 0;       // records, batches, ... as named by ProgressOptions::itemName
};

struct ProgressOptions {
    std::string label = "progress";  // first word of every plain line, e.g. "import"
    std::string itemName = "records";
    bool terminal = false;                          // redraw one line in place; else plain lines
    std::chrono::milliseconds redrawInterval{100};  // on a terminal
    std::chrono::milliseconds lineInterval{5000};   // plain lines
};

class ProgressReporter final {
public:
    using Clock = std::chrono::steady_clock;

    ProgressReporter(std::ostream& out, ProgressOptions options);
    ProgressReporter(std::ostream& out, ProgressOptions options, Clock::time_point start);

    // Shows `sample` when the interval since the last display has passed; cheap otherwise.
    void update(const ProgressSample& sample);
    void update(const ProgressSample& sample, Clock::time_point now);
    // Shows the final state once (and ends the terminal line); later calls do nothing.
    void finish(const ProgressSample& sample);
    void finish(const ProgressSample& sample, Clock::time_point now);
    // Stops without a final display (the pass failed): ends a terminal line left open, so that
    // what is printed next starts on a line of its own.
    void abandon();

    // The text of one display after `elapsed` seconds, without '\r' or newline (for tests).
    [[nodiscard]] std::string describe(const ProgressSample& sample, double elapsed) const;

private:
    void show(const ProgressSample& sample, Clock::time_point now, bool final);

    std::ostream& out_;
    ProgressOptions options_;
    Clock::time_point start_;
    Clock::time_point last_;
    bool finished_ = false;
    std::size_t lastWidth_ = 0;
};

// "0 B", "512 B", "1.5 KB", "12.3 MB", "2.00 GB" (decimal units, as disks and networks count).
[[nodiscard]] std::string formatBytes(std::uint64_t bytes);
// "0:07", "1:02:03"; "?" for a negative or unknown duration.
[[nodiscard]] std::string formatDuration(double seconds);

}  // namespace sealtrain
