// The progress display: redrawn in place at most ten times a second on a terminal, plain lines
// every few seconds elsewhere, with bytes done of the total, items per second and time left.
#include "sealtrain/base/progress.h"

#include <QtTest/QtTest>

#include <sstream>

using namespace sealtrain;
using namespace std::chrono_literals;

class TestProgress final : public QObject {
    Q_OBJECT

private slots:
    void units()
    {
        QCOMPARE(formatBytes(0), std::string("0 B"));
        QCOMPARE(formatBytes(999), std::string("999 B"));
        QCOMPARE(formatBytes(1500), std::string("1.5 KB"));
        QCOMPARE(formatBytes(12'345'678), std::string("12.3 MB"));
        QCOMPARE(formatBytes(2'000'000'000), std::string("2.00 GB"));
        QCOMPARE(formatDuration(7), std::string("0:07"));
        QCOMPARE(formatDuration(3723), std::string("1:02:03"));
        QCOMPARE(formatDuration(-1), std::string("?"));
    }

    void terminalRedrawsInPlaceAtMostTenTimesASecond()
    {
        std::ostringstream out;
        const auto start = ProgressReporter::Clock::time_point{};
        ProgressReporter progress(out, {"import", "records", true, 100ms, 5000ms}, start);
        int shown = 0;
        // 1000 updates over one second: about ten are drawn.
        for (int i = 1; i <= 1000; ++i)
            progress.update({std::uint64_t(i) * 1000, 2'000'000, std::uint64_t(i)},
                            start + std::chrono::milliseconds(i));
        const std::string text = out.str();
        for (const char c : text)
            shown += c == '\r' ? 1 : 0;
        QVERIFY2(shown >= 9 && shown <= 10, std::to_string(shown).c_str());
        QVERIFY(text.find('\n') == std::string::npos);
        progress.finish({2'000'000, 2'000'000, 2000}, start + 2s);
        const std::string last = out.str().substr(out.str().rfind('\r') + 1);
        QCOMPARE(last.back(), '\n');
        QVERIFY2(last.find("[########################] 100% 2.0 MB of 2.0 MB  1000 records/s") == 0,
                 last.c_str());
        // A second finish draws nothing, nor does abandon after it.
        const auto size = out.str().size();
        progress.finish({2'000'000, 2'000'000, 2000}, start + 3s);
        progress.abandon();
        QCOMPARE(out.str().size(), size);
    }

    void abandonEndsAnOpenTerminalLine()
    {
        std::ostringstream out;
        const auto start = ProgressReporter::Clock::time_point{};
        ProgressReporter progress(out, {"import", "records", true, 100ms, 5000ms}, start);
        progress.update({500, 1000, 5}, start + 1s);
        progress.abandon();
        const std::string text = out.str();
        QCOMPARE(text.back(), '\n');
        progress.update({900, 1000, 9}, start + 2s);
        QCOMPARE(out.str(), text);
        // Plain lines are always whole: nothing to end.
        std::ostringstream plain;
        ProgressReporter lines(plain, {"import", "records", false, 100ms, 5000ms}, start);
        lines.abandon();
        QVERIFY(plain.str().empty());
    }

    void halfwayShowsRateAndTimeLeft()
    {
        std::ostringstream out;
        ProgressReporter progress(out, {"import", "records", true, 100ms, 5000ms});
        // Half of 100 MB in 10 s: 10 s left; 5000 records in 10 s: 500/s.
        const std::string line = progress.describe({50'000'000, 100'000'000, 5000}, 10.0);
        QCOMPARE(line,
                 std::string("[############............]  50% 50.0 MB of 100.0 MB  500 records/s  "
                             "ETA 0:10"));
    }

    void plainLinesEveryFewSeconds()
    {
        std::ostringstream out;
        const auto start = ProgressReporter::Clock::time_point{};
        ProgressReporter progress(out, {"import", "records", false, 100ms, 5000ms}, start);
        for (int s = 1; s <= 20; ++s)
            progress.update({std::uint64_t(s) * 5'000'000, 100'000'000, std::uint64_t(s) * 100},
                            start + std::chrono::seconds(s));
        progress.finish({100'000'000, 100'000'000, 2000}, start + 20s);
        const std::string text = out.str();
        QVERIFY(text.find('\r') == std::string::npos);
        QCOMPARE(std::count(text.begin(), text.end(), '\n'), 5);  // at 5, 10, 15, 20 s and done
        QVERIFY2(
            text.find("import: 25% 25.0 MB of 100.0 MB, 500 records, 100 records/s, 0:15 left\n")
                == 0,
            text.c_str());
    }

    void unknownTotal()
    {
        std::ostringstream out;
        ProgressReporter progress(out, {"read", "batches", false, 100ms, 5000ms});
        QCOMPARE(progress.describe({1500, 0, 30}, 3.0),
                 std::string("read: 1.5 KB, 30 batches, 10 batches/s"));
    }
};

QTEST_APPLESS_MAIN(TestProgress)
#include "test_base_progress.moc"
